import ArgumentParser
import CastClient

struct ConnectCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract: "Start a session on a device, or join the one there.",
        usage: GlobalOptions.usage("connect", "[<device>] [--app <app-id>]"),
        discussion: """
            Joins the app's session if the app already runs on the device, else launches it. \
            The default app is the Default Media Receiver (CC1AD845), which plays what \
            `castc load` sends. `castc load` starts a session by itself; connect first to pick \
            the device or another app.

            Examples:
              castc connect "Living Room TV"
              castc connect 192.168.1.20
              castc connect --device kitchen --app 5C3F0A3C
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(
        help: ArgumentHelp("The device (overrides --device): a name, an id, or host[:port].", valueName: "device"))
    var deviceName: String?

    @Option(
        name: .customLong("app"),
        help: ArgumentHelp(
            "The receiver app to start or join. Default: the Default Media Receiver.", valueName: "app-id"))
    var appID: String?

    func validate() throws {
        if let deviceName, deviceName.isEmpty { throw ValidationError("the device name is empty") }
        if let appID, appID.isEmpty { throw ValidationError("--app needs an app id, such as CC1AD845") }
    }

    var selector: String { deviceName ?? options.deviceSelector }

    func run() async throws {
        let session = try await options.withClient { client in
            try await client.startSession(device: selector, appID: appID ?? "")
        }
        try options.print(session) { Self.describe(session) }
    }

    /// `Connected to Living Room TV: Default Media Receiver (CC1AD845), started`
    static func describe(_ session: CastdSession) -> String {
        let device = MediaSummary.device(session)
        return "\(session.joined ? "Joined" : "Connected to") \(device): \(MediaSummary.session(session))"
    }
}
