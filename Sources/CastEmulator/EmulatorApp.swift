import CastProtocol

/// An app an emulated device can run, as it appears in RECEIVER_STATUS `applications[]`.
///
/// An app that declares the media namespace gets the emulator's media player (LOAD, PLAY, PAUSE,
/// SEEK, …) on its transport id. Messages on other namespaces are logged and otherwise ignored.
public struct EmulatorApp: Sendable, Hashable {
    public var appID: String
    public var displayName: String
    public var namespaces: [String]
    public var isIdleScreen: Bool
    public var iconURL: String
    /// `statusText` while the app runs; real apps often repeat their name here.
    public var statusText: String

    public init(
        appID: String, displayName: String, namespaces: [String], isIdleScreen: Bool = false,
        iconURL: String = "", statusText: String? = nil
    ) {
        self.appID = appID
        self.displayName = displayName
        self.namespaces = namespaces
        self.isIdleScreen = isIdleScreen
        self.iconURL = iconURL
        self.statusText = statusText ?? (isIdleScreen ? "" : displayName)
    }

    /// Whether the app plays media on `urn:x-cast:com.google.cast.media`.
    public var hasMediaPlayer: Bool { namespaces.contains(CastNamespace.media) }

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

    /// Backdrop (running at start), the Default Media Receiver, YouTube, Netflix and Spotify.
    public static let builtIn: [EmulatorApp] = [backdrop, defaultMediaReceiver, youTube, netflix, spotify]
}
