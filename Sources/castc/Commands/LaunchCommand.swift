import ArgumentParser
import CastClient

struct LaunchCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "launch",
        abstract: "Start a receiver app on a device, with launch options.",
        usage: GlobalOptions.usage(
            "launch",
            "<app-id> [--relaunch | --join-only] [--android-tv]",
            "[--language <lang>] [--credentials <token>]",
            "[--credentials-type <type>]"
        ),
        discussion: """
            Joins the app if it already runs on the device, else launches it, and prints the \
            session (its state, and why if it failed or ended). --relaunch launches the app \
            again even if it runs; --join-only never launches (NOT_FOUND, exit 5, if the app \
            does not run). --android-tv also accepts the app's Android TV receiver (Cast \
            Connect). `castc apps` tells whether a device can run an app.

            Examples:
              castc launch CC1AD845
              castc launch 233637DE --device "Living Room TV" --language en-US
              castc launch ABCD1234 --android-tv --credentials "$TOKEN" \\
                --credentials-type oauth
              castc launch ABCD1234 --relaunch
              castc launch ABCD1234 --join-only
            """
    )

    enum Mode: String, EnumerableFlag {
        case relaunch, joinOnly

        static func help(for value: Mode) -> ArgumentHelp? {
            value == .relaunch
                ? "Launch the app again even if it runs." : "Join the app only if it runs; never launch it."
        }
    }

    @OptionGroup var options: GlobalOptions

    @Argument(
        help: ArgumentHelp("The receiver app's id, e.g. CC1AD845 (the Default Media Receiver).", valueName: "app-id"))
    var appID: String

    @Flag(exclusivity: .exclusive)
    var mode: Mode?

    @OptionGroup var launchOptions: LaunchOptionArguments

    func validate() throws {
        guard !appID.isEmpty, !appID.contains(where: { $0.isWhitespace }) else {
            throw ValidationError("'\(appID)' is not an app id: give one such as CC1AD845")
        }
    }

    func call() -> CastcCall<Castd_V1_StartSessionRequest, CastdSession> {
        var request = Castd_V1_StartSessionRequest()
        request.device = options.deviceSelector
        request.appID = appID
        request.mode =
            switch mode {
            case nil: .joinOrLaunch
            case .relaunch: .launch
            case .joinOnly: .join
            }
        if let launch = launchOptions.launch { request.launch = launch }
        return CastcCall(CastdMethods.startSession, request)
    }

    func run() async throws {
        let session = try await options.send(call())
        try options.print(session) { Self.describe(session) }
    }

    /// `Launched YouTube (233637DE) on Living Room TV`; `Joined …` when the app already ran
    /// (castd joined it, or already held its session); `Could not launch …: why`.
    static func describe(
        _ session: CastdSession, launched: String = "Launched", failed: String = "Could not launch"
    ) -> String {
        let device = MediaSummary.device(session)
        let app = MediaSummary.app(session)
        switch session.state {
        case .startFailed, .resumeFailed, .ended:
            return "\(failed) \(app) on \(device)" + (session.reason.isEmpty ? "" : ": \(session.reason)")
        case .started, .resumed:
            return "\(session.joined ? "Joined" : launched) \(app) on \(device)"
        default:
            return "\(session.joined ? "Joined" : launched) \(app) on \(device) (\(MediaSummary.state(session.state)))"
        }
    }
}

/// The launch options `castc launch` and `castc connect` take.
struct LaunchOptionArguments: ParsableArguments {
    @Flag(help: "Also accept the app's Android TV receiver (Cast Connect).")
    var androidTv = false

    @Option(help: ArgumentHelp("The language for the app, BCP-47 (en-US).", valueName: "lang"))
    var language: String?

    @Option(
        help: ArgumentHelp(
            "Credentials for the app (e.g. an account token), sent when it is launched or joined.",
            valueName: "token"))
    var credentials: String?

    @Option(help: ArgumentHelp("What kind of credentials --credentials are.", valueName: "type"))
    var credentialsType: String?

    func validate() throws {
        if credentialsType != nil, credentials == nil {
            throw ValidationError("--credentials-type goes with --credentials <token>")
        }
        if let credentials, credentials.isEmpty { throw ValidationError("--credentials needs a token") }
        if let language, language.isEmpty { throw ValidationError("--language needs a language tag such as en-US") }
    }

    /// The options given; nil if none was (castd's launch defaults then apply alone).
    var launch: CastdLaunchOptions? {
        var launch = CastdLaunchOptions()
        launch.androidTv = androidTv
        launch.language = language ?? ""
        launch.credentials = credentials ?? ""
        launch.credentialsType = credentialsType ?? ""
        return launch == CastdLaunchOptions() ? nil : launch
    }
}

struct AppsCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Tell which receiver apps a device can run.",
        usage: GlobalOptions.usage("apps", "[<device>] <app-id>..."),
        discussion: """
            Asks the device (GET_APP_AVAILABILITY) about each app id. The device is given with \
            --device, like every command, or as the first argument when it is not an app id \
            (app ids are eight hexadecimal digits); without either, castd picks the device with \
            a session, else the only one. To find the devices that can run an app, use \
            `castc devices --app <app-id>`.

            Examples:
              castc apps --device "Living Room TV" CC1AD845 233637DE
              castc apps "Living Room TV" CC1AD845
              castc apps kitchen CC1AD845 --json | jq '.available'
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(
        help: ArgumentHelp(
            "The device (a name, an id, or host[:port]) unless --device gives it, then the receiver apps' ids.",
            valueName: "app-id"))
    var arguments: [String] = []

    /// The device and the app ids the arguments give: `--device` names the device and every
    /// argument is an app id; else a first argument that is not shaped like an app id is the
    /// device.
    var parsed: (device: String, appIDs: [String]) {
        if let device = options.device { return (device, arguments) }
        if let first = arguments.first, !Self.looksLikeAppID(first) {
            return (first, Array(arguments.dropFirst()))
        }
        return ("", arguments)
    }

    /// Eight hexadecimal digits, as every Cast app id is.
    static func looksLikeAppID(_ text: String) -> Bool {
        text.utf8.count == 8 && text.allSatisfy(\.isHexDigit)
    }

    func validate() throws {
        let (device, appIDs) = parsed
        guard !appIDs.isEmpty else {
            let example = device.isEmpty ? "castc apps CC1AD845" : "castc apps --device \"\(device)\" CC1AD845"
            throw ValidationError("give the app ids to ask about: \(example)")
        }
        if let bad = appIDs.first(where: { $0.isEmpty || $0.contains(where: \.isWhitespace) }) {
            throw ValidationError("'\(bad)' is not an app id: give one such as CC1AD845")
        }
    }

    func call() -> CastcCall<Castd_V1_AppAvailabilityRequest, CastdAppAvailability> {
        var request = Castd_V1_AppAvailabilityRequest()
        (request.device, request.appIds) = parsed
        return CastcCall(CastdMethods.getAppAvailability, request)
    }

    func run() async throws {
        let availability = try await options.send(call())
        try options.print(availability) { Self.render(availability, asked: parsed.appIDs) }
    }

    /// One row per app asked about, in the order asked.
    static func render(_ availability: CastdAppAvailability, asked: [String]) -> String {
        var ids = asked
        for id in availability.available.keys.sorted() where !ids.contains(id) { ids.append(id) }
        let rows = ids.map { id -> [String] in
            switch availability.available[id] {
            case true?: [id, "yes"]
            case false?: [id, "no"]
            case nil: [id, "unknown (the device did not answer for it)"]
            }
        }
        return TextTable.render([["APP", "AVAILABLE"]] + rows)
    }
}
