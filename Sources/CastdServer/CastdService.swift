import CastCore
import CastProtocol
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

/// The castd.v1.Cast methods: request validation and the calls into CastCore. Transport-free:
/// the connection layer hands it a decoded method and request bytes and a way to send
/// response messages.
public struct CastdService: Sendable {
    public let registry: DeviceRegistry
    public let hub: CastdEventHub
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

    public init(registry: DeviceRegistry, hub: CastdEventHub, facts: DaemonFacts, logs: CastdLogs? = nil) {
        self.registry = registry
        self.hub = hub
        self.facts = facts
        self.logs = logs
    }

    /// Ends every Watch and Listen stream now, each with its status (castd is shutting down).
    public func endStreams() {
        hub.finishAll()
        registry.finishChannels()
    }

    /// Whether a call only reads castd's own state and never waits: GetStatus, and ListDevices
    /// without criteria (an empty request). CastdServer answers these on the connection's event
    /// loop, with `answerInline`, without starting a task for them.
    static func answersInline(_ method: CastdMethod, request: some Collection<UInt8>) -> Bool {
        method == .getStatus || (method == .listDevices && request.isEmpty)
    }

    /// The response of a call that `answersInline`, computed without waiting: the same message
    /// `handle` would send. Throws `CastdError` like `handle`.
    func answerInline(_ method: CastdMethod, request: [UInt8], context: CallContext) throws -> any SwiftProtobuf.Message
    {
        switch method {
        case .getStatus:
            _ = try decode(Castd_V1_GetStatusRequest.self, request)
            return try statusResponse(context)
        case .listDevices where request.isEmpty:
            var response = Castd_V1_ListDevicesResponse()
            response.devices = hub.devices()
            return response
        default:
            throw CastdError(.internal, "\(method.path) is not answered at once")
        }
    }

