import ArgumentParser
import CastClient
import Foundation

struct LoadCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Play media from a URL on a device.",
        usage: GlobalOptions.usage(
            "load",
            "<url> [--content-type <type>] [--title <title>]",
            "[--stream-type <type>] [--start <position>] [--no-autoplay]"
        ),
        discussion: """
            The device fetches the URL itself, so it must be reachable from the device (a local \
            file is not). Without a session, castd starts the Default Media Receiver first. The \
            content type is guessed from the URL's extension (.mp4, .m3u8, .mp3, …) unless given.

            Examples:
              castc load https://example.com/movie.mp4
              castc load https://example.com/live.m3u8 --stream-type live --title "News"
              castc load http://192.168.1.5:8000/song.flac --start 1:30 --no-autoplay
            """
    )

    enum StreamType: String, ExpressibleByArgument, CaseIterable {
        case buffered, live, none

        var castd: CastdStreamType {
            switch self {
            case .buffered: return .buffered
            case .live: return .live
            case .none: return .none
            }
        }
    }

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("The media's URL (http, https or another scheme the device knows).", valueName: "url"))
    var url: String

    @Option(
        help: ArgumentHelp(
            "The MIME type, e.g. video/mp4. Default: guessed from the URL, else castd's choice.", valueName: "type"))
    var contentType: String?

    @Option(help: "A title to show on the device and in `castc status`.")
    var title: String?

    @Option(help: ArgumentHelp("buffered (a file, the default), live (a live stream) or none.", valueName: "type"))
    var streamType: StreamType?

    @Option(
        help: ArgumentHelp("Where to start: seconds, m:ss or h:mm:ss.", valueName: "position"),
        transform: { text in
            guard let seconds = PlaybackTime.parse(text) else {
                throw ValidationError("'\(text)' is not a position: give seconds (90), m:ss (1:30) or h:mm:ss")
            }
            return seconds
        }
    )
    var start: Double?

    @Flag(inversion: .prefixedNo, help: "Start playing once loaded.")
    var autoplay = true

    func validate() throws {
        try MediaURL.validate(url)
        if let contentType { try MediaURL.validateContentType(contentType) }
    }

    /// The media to send.
    var media: CastdMediaInformation {
        CastdMediaInformation(
            url: url,
            contentType: contentType ?? MediaURL.guessContentType(url) ?? "",
            streamType: streamType?.castd ?? .unspecified,
            title: title
        )
    }

    func run() async throws {
        let status = try await options.withClient { client in
            try await client.load(media, device: options.deviceSelector, autoplay: autoplay, startTime: start ?? 0)
        }
        try options.print(status) { MediaSummary.line(status, at: .now) }
    }
}
