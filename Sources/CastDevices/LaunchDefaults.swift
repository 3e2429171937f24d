import CastProtocol
import CastdAPI

/// How a client asks for a session: which app, join or launch, and the launch options.
public struct SessionRequest: Sendable {
    public var appID: String
    public var mode: Castd_V1_StartMode
    public var launch: CastdLaunchOptions

    public init(appID: String = "", mode: Castd_V1_StartMode = .joinOrLaunch, launch: CastdLaunchOptions = .init()) {
        self.appID = appID
        self.mode = mode
        self.launch = launch
    }
}

/// What castd launches when a client does not say (castd.toml's `[launch]`, or castd's
/// `--launch-*` flags): the receiver app, its launch options, and whether a running instance is
/// joined or launched again.
public struct LaunchDefaults: Sendable, Equatable {
    /// The app a session without an app id starts or joins, and the one a LOAD starts when the
    /// session has no media player. Nil: a session without an app id joins whatever app runs
    /// (else launches the Default Media Receiver), and a LOAD starts the Default Media Receiver.
    public var appID: String?
    /// Launch options for those sessions; a client's own options win field by field.
    public var options: CastdLaunchOptions
    /// Launch the default app again when it already runs (the SDK's relaunch-if-running policy),
    /// instead of joining it.
    public var relaunch: Bool
    /// List only the devices that can run the default app (the SDK's discovery criterion), unless
    /// a client asks otherwise, and count only them as available in castd's cast state.
    public var filterDevices: Bool

    public init(
        appID: String? = nil, options: CastdLaunchOptions = .init(), relaunch: Bool = false, filterDevices: Bool = false
    ) {
        self.appID = appID
        self.options = options
        self.relaunch = relaunch
        self.filterDevices = filterDevices
    }

    /// The app devices must be able to run to be listed, or nil when castd lists every device.
    public var deviceCriterion: String? { filterDevices ? appID : nil }

    /// `request` with the defaults filled in: the default app for a request that names none,
    /// with the relaunch policy, and the default language and Android TV compatibility where the
    /// request leaves them out. Credentials are never defaulted: they are a user's, per call.
    public func applied(to request: SessionRequest) -> SessionRequest {
        var request = request
        if request.appID.isEmpty, let appID {
            request.appID = appID
            if request.mode == .joinOrLaunch, relaunch { request.mode = .launch }
        }
        if request.launch.language.isEmpty { request.launch.language = options.language }
        if options.androidTv { request.launch.androidTv = true }
        return request
    }

    /// What a LOAD starts when the session has no media player.
    var mediaSession: SessionRequest {
        applied(to: SessionRequest(appID: appID ?? CastAppID.defaultMediaReceiver))
    }
}
