import ArgumentParser
import CastArtwork
import CastClient

struct ArtworkCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "artwork",
        abstract: "Fetch the picture of what plays (cover art, a poster) and print its file's path.",
        usage: GlobalOptions.usage("artwork", "[--size <WxH>] [--background] [--output <file>]"),
        discussion: """
            The picture is one of the images in the media's metadata (what the sender gave, such \
            as `castc load --image URL@WxH`). Of several, castc picks as the Cast SDK does: the \
            smallest at least as large as --size in both dimensions, else the largest. It is \
            fetched once into the artwork cache that castd's clients share, \
            $XDG_CACHE_HOME/castd/artwork (else ~/.cache/castd/artwork; 64 MiB, the least \
            recently used pictures go first), so asking again is quick and needs no network. \
            Only images are taken (PNG, JPEG, GIF or WebP; at most 10 MiB, within 10 s, after at \
            most 5 redirects), whatever the server says they are.

            --size is 512x512 unless given (a thumbnail); with --background, 1920x1080 (a \
            picture to fill a screen). --output FILE writes the image to FILE, replacing it in \
            one step (never half-written), and prints nothing; --output - writes it to standard \
            output. --json prints the file's path, format and byte count, and the image's URL.

            Exit status (besides castd's answers, as for every command: 14 when castd is not \
            running):
              9  nothing plays, or the media has no images
             69  the image could not be fetched: its server is unreachable or slow,
                 answers with an error, or sends what is not an image, or too much
             73  the cache or the --output file cannot be written

            In a status bar: waybar's image module shows the file the command prints,
              "image#cast": {
                "exec": "castc artwork --size 64x64", "size": 32, "interval": 5
              }
            and a notification can show it:
              notify-send -i "$(castc artwork)" "Now playing"

            Examples:
              castc artwork
              castc artwork --device kitchen --size 300x300
              castc artwork --background --output ~/.cache/cast-wallpaper.jpg
              castc artwork --output - | display -
            """
    )

    static let thumbnailSize = ArtworkSize(width: 512, height: 512)
    static let backgroundSize = ArtworkSize(width: 1920, height: 1080)

    @OptionGroup var options: GlobalOptions

    @Option(
        help: ArgumentHelp(
            "The size the picture will be shown at, in pixels (default 512x512; with --background, 1920x1080).",
            valueName: "WxH"),
        transform: ArtworkSize.parse)
    var size: ArtworkSize?

    @Flag(help: "A background picture rather than a thumbnail (the default size becomes 1920x1080).")
    var background = false

    @Option(help: ArgumentHelp("Write the image to this file (- for standard output) instead.", valueName: "file"))
    var output: String?

    func validate() throws {
        if let output, output.isEmpty { throw ValidationError("--output needs a file, or - for standard output") }
    }

    var hint: ArtworkHint {
        let size = size ?? (background ? Self.backgroundSize : Self.thumbnailSize)
        return ArtworkHint(kind: background ? .background : .thumbnail, width: size.width, height: size.height)
    }

    func run() async throws {
        if output == "-" { try ArtworkOutput.checkStandardOutput() }
        let (device, media) = try await playingMedia()
        guard let image = ArtworkPicker.pick(media.media.metadata.images, hint: hint) else {
            throw CastdError(.failedPrecondition, "what plays on \(device.friendlyName) has no images")
        }
        let file: ArtworkFile
        do {
            file = try await ArtworkCache().file(for: image.url)
        } catch {
            throw Self.failure(error)
        }
        switch output {
        case "-"?:
            try ArtworkOutput.writeStandardOutput(from: file)
        case let path?:
            try ArtworkOutput.save(file, to: path)
        case nil where options.json:
            Terminal.line(ArtworkOutput.json(file, url: image.url))
        case nil:
            Terminal.line(file.path)
        }
    }

    /// The device castd picks for --device (its rule, `GetDevice`), and the media that plays
    /// there; FAILED_PRECONDITION if none does.
    func playingMedia() async throws -> (CastdDevice, CastdMediaStatus) {
        var request = Castd_V1_GetDeviceRequest()
        request.device = options.deviceSelector
        let device = try await options.send(CastcCall(CastdMethods.getDevice, request))
        let status = try await options.send(CastcCall(CastdMethods.getStatus, Castd_V1_GetStatusRequest()))
        guard let media = status.media.first(where: { $0.deviceID == device.id }), media.hasMedia,
            media.playerState != .idle
        else {
            throw CastdError(
                .failedPrecondition,
                "nothing plays on \(device.friendlyName); load something first (castc load URL --image URL)")
        }
        return (device, media)
    }

    /// castc's line and exit code for an artwork that could not be had: 73 when the cache
    /// cannot be written, else 69 (the image's server).
    static func failure(_ error: ArtworkError) -> CastcExit {
        if case .cache = error { return CastcExit(line: "castc: artwork: \(error)\n", code: 73) }
        return CastcExit(line: "castc: artwork: \(error)\n", code: 69)
    }
}
