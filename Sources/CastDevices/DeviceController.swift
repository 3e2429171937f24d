import CastdSupport
import CastSenderLink
import CastProtocol
import CastdAPI
import Foundation
import Logging

/// Where a device listens.
public struct DeviceEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Owns everything castd holds for one device: its link (opened on first use, kept while castd
/// holds anything there, retried with backoff when it drops), and the controllers of what goes
/// over it. Every client's requests for the device come through here, and every change goes out
/// through the store (state) or the channel router (app messages).
///
/// Each namespace has a controller of its own that sends its requests, awaits their replies and
/// applies them, as it applies what the device broadcasts: `ReceiverController` (the platform
/// receiver: status, launch, stop, volume, app availability), `MediaController` (the remote
/// media client), `MultizoneController` (a group's members); `SessionController` keeps the one
/// session castd holds (start, join, resume, end, transfer). The actor owns them and its
/// isolation guards them: their async methods run on its executor, and it hands them the link.
/// The actor itself keeps the link (`LinkKeeper`; `+Link`), reads the device's messages and
/// hands each to its controller (`+Messages`), and takes clients' requests (`+Sessions`,
/// `+Media`, `+Channels`), mapping failures to castd.v1 errors that name the device.
public actor DeviceController {
    public nonisolated let id: String
    /// Name and address change with discovery, outside the actor.
    let info: Locked<(name: String, endpoint: DeviceEndpoint)>
    var name: String { info.withLock { $0.name } }
    var endpoint: DeviceEndpoint { info.withLock { $0.endpoint } }
    let store: CastdStateStore
    public nonisolated let channels = NamespaceListeners()
    let spawn: @Sendable (@escaping @Sendable () async -> Void) -> Void
    let linkConfiguration: CastLinkConfiguration
    /// Device authentication's outcomes and the key pinned for the device.
    nonisolated let trust: DeviceTrust
    /// What a session without an app id, or a LOAD without a media session, starts.
    let launchDefaults: LaunchDefaults
    /// Told when castd stopped holding anything on the device (a link it wants, a session to
    /// rejoin): the registry forgets a device that nothing announces any more.
    let becameIdle: @Sendable (DeviceController) -> Void
    /// Told each time the link comes up: the registry reads a device given by address anew
    /// (its eureka_info), so that a device renamed meanwhile is seen.
    let linkCameUp: @Sendable (DeviceController) -> Void
    /// The device's lifecycle (CastDevice); `mediaLogger` logs what clients ask of its media
    /// (CastMedia), with the same metadata.
    let logger: Logger
    let mediaLogger: Logger
    /// Messages the device (or an app on it) sent that castd cannot read: a few logged a minute.
    let badMessageLog = LogThrottle()

    /// The link: whether castd has one, and when it tries again.
    var keeper: LinkKeeper<CastLink>
    /// The platform receiver's namespace: requests, and what the device says of itself.
    let receiver: ReceiverController
    /// The media namespace: its requests, and what the device plays, the one source of it.
    let media: MediaController
    /// A group's members.
    let multizone: MultizoneController
    /// The session castd holds on the device, or waits to rejoin.
    let sessions: SessionController
    /// Requests a newer one of the same kind supersedes (seek, volume, …), for every namespace.
    let superseding = SupersedingRequests()

    init(
        id: String, name: String, endpoint: DeviceEndpoint, store: CastdStateStore,
        linkConfiguration: CastLinkConfiguration,
        backoff: ReconnectBackoff = .init(), resumeWindow: Duration = .seconds(300), sessionStore: SessionStore? = nil,
        keyPins: DeviceKeyPins? = nil, launchDefaults: LaunchDefaults = .init(),
        sessionVanished: @escaping @Sendable (String, CastdSession, CastMediaInformation) -> Void = { _, _, _ in },
        becameIdle: @escaping @Sendable (DeviceController) -> Void = { _ in },
        linkCameUp: @escaping @Sendable (DeviceController) -> Void = { _ in },
        logger: Logger, spawn: @escaping @Sendable (@escaping @Sendable () async -> Void) -> Void
    ) {
        self.id = id
        self.info = Locked((name, endpoint))
        self.store = store
        self.linkConfiguration = linkConfiguration
        self.keeper = LinkKeeper(backoff: backoff)
        self.trust = DeviceTrust(deviceID: id, keyPins: keyPins, store: store)
        self.launchDefaults = launchDefaults
        self.becameIdle = becameIdle
        self.linkCameUp = linkCameUp
        var logger = logger
        logger[metadataKey: "device.id"] = "\(id)"
        self.logger = logger.subsystem("CastDevice")
        self.mediaLogger = logger.subsystem("CastMedia")
        self.receiver = ReceiverController(
            deviceID: id, store: store, superseding: superseding, criterion: launchDefaults.deviceCriterion,
            logger: self.logger, badMessageLog: badMessageLog)
        self.media = MediaController(deviceID: id, store: store, superseding: superseding, logger: mediaLogger)
        self.multizone = MultizoneController(deviceID: id, store: store, logger: self.logger)
        self.sessions = SessionController(
            deviceID: id, info: info, receiver: receiver, media: media, store: store, channels: channels,
            sessionStore: sessionStore, resumeWindow: resumeWindow,
            vanished: { session, media in sessionVanished(id, session, media) }, logger: logger.subsystem("CastSession")
        )
        self.spawn = spawn
    }

    nonisolated func update(name: String, endpoint: DeviceEndpoint) {
        info.withLock { $0 = (name, endpoint) }
    }
}
