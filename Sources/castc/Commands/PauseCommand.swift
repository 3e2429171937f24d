import ArgumentParser
import CastClient

struct PauseCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause playback.",
        discussion: """
            Prints the player's state afterwards.

            Examples:
              castc pause
              castc pause --device kitchen
            """
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let status = try await options.withClient { client in
            try await client.pause(device: options.deviceSelector)
        }
        try options.print(status) { MediaSummary.line(status, at: .now) }
    }
}
