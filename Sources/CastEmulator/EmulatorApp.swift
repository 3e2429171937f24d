import CastProtocol

/// An app an emulated device can run, as it appears in RECEIVER_STATUS `applications[]`.
///
/// An app that declares the media namespace gets the emulator's media player (LOAD, PLAY, PAUSE,
/// SEEK, queues, ad breaks, …) on its transport id. An app that ``echoes`` sends every string
/// message on its own (non-`com.google.cast`) namespaces back to its sender. Messages on other
/// namespaces are logged and otherwise ignored, like a real receiver does.
public struct EmulatorApp: Sendable, Hashable {
    /// `appType` in RECEIVER_STATUS: a Web Receiver, or an Android TV app (Cast Connect).
    public struct AppType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let web = AppType(rawValue: "WEB")
        public static let androidTV = AppType(rawValue: "ANDROID_TV")
    }

    public var appID: String
    public var displayName: String
    public var namespaces: [String]
    public var isIdleScreen: Bool
    public var iconURL: String
    /// `statusText` while the app runs; real apps often repeat their name here.
    public var statusText: String
    /// An Android TV app launches only for senders whose LAUNCH lists `ANDROID_TV` in
    /// `supportedAppTypes`; a Web Receiver for senders that list `WEB` (or list nothing).
    public var appType: AppType
    /// Whether the app answers every string message on its custom namespaces with the same
    /// payload (see ``customNamespaces``).
    public var echoes: Bool

    public init(
        appID: String, displayName: String, namespaces: [String], isIdleScreen: Bool = false,
        iconURL: String = "", statusText: String? = nil, appType: AppType = .web, echoes: Bool = false
    ) {
        self.appID = appID
        self.displayName = displayName
        self.namespaces = namespaces
        self.isIdleScreen = isIdleScreen
        self.iconURL = iconURL
        self.statusText = statusText ?? (isIdleScreen ? "" : displayName)
        self.appType = appType
        self.echoes = echoes
    }

    /// Whether the app plays media on `urn:x-cast:com.google.cast.media`.
    public var hasMediaPlayer: Bool { namespaces.contains(CastNamespace.media) }

    /// The app's own namespaces: those it declares outside `urn:x-cast:com.google.cast.`.
    public var customNamespaces: [String] {
        namespaces.filter { !$0.hasPrefix(Self.platformNamespacePrefix) }
    }

    /// Whether a string message on `namespace` is echoed back by this app.
    func echoes(on namespace: String) -> Bool {
        echoes && !namespace.hasPrefix(Self.platformNamespacePrefix) && namespaces.contains(namespace)
    }

    static let platformNamespacePrefix = "urn:x-cast:com.google.cast."

    static let debugOverlay = "urn:x-cast:com.google.cast.debugoverlay"
    static let cac = "urn:x-cast:com.google.cast.cac"
    static let remoteControl = "urn:x-cast:com.google.cast.remotecontrol"

    /// The Backdrop idle screen (what a video Chromecast shows when nothing is cast).
    public static let backdrop = EmulatorApp(
        appID: CastAppID.backdrop, displayName: "Backdrop",
        namespaces: [debugOverlay, cac, "urn:x-cast:com.google.cast.sse", remoteControl],
        isIdleScreen: true
    )

    /// The Default Media Receiver.
    public static let defaultMediaReceiver = EmulatorApp(
        appID: CastAppID.defaultMediaReceiver, displayName: "Default Media Receiver",
        namespaces: [debugOverlay, cac, remoteControl, CastNamespace.media]
    )

    public static let youTube = EmulatorApp(
        appID: "233637DE", displayName: "YouTube",
        namespaces: [debugOverlay, cac, CastNamespace.media, "urn:x-cast:com.google.youtube.mdx"]
    )

    public static let netflix = EmulatorApp(
        appID: "CA5E8412", displayName: "Netflix",
        namespaces: [
            debugOverlay, cac, "urn:x-cast:com.google.cast.broadcast", CastNamespace.media,
            "urn:x-cast:mdx-netflix-com:service:target:2",
        ]
    )

    public static let spotify = EmulatorApp(
        appID: "CC32E753", displayName: "Spotify",
        namespaces: [debugOverlay, cac, CastNamespace.media, "urn:x-cast:com.spotify.chromecast.secure.v1"]
    )

    /// An Android TV app (Cast Connect): `appType` ANDROID_TV, with the media player. It
    /// launches only for senders that list ANDROID_TV in `supportedAppTypes`.
    public static let androidTV = EmulatorApp(
        appID: "A7CC5A5E", displayName: "Emulated Android TV app",
        namespaces: [cac, CastNamespace.media], appType: .androidTV
    )

    /// The namespace of the ``echo`` app.
    public static let echoNamespace = "urn:x-cast:com.castd.echo"

    /// An app that sends every string message on `urn:x-cast:com.castd.echo` back to its sender
    /// (and to every sender connected to it when the payload is JSON with `"broadcast": true`).
    /// It has no media player.
    public static let echo = EmulatorApp(
        appID: "E2C0EC40", displayName: "Echo", namespaces: [echoNamespace], echoes: true
    )

    /// Backdrop (running at start), the Default Media Receiver, YouTube, Netflix, Spotify, the
    /// Android TV app and the echo app.
    public static let builtIn: [EmulatorApp] = [
        backdrop, defaultMediaReceiver, youTube, netflix, spotify, androidTV, echo,
    ]
}
