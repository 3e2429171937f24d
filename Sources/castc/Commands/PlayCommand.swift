import ArgumentParser
import CastClient

struct PlayCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Resume playback.",
        discussion: """
            Prints the player's state afterwards.

            Examples:
              castc play
              castc play --device kitchen
            """
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let status = try await options.withClient { client in
            try await client.play(device: options.deviceSelector)
        }
        try options.print(status) { MediaSummary.line(status, at: .now) }
    }
}