    /// Runs one call. `send` writes one response message. Throws `CastdError` for a non-OK end.
    func handle(
        _ method: CastdMethod, request: [UInt8], context: CallContext,
        send: @Sendable (any SwiftProtobuf.Message) async throws -> Void
    ) async throws {
        switch method {
        case .listDevices:
            let r = try decode(Castd_V1_ListDevicesRequest.self, request)
            try CastdValidation.appIDs(r.appIds)
            var response = Castd_V1_ListDevicesResponse()
            response.devices = await devices(matching: r)
            try await send(response)
        case .getStatus:
            _ = try decode(Castd_V1_GetStatusRequest.self, request)
            try await send(statusResponse(context))
        case .getDevice:
            let r = try decode(Castd_V1_GetDeviceRequest.self, request)
            let controller = try await registry.controller(for: r.device)
            guard let device = hub.device(id: controller.id) else {
                throw CastdError(.notFound, "'\(r.device)' is no longer known")
            }
            try await send(device)
        case .getAppAvailability:
            let r = try decode(Castd_V1_AppAvailabilityRequest.self, request)
            try CastdValidation.appAvailability(r)
            let device = try await registry.controller(for: r.device)
            var response = Castd_V1_AppAvailabilityResponse()
            response.deviceID = device.id
            response.available = try await device.appAvailability(r.appIds, openingWithin: registry.readCallLinks)
            try await send(response)
        case .startSession:
            let r = try decode(Castd_V1_StartSessionRequest.self, request)
            try CastdValidation.startSession(r)
            let device = try await registry.controller(for: r.device)
            try await send(
                try await device.startSession(SessionRequest(appID: r.appID, mode: r.mode, launch: r.launch)))
        case .endSession:
            let r = try decode(Castd_V1_EndSessionRequest.self, request)
            let device = try await registry.sessionController(for: r.device)
            var response = Castd_V1_EndSessionResponse()
            response.session = try await device.endSession(stopApp: r.stopApp)
            try await send(response)
        case .load:
            let r = try decode(Castd_V1_LoadRequest.self, request)
            try CastdValidation.load(r)
            try await media(try MediaRequest(load: r), on: r.device, send: send)
        case .play, .pause, .stop, .skipAd, .requestMediaStatus:
            let r = try decode(Castd_V1_MediaRequest.self, request)
            let command: MediaRequest =
                switch method {
                case .play: .play
                case .pause: .pause
                case .stop: .stop
                case .skipAd: .skipAd
                default: .getStatus
                }
            try await media(command, on: r.device, send: send)
        case .seek:
            let r = try decode(Castd_V1_SeekRequest.self, request)
            try CastdValidation.seek(r)
            try await media(MediaRequest(seek: r), on: r.device, send: send)
        case .setPlaybackRate:
            let r = try decode(Castd_V1_SetPlaybackRateRequest.self, request)
            try CastdValidation.rate(r.rate)
            try await media(.setPlaybackRate(r.rate), on: r.device, send: send)
        case .editTracks:
            let r = try decode(Castd_V1_EditTracksRequest.self, request)
            try CastdValidation.editTracks(r)
            try await media(try MediaRequest(editTracks: r), on: r.device, send: send)
        case .setStreamVolume:
            let r = try decode(Castd_V1_SetVolumeRequest.self, request)
            try CastdValidation.volume(r, allowSteps: false)
            try await media(MediaRequest(streamVolume: r), on: r.device, send: send)
        case .queueLoad:
            let r = try decode(Castd_V1_QueueLoadRequest.self, request)
            try CastdValidation.queueLoad(r)
            try await media(try MediaRequest(queueLoad: r), on: r.device, send: send)
        case .queueInsert:
            let r = try decode(Castd_V1_QueueInsertRequest.self, request)
            try CastdValidation.newItems(r.items)
            try await media(try MediaRequest(queueInsert: r), on: r.device, send: send)
        case .queueRemove:
            let r = try decode(Castd_V1_QueueRemoveRequest.self, request)
            try CastdValidation.queueRemove(r)
            try await media(.queueRemove(itemIDs: r.itemIds), on: r.device, send: send)
        case .queueReorder:
            let r = try decode(Castd_V1_QueueReorderRequest.self, request)
            try CastdValidation.queueReorder(r)
            try await media(MediaRequest(queueReorder: r), on: r.device, send: send)
        case .queueUpdate:
            let r = try decode(Castd_V1_QueueUpdateRequest.self, request)
            try CastdValidation.queueUpdate(r)
            try await media(try MediaRequest(queueUpdate: r), on: r.device, send: send)
        case .setVolume:
            let r = try decode(Castd_V1_SetVolumeRequest.self, request)
            try CastdValidation.volume(r, allowSteps: true)
            let device = try await registry.controller(for: r.device)
            try await send(
                try await device.setVolume(
                    level: r.hasLevel ? r.level : nil, muted: r.hasMuted ? r.muted : nil, steps: r.steps))
        case .sendMessage:
            let r = try decode(Castd_V1_SendMessageRequest.self, request)
            try CastdValidation.sendMessage(r)
            let text = try r.castText()
            let device = try await registry.sessionController(for: r.device)
            let session = try await device.sendMessage(namespace: r.namespace, text: text)
            var response = Castd_V1_SendMessageResponse()
            response.deviceID = session.deviceID
            response.sessionID = session.sessionID
            try await send(response)
        case .listen:
            let r = try decode(Castd_V1_ListenRequest.self, request)
            try CastdValidation.namespace(r.namespace)
            let device = try await registry.controller(for: r.device)
            for await event in device.listen(namespace: r.namespace) {
                try await send(event)
            }
            try Task.checkCancellation()
            throw CastdError(.unavailable, "castd is shutting down")
        case .watch:
            _ = try decode(Castd_V1_WatchRequest.self, request)
            let subscription = hub.watch()
            defer { subscription.cancel() }
            for await event in subscription {
                try await send(encodings.event(event))
            }
            try Task.checkCancellation()
            throw CastdError(.unavailable, "castd is shutting down")
        case .getLogFilter, .setLogFilter, .streamLogs:
            try await handleLogs(method, request: request, peer: context.peer, send: send)
        case .forgetDevice:
            let r = try decode(Castd_V1_ForgetDeviceRequest.self, request)
            guard !r.device.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw CastdError(.invalidArgument, "name the device whose pinned key castd should forget")
            }
            try await send(try await registry.forgetPinnedKey(of: r.device))
        }
    }

    /// A media request to the device holding the session `selector` names; its answer is the
    /// media status.
    private func media(
        _ request: MediaRequest, on selector: String, send: @Sendable (any SwiftProtobuf.Message) async throws -> Void
    ) async throws {
        let device = try await registry.sessionController(for: selector)
        try await send(try await device.media(request))
    }

    /// Devices that meet the request's criteria: capability bits from discovery, and apps the
    /// device says it can run (asked of every candidate at once, but links are opened for it only
    /// a few at a time, `DeviceRegistry.readCallLinks`; a device that cannot answer within
    /// `appAnswerDeadline`, its wait for a place included, is left out).
    private func devices(matching request: Castd_V1_ListDevicesRequest) async -> [CastdDevice] {
        let candidates = hub.devices().filter { $0.capabilities & request.capabilities == request.capabilities }
        guard !request.appIds.isEmpty else { return candidates }
        let registry = self.registry
        let deadline = appAnswerDeadline
        let able = await withTaskGroup(of: String?.self) { group in
            for device in candidates {
                group.addTask {
                    guard let controller = await registry.controller(id: device.id) else { return nil }
                    let answer = try? await withDeadline(deadline) {
                        try await controller.appAvailability(request.appIds, openingWithin: registry.readCallLinks)
                    }
                    return answer?.values.allSatisfy { $0 } == true ? device.id : nil
                }
            }
            var ids: Set<String> = []
            for await id in group { if let id { ids.insert(id) } }
            return ids
        }
        return candidates.filter { able.contains($0.id) }
    }

    func status(_ context: CallContext) async -> CastdStatusResponse {
        var response = CastdStatusResponse()
        response.daemon = daemonInfo(context)
        let snapshot = hub.snapshot()
        response.devices = snapshot.devices
        response.sessions = snapshot.sessions
        response.media = snapshot.media
        return response
    }

    /// GetStatus's response, encoded.
    func statusResponse(_ context: CallContext) throws -> EncodedMessage {
        let key = SharedEncodings.DaemonKey(
            discovery: registry.discoveryState.description, clients: UInt32(clamping: context.connectedClients),
            access: context.access)
        return try encodings.status(daemon: key, hub: hub) { daemonInfo(context) }
    }

    /// What GetStatus says about castd itself.
    func daemonInfo(_ context: CallContext) -> Castd_V1_DaemonInfo {
        var daemon = Castd_V1_DaemonInfo()
        daemon.version = facts.version
        daemon.startedAtMs = Int64(facts.startedAt.timeIntervalSince1970 * 1000)
        daemon.socketPath = facts.socketPath
        daemon.discovery = registry.discoveryState.description
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

    private func decode<M: SwiftProtobuf.Message>(_ type: M.Type, _ bytes: [UInt8]) throws -> M {
        try Self.decodeRequest(type, bytes)
    }

    /// A method's request message from its bytes; INVALID_ARGUMENT if they are not one.
    package static func decodeRequest<M: SwiftProtobuf.Message>(_ type: M.Type, _ bytes: [UInt8]) throws -> M {
        do {
            return try M(serializedBytes: bytes)
        } catch {
            throw CastdError(.invalidArgument, "malformed \(M.protoMessageName) request: \(error)")
        }
    }
}

/// What the connection layer knows about a call.
struct CallContext: Sendable {
    var connectedClients: Int
    var access: Castd_V1_Access = .control
    /// Who called (nil for calls answered at once, which change nothing).
    var peer: PeerCredentials? = nil
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
