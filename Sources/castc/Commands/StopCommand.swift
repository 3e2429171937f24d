import ArgumentParser
import CastClient

struct StopCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop playback (the media session ends; the app keeps running).",
        discussion: """
            Prints the player's state afterwards.

            Examples:
              castc stop
              castc stop --device kitchen
            """
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let status = try await options.withClient { client in
            try await client.stop(device: options.deviceSelector)
        }
        try options.print(status) { MediaSummary.line(status, at: .now) }
    }
}
