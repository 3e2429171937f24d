import ArgumentParser
import CastClient

struct ConnectCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract: "Start a session on a device, or join the one there.",
        usage: GlobalOptions.usage(
            "connect", "[<device>] [--app <app-id>] [--android-tv]", "[--language <lang>] [--credentials <token>]",
            "[--credentials-type <type>]"),
        discussion: """
            Joins the app's session if the app already runs on the device, else launches it. \
            Without --app: castd's default app (castd --launch-app, or launch.app_id in \
            castd.toml) if it has one; else the app that runs on the device, or the Default \
            Media Receiver (CC1AD845), which plays what `castc load` sends. `castc load` starts \
            a session by itself; connect first to pick the device or another app.

            --credentials reach the app whether it is launched or joined (Cast Connect sign-in); \
            --android-tv also accepts the app's Android TV receiver.

            Examples:
              castc connect "Living Room TV"
              castc connect 192.168.1.20
              castc connect --device kitchen --app 5C3F0A3C
              castc connect --app ABCD1234 --android-tv --credentials "$TOKEN"
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(
        help: ArgumentHelp("The device (overrides --device): a name, an id, or host[:port].", valueName: "device"))
    var deviceName: String?

    @Option(
        name: .customLong("app"),
        help: ArgumentHelp(
            "The receiver app to start or join. Default: castd's default app, else the one that runs, else the Default Media Receiver.",
            valueName: "app-id"))
    var appID: String?

    @OptionGroup var launchOptions: LaunchOptionArguments

    func validate() throws {
        if let deviceName, deviceName.isEmpty { throw ValidationError("the device name is empty") }
        if let appID, appID.isEmpty { throw ValidationError("--app needs an app id, such as CC1AD845") }
    }

    var selector: String { deviceName ?? options.deviceSelector }

    func run() async throws {
        let session = try await options.withClient { client in
            try await client.startSession(device: selector, appID: appID ?? "", launch: launchOptions.launch)
        }
        try options.print(session) { Self.describe(session) }
    }

    /// `Started Default Media Receiver (CC1AD845) on Living Room TV`, or `Joined …` when it
    /// already ran.
    static func describe(_ session: CastdSession) -> String {
        LaunchCommand.describe(session, launched: "Started", failed: "Could not start")
    }
}
