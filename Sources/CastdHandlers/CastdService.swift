import CastDevices
import CastdServer
import CastdAPI
import CastdLogging
import Foundation
import SwiftProtobuf

/// What `GetStatus` reports about the daemon itself.
public struct DaemonFacts: Sendable {
    public var version: String
    public var startedAt: Date
    public var socketPath: String
    /// "user" or "system".
    public var mode = ""
    public var socketActivated = false
    /// The configuration file read, "" if none.
    public var configFile = ""
    /// Where sessions are kept, "" if nowhere.
    public var stateDirectory = ""
    public var limits = Castd_V1_Limits()

    public init(version: String, startedAt: Date = Date(), socketPath: String) {
        self.version = version
        self.startedAt = startedAt
        self.socketPath = socketPath
    }
}

/// castd's application: the castd.v1.Cast methods, each a handler over CastDevices (the
/// registry of devices and the state store) and castd's logs. It knows nothing of sockets or
/// frames: CastdServer, the transport, hands it a method, the request's bytes and a way to send
/// response messages (``CastdCallHandler``).
public struct CastdService: CastdCallHandler {
    public let registry: DeviceRegistry
    public let store: CastdStateStore
    public let facts: DaemonFacts
    /// Events and status encoded once, sent to many (SharedEncodings).
    let encodings = SharedEncodings()
    /// castd's log filter and recent records (GetLogFilter, SetLogFilter, StreamLogs); nil when
    /// the service runs without castd's logging, and those methods answer FAILED_PRECONDITION.
    public let logs: CastdLogs?
    /// How long ListDevices with app ids waits for each device's answer, its wait for a place
    /// among the links read calls may be opening included; a device that has not answered by
    /// then is left out.
    public var appAnswerDeadline: Duration = .seconds(5)
    /// The files castd serves to devices (a load that names a handed-over file); nil: castd
    /// serves none, and such a load fails.
    public var served: ServedFiles?

    public init(registry: DeviceRegistry, store: CastdStateStore, facts: DaemonFacts, logs: CastdLogs? = nil) {
        self.registry = registry
        self.store = store
        self.facts = facts
        self.logs = logs
    }

    /// Ends every Watch and Listen stream now, each with its status (castd is shutting down).
    public func endStreams() {
        store.finishAll()
        registry.finishChannels()
    }

    public func handle(
        _ method: CastdMethod, request: [UInt8], context: CallContext,
        send: @escaping @Sendable (any SwiftProtobuf.Message) async throws -> Void
    ) async throws {
        try await Self.router[method](self, request, context, send)
    }

    public func answersInline(_ method: CastdMethod, request: [UInt8]) -> Bool {
        Self.router.answersInline(method, service: self, request: request)
    }

    public func answerInline(
        _ method: CastdMethod, request: [UInt8], context: CallContext
    ) throws -> any SwiftProtobuf.Message {
        try Self.router.answerInline(method, service: self, request: request, context: context)
    }

    /// Every method's handler, registered by the service's areas, one file each.
    static let router = CastdRouter { router in
        registerStatus(&router)
        registerDevices(&router)
        registerSessions(&router)
        registerMedia(&router)
        registerQueue(&router)
        registerChannels(&router)
        registerLogs(&router)
    }

    func status(_ context: CallContext) async -> CastdStatusResponse {
        var response = CastdStatusResponse()
        response.daemon = daemonInfo(context)
        let snapshot = store.snapshot()
        response.devices = snapshot.devices
        response.sessions = snapshot.sessions
        response.media = snapshot.media
        response.castState = snapshot.castState
        return response
    }

    /// GetStatus's response, encoded.
    func statusResponse(_ context: CallContext) throws -> EncodedMessage {
        let discovery = registry.discoveryStatus
        let key = SharedEncodings.DaemonKey(
            discovery: discovery.state.description, discoverySince: discovery.since,
            clients: UInt32(clamping: context.connectedClients), access: context.access)
        return try encodings.status(daemon: key, store: store) { daemonInfo(context, discovery: discovery) }
    }

    /// What GetStatus says about castd itself; `discovery` is read once, with the rest of the
    /// call's view of castd.
    func daemonInfo(
        _ context: CallContext,
        discovery: (state: DiscoveryState, since: Date)? = nil
    ) -> Castd_V1_DaemonInfo {
        let discovery = discovery ?? registry.discoveryStatus
        var daemon = Castd_V1_DaemonInfo()
        daemon.version = facts.version
        daemon.startedAtMs = Int64(facts.startedAt.timeIntervalSince1970 * 1000)
        daemon.socketPath = facts.socketPath
        daemon.discovery = discovery.state.description
        daemon.discoveryState = discovery.state.api
        daemon.discoveryReason = discovery.state.reason
        daemon.discoverySinceMs = Int64(discovery.since.timeIntervalSince1970 * 1000)
        daemon.clients = UInt32(clamping: context.connectedClients)
        daemon.mode = facts.mode
        daemon.socketActivated = facts.socketActivated
        daemon.configPath = facts.configFile
        daemon.stateDirectory = facts.stateDirectory
        daemon.limits = facts.limits
        daemon.access = context.access
        daemon.pid = UInt32(clamping: getpid())
        daemon.uid = getuid()
        return daemon
    }
}

/// Runs `body`, giving up with DEADLINE_EXCEEDED after `limit`.
func withDeadline<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw CastdError(.deadlineExceeded, "no answer within \(limit)")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
