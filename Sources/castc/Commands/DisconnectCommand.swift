import ArgumentParser
import CastClient

struct DisconnectCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "disconnect",
        abstract: "Leave the session on a device.",
        usage: GlobalOptions.usage("disconnect", "[--stop-app]"),
        discussion: """
            The app keeps running (and playing) on the device unless --stop-app is given.

            Examples:
              castc disconnect
              castc disconnect --device kitchen --stop-app
            """
    )

    @OptionGroup var options: GlobalOptions

    @Flag(help: "Also stop the app on the device.")
    var stopApp = false

    func run() async throws {
        let session = try await options.withClient { client in
            try await client.endSession(device: options.deviceSelector, stopApp: stopApp)
        }
        try options.print(session) { Self.describe(session, stoppedApp: stopApp) }
    }

    static func describe(_ session: CastdSession, stoppedApp: Bool) -> String {
        let device = MediaSummary.device(session)
        let app = session.displayName.isEmpty ? session.appID : session.displayName
        // castd's reason ("left; the app keeps running on the device") says the same again.
        if stoppedApp { return "Stopped \(app) on \(device)" }
        return "Left the session on \(device); \(app) keeps running"
    }
}
