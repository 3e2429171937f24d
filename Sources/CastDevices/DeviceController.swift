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

/// Owns everything castd holds for one device: its link (opened on first use), its receiver
/// status, the one session castd keeps on it, that session's media status and custom channels.
/// Every client's requests for the device come through here, and every change goes out through
/// the store (state) or the channel router (app messages).
///
/// Each namespace's messages and state have a controller of their own, which the actor owns
/// and its isolation guards: `ReceiverController` (RECEIVER_STATUS, app availability),
/// `MediaController` (MEDIA_STATUS, the one source of what the device plays, and the checks of
/// requests about it), `MultizoneController` (a group's members); so does the link
/// (`LinkKeeper`: whether castd has one, and when it tries again). The actor does the sending,
/// the publishing and what spans them, a file per concern: `+Link` (connect, reconnect,
/// rejoin), `+Receiver` (the link's messages, in order, to their controllers; the session a
/// RECEIVER_STATUS implies), `+MediaStatus`, `+Multizone`, `+Authentication`; and what clients
/// ask: `+Sessions`, `+Media`, `+Channels`.
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
    let sessionStore: SessionStore?
    /// The key each device id first authenticated with; nil: no pinning.
    let keyPins: DeviceKeyPins?
    /// What a session without an app id, or a LOAD without a media session, starts.
    let launchDefaults: LaunchDefaults
    /// Told when castd's session vanished from the device while its media was playing: the
    /// registry looks for it on the other devices (stream transfer).
    let sessionVanished: @Sendable (DeviceController, CastdSession, CastMediaInformation) -> Void
    /// Told when castd stopped holding anything on the device (a link it wants, a session to
    /// rejoin): the registry forgets a device that nothing announces any more.
    let becameIdle: @Sendable (DeviceController) -> Void
    /// Told each time the link comes up: the registry reads a device given by address anew
    /// (its eureka_info), so that a device renamed meanwhile is seen.
    let linkCameUp: @Sendable (DeviceController) -> Void
    /// The device's lifecycle (CastDevice); `sessionLogger` and `mediaLogger` log what clients
    /// ask of its sessions (CastSession) and media (CastMedia), with the same metadata.
    let logger: Logger
    let sessionLogger: Logger
    let mediaLogger: Logger
    /// Messages the device (or an app on it) sent that castd cannot read: a few logged a minute.
    let badMessageLog = LogThrottle()

    /// The link: whether castd has one, and when it tries again.
    var keeper: LinkKeeper<CastLink>
    /// How long a suspended session waits for its device before castd gives it up.
    let resumeWindow: Duration
    /// The receiver namespace: what the device last said of itself, and of the apps it can run.
    var receiverState: ReceiverController
    var session: CastdSession?
    /// A session whose link dropped: rejoined when the link is back if its app still runs.
    var suspended: CastdSession?
    var suspendedAt: ContinuousClock.Instant?
    var endingReason: String?
    /// The media namespace: its requests, and what the device plays, the one source of it.
    let media: MediaController
    /// Requests a newer one of the same kind supersedes (seek, volume, …), for every namespace.
    let superseding = SupersedingRequests()
    /// Session changes (start, end) run one at a time, in arrival order, so that two clients
    /// starting a session at once share one launch.
    var sessionChangeBusy = false
    var sessionChangeQueue: [CheckedContinuation<Void, Never>] = []

    init(
        id: String, name: String, endpoint: DeviceEndpoint, store: CastdStateStore,
        linkConfiguration: CastLinkConfiguration,
        backoff: ReconnectBackoff = .init(), resumeWindow: Duration = .seconds(300), sessionStore: SessionStore? = nil,
        keyPins: DeviceKeyPins? = nil, launchDefaults: LaunchDefaults = .init(),
        sessionVanished: @escaping @Sendable (DeviceController, CastdSession, CastMediaInformation) -> Void = {
            _, _, _ in
        },
        becameIdle: @escaping @Sendable (DeviceController) -> Void = { _ in },
        linkCameUp: @escaping @Sendable (DeviceController) -> Void = { _ in },
        logger: Logger, spawn: @escaping @Sendable (@escaping @Sendable () async -> Void) -> Void
    ) {
        self.id = id
        self.info = Locked((name, endpoint))
        self.store = store
        self.linkConfiguration = linkConfiguration
        self.keeper = LinkKeeper(backoff: backoff)
        self.resumeWindow = resumeWindow
        self.sessionStore = sessionStore
        self.keyPins = keyPins
        self.launchDefaults = launchDefaults
        self.sessionVanished = sessionVanished
        self.becameIdle = becameIdle
        self.linkCameUp = linkCameUp
        var logger = logger
        logger[metadataKey: "device.id"] = "\(id)"
        self.logger = logger.subsystem("CastDevice")
        self.sessionLogger = logger.subsystem("CastSession")
        self.mediaLogger = logger.subsystem("CastMedia")
        self.media = MediaController(
            deviceID: id, store: store, superseding: superseding, logger: logger.subsystem("CastMedia"))
        self.receiverState = ReceiverController(logger: self.logger, badMessageLog: badMessageLog)
        self.spawn = spawn
    }

    nonisolated func update(name: String, endpoint: DeviceEndpoint) {
        info.withLock { $0 = (name, endpoint) }
    }

    // MARK: requests

    /// A request to the platform receiver.
    func receiverRequest(_ link: CastLink, _ make: @Sendable (Int64) -> JSONValue) async throws -> CastReply {
        try await link.requestReply(namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID, make)
    }

    // MARK: errors

    static func describe(_ error: any Error) -> String {
        if let error = error as? CastLinkError { return error.message }
        if let error = error as? CastdError { return error.message }
        return "\(error)"
    }

    /// Maps device-side failures to castd.v1 status codes, naming the device.
    static func map(_ error: any Error, device: String) -> CastdError {
        switch error {
        case let error as CastdError:
            return error
        case let error as CastLinkError:
            switch error.code {
            case .connectFailed, .closed:
                return CastdError(.unavailable, "\(device): \(error.message)")
            case .authenticationFailed:
                return CastdError(.failedPrecondition, "\(device): \(error.message)")
            case .timedOut:
                return CastdError(.deadlineExceeded, "\(device): \(error.message)")
            case .invalidRequest:
                return CastdError(.invalidArgument, error.message)
            case .deviceError:
                let deviceError = error.deviceError
                let code: CastdCode
                switch deviceError {
                case let e? where e.isInvalidRequest: code = .invalidArgument
                case let e? where e.isLoadCancelled: code = .aborted
                case let e? where e.isUnknownApp: code = .notFound
                default: code = .failedPrecondition
                }
                var details = Castd_V1_DeviceError()
                details.type = deviceError?.type ?? ""
                details.reason = deviceError?.reason ?? ""
                details.detail = deviceError?.detail ?? ""
                return CastdError(
                    code, "\(device) answered \(deviceError.map { "\($0)" } ?? "an error")",
                    reason: CastdError.Reason.deviceError, deviceError: details)
            }
        case is CancellationError:
            return CastdError(.cancelled, "cancelled")
        default:
            return CastdError(.internal, "\(device): \(error)")
        }
    }
}
