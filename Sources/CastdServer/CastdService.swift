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
            try Validate.appIDs(r.appIds)
            var response = Castd_V1_ListDevicesResponse()
            response.devices = await devices(matching: r)
            try await send(response)
        case .getStatus:
            _ = try decode(Castd_V1_GetStatusRequest.self, request)
            try await send(statusResponse(context))
        case .getAppAvailability:
            let r = try decode(Castd_V1_AppAvailabilityRequest.self, request)
            guard !r.appIds.isEmpty else { throw CastdError(.invalidArgument, "name at least one app id") }
            try Validate.appIDs(r.appIds)
            let device = try await registry.controller(for: r.device)
            var response = Castd_V1_AppAvailabilityResponse()
            response.deviceID = device.id
            response.available = try await device.appAvailability(r.appIds, openingWithin: registry.readCallLinks)
            try await send(response)
        case .startSession:
            let r = try decode(Castd_V1_StartSessionRequest.self, request)
            if !r.appID.isEmpty { try Validate.appID(r.appID) }
            if case .UNRECOGNIZED(let n) = r.mode { throw CastdError(.invalidArgument, "unknown start mode \(n)") }
            try Validate.launchOptions(r.launch)
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
            let fields = try Validate.load(r)
            let device = try await registry.sessionController(for: r.device)
            try await send(try await device.load(fields))
        case .play, .pause, .stop, .skipAd, .requestMediaStatus:
            let r = try decode(Castd_V1_MediaRequest.self, request)
            let device = try await registry.sessionController(for: r.device)
            let type: String
            switch method {
            case .play: type = "PLAY"
            case .pause: type = "PAUSE"
            case .stop: type = "STOP"
            case .skipAd: type = "SKIP_AD"
            default: type = "GET_STATUS"
            }
            try await send(try await device.mediaCommand(type))
        case .seek:
            let r = try decode(Castd_V1_SeekRequest.self, request)
            guard r.position.isFinite, r.relative || r.position >= 0 else {
                throw CastdError(.invalidArgument, "seek position must be a number of seconds ≥ 0, not \(r.position)")
            }
            if case .UNRECOGNIZED(let n) = r.resumeState {
                throw CastdError(.invalidArgument, "unknown resume state \(n)")
            }
            let device = try await registry.sessionController(for: r.device)
            try await send(try await device.seek(to: r.position, relative: r.relative, resumeState: r.resumeState))
        case .setPlaybackRate:
            let r = try decode(Castd_V1_SetPlaybackRateRequest.self, request)
            try Validate.rate(r.rate)
            let device = try await registry.sessionController(for: r.device)
            try await send(try await device.setPlaybackRate(r.rate))
        case .editTracks:
            let r = try decode(Castd_V1_EditTracksRequest.self, request)
            guard r.hasActiveTracks || r.hasTextTrackStyle else {
                throw CastdError(.invalidArgument, "set active_tracks, text_track_style or both")
            }
            if r.hasActiveTracks { try Validate.ids(r.activeTracks.trackIds, what: "track") }
            let style = r.hasTextTrackStyle ? try Validate.style(r.textTrackStyle) : nil
            let device = try await registry.sessionController(for: r.device)
            try await send(
                try await device.editTracks(
                    activeTrackIDs: r.hasActiveTracks ? r.activeTracks.trackIds : nil, style: style))
        case .setStreamVolume:
            let r = try decode(Castd_V1_SetVolumeRequest.self, request)
            try Validate.volume(r, allowSteps: false)
            let device = try await registry.sessionController(for: r.device)
            try await send(
                try await device.setStreamVolume(level: r.hasLevel ? r.level : nil, muted: r.hasMuted ? r.muted : nil))
        case .queueLoad:
            let r = try decode(Castd_V1_QueueLoadRequest.self, request)
            let fields = try Validate.queueLoad(r)
            let device = try await registry.sessionController(for: r.device)
            try await send(try await device.queueLoad(fields))
        case .queueInsert:
            let r = try decode(Castd_V1_QueueInsertRequest.self, request)
            let items = try Validate.newItems(r.items)
            let device = try await registry.sessionController(for: r.device)
            try await send(try await device.queueInsert(items: items, before: r.insertBeforeItemID, playNow: r.playNow))
        case .queueRemove:
            let r = try decode(Castd_V1_QueueRemoveRequest.self, request)
            guard !r.itemIds.isEmpty else { throw CastdError(.invalidArgument, "name at least one item id to remove") }
            try Validate.ids(r.itemIds, what: "item")
            let device = try await registry.sessionController(for: r.device)
            try await send(try await device.queueRemove(itemIDs: r.itemIds))
        case .queueReorder:
            let r = try decode(Castd_V1_QueueReorderRequest.self, request)
            guard !r.itemIds.isEmpty else { throw CastdError(.invalidArgument, "name at least one item id to move") }
            try Validate.ids(r.itemIds + (r.insertBeforeItemID != 0 ? [r.insertBeforeItemID] : []), what: "item")
            if r.itemIds.contains(r.insertBeforeItemID) {
                throw CastdError(.invalidArgument, "cannot move item \(r.insertBeforeItemID) before itself")
            }
            let device = try await registry.sessionController(for: r.device)
            try await send(try await device.queueReorder(itemIDs: r.itemIds, before: r.insertBeforeItemID))
        case .queueUpdate:
            let r = try decode(Castd_V1_QueueUpdateRequest.self, request)
            let (items, itemIDs) = try Validate.queueUpdate(r)
            let device = try await registry.sessionController(for: r.device)
            try await send(
                try await device.queueUpdate(
                    currentItemID: r.currentItemID, jump: r.jump, repeatMode: r.hasRepeatMode ? r.repeatMode : nil,
                    items: items, itemIDs: itemIDs, currentTime: r.currentTime))
        case .setVolume:
            let r = try decode(Castd_V1_SetVolumeRequest.self, request)
            try Validate.volume(r, allowSteps: true)
            let device = try await registry.controller(for: r.device)
            try await send(
                try await device.setVolume(
                    level: r.hasLevel ? r.level : nil, muted: r.hasMuted ? r.muted : nil, steps: r.steps))
        case .sendMessage:
            let r = try decode(Castd_V1_SendMessageRequest.self, request)
            try Validate.namespace(r.namespace)
            let text = try Validate.messagePayload(r)
            let device = try await registry.sessionController(for: r.device)
            let session = try await device.sendMessage(namespace: r.namespace, text: text)
            var response = Castd_V1_SendMessageResponse()
            response.deviceID = session.deviceID
            response.sessionID = session.sessionID
            try await send(response)
        case .listen:
            let r = try decode(Castd_V1_ListenRequest.self, request)
            try Validate.namespace(r.namespace)
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

/// Checks on what clients send, before anything reaches a device: a bad value gets
/// INVALID_ARGUMENT with a sentence saying what is allowed.
package enum Validate {
    /// What a JSON message may weigh so that it fits one 64 KiB CastV2 frame with its envelope.
    package static let maximumPayload = CastWire.maximumFrameLength - 1024

    /// The most app ids one call may ask about (each is a question to every device asked).
    package static let maximumAppIDs = 32

    package static func appIDs(_ ids: [String]) throws {
        guard ids.count <= maximumAppIDs else {
            throw CastdError(.invalidArgument, "\(ids.count) app ids asked at once; at most \(maximumAppIDs)")
        }
        for id in ids { try appID(id) }
    }

    package static func appID(_ id: String) throws {
        guard !id.isEmpty, id.count <= 64,
            id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." })
        else {
            throw CastdError(.invalidArgument, "invalid app id '\(id)' (letters, digits, '_', '-', '.' only)")
        }
    }

    package static func launchOptions(_ options: CastdLaunchOptions) throws {
        if !options.language.isEmpty,
            options.language.count > 35 || !options.language.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" })
        {
            throw CastdError(.invalidArgument, "invalid language '\(options.language)' (a BCP-47 tag such as en-US)")
        }
        if options.credentials.utf8.count + options.credentialsType.utf8.count > 16 * 1024 {
            throw CastdError(.invalidArgument, "launch credentials over 16 KiB do not fit in a Cast message")
        }
    }

    package static func rate(_ rate: Double) throws {
        guard rate.isFinite, (0.5...2.0).contains(rate) else {
            throw CastdError(.invalidArgument, "playback rate must be between 0.5 and 2.0, not \(rate)")
        }
    }

    package static func ids(_ ids: [Int64], what: String) throws {
        if let bad = ids.first(where: { $0 <= 0 }) {
            throw CastdError(.invalidArgument, "\(what) ids are positive numbers, not \(bad)")
        }
    }

    package static func volume(_ r: Castd_V1_SetVolumeRequest, allowSteps: Bool) throws {
        if r.steps != 0 {
            guard allowSteps else {
                throw CastdError(.invalidArgument, "volume steps are for the device's volume only")
            }
            guard !r.hasLevel else { throw CastdError(.invalidArgument, "set a volume level or steps, not both") }
            guard abs(r.steps) <= 100 else {
                throw CastdError(.invalidArgument, "volume steps must be between -100 and 100, not \(r.steps)")
            }
            return
        }
        guard r.hasLevel || r.hasMuted else {
            throw CastdError(.invalidArgument, "set a volume level (0.0–1.0), muted, or steps")
        }
        if r.hasLevel, !(r.level.isFinite && (0...1).contains(r.level)) {
            throw CastdError(.invalidArgument, "volume level must be between 0.0 and 1.0, not \(r.level)")
        }
    }

    package static func style(_ style: CastdTextTrackStyle) throws -> JSONValue {
        for (name, color) in [
            ("foreground_color", style.foregroundColor), ("background_color", style.backgroundColor),
            ("edge_color", style.edgeColor), ("window_color", style.windowColor),
        ] where !color.isEmpty {
            let hex = color.dropFirst()
            guard color.hasPrefix("#"), hex.count == 8 || hex.count == 6, hex.allSatisfy(\.isHexDigit) else {
                throw CastdError(.invalidArgument, "\(name) must be a colour like #RRGGBBAA, not '\(color)'")
            }
        }
        if style.fontScale != 0, !(style.fontScale.isFinite && (0.1...10).contains(style.fontScale)) {
            throw CastdError(.invalidArgument, "font_scale must be between 0.1 and 10, not \(style.fontScale)")
        }
        return try style.castJSON()
    }

    package static func url(_ text: String, what: String = "URL") throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme, !scheme.isEmpty else {
            throw CastdError(
                .invalidArgument, "invalid \(what) '\(text)': not an absolute URL (e.g. https://host/video.mp4)")
        }
        if ["http", "https"].contains(scheme.lowercased()) && (components.host ?? "").isEmpty {
            throw CastdError(.invalidArgument, "invalid \(what) '\(text)': no host")
        }
        if text.contains(where: { $0.isWhitespace }) {
            throw CastdError(.invalidArgument, "invalid \(what) '\(text)': contains spaces (percent-encode them)")
        }
    }

    /// Checks media information and returns its JSON.
    package static func media(_ media: CastdMediaInformation, what: String = "media") throws -> JSONValue {
        let content = media.contentURL.isEmpty ? media.contentID : media.contentURL
        guard !content.isEmpty || !media.entity.isEmpty else {
            throw CastdError(.invalidArgument, "\(what) has no content: set content_url (a URL), content_id or entity")
        }
        if !media.contentURL.isEmpty || content.contains("://") { try url(content) }
        if !media.duration.isFinite || media.duration < 0 {
            throw CastdError(.invalidArgument, "\(what) duration must be ≥ 0 seconds, not \(media.duration)")
        }
        if case .UNRECOGNIZED(let n) = media.streamType {
            throw CastdError(.invalidArgument, "unknown stream type \(n)")
        }
        if media.hasMetadata {
            if case .UNRECOGNIZED(let n) = media.metadata.metadataType {
                throw CastdError(.invalidArgument, "unknown metadata type \(n) (0 generic … 4 photo)")
            }
            for image in media.metadata.images { try url(image.url, what: "image URL") }
        }
        var trackIDs: Set<Int64> = []
        for track in media.tracks {
            guard track.trackID > 0, trackIDs.insert(track.trackID).inserted else {
                throw CastdError(.invalidArgument, "track ids must be positive and unique, not \(track.trackID)")
            }
            guard track.type != .unspecified else {
                throw CastdError(.invalidArgument, "track \(track.trackID) needs a type (text, audio or video)")
            }
            if !track.contentID.isEmpty, track.contentID.contains("://") { try url(track.contentID, what: "track URL") }
        }
        if media.hasTextTrackStyle { _ = try style(media.textTrackStyle) }
        let clipIDs = Set(media.breakClips.map(\.id))
        for clip in media.breakClips {
            guard !clip.id.isEmpty else { throw CastdError(.invalidArgument, "every ad break clip needs an id") }
            guard clip.duration.isFinite, clip.duration >= 0 else {
                throw CastdError(.invalidArgument, "ad break clip \(clip.id) duration must be ≥ 0 seconds")
            }
            if !clip.contentURL.isEmpty { try url(clip.contentURL, what: "ad clip URL") }
        }
        for adBreak in media.breaks {
            guard !adBreak.id.isEmpty else { throw CastdError(.invalidArgument, "every ad break needs an id") }
            guard adBreak.position.isFinite, adBreak.position >= -1 else {
                throw CastdError(
                    .invalidArgument, "ad break \(adBreak.id) position must be ≥ 0 seconds (or -1 for the end)")
            }
            if let missing = adBreak.breakClipIds.first(where: { !clipIDs.contains($0) }) {
                throw CastdError(
                    .invalidArgument, "ad break \(adBreak.id) names clip '\(missing)', which is not in break_clips")
            }
        }
        return try media.castJSON()
    }

    package static func load(_ r: Castd_V1_LoadRequest) throws -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["media": try media(r.media)]
        guard r.startTime.isFinite, r.startTime >= 0 else {
            throw CastdError(.invalidArgument, "start_time must be a number of seconds ≥ 0, not \(r.startTime)")
        }
        if r.media.duration > 0, r.startTime > r.media.duration {
            throw CastdError(
                .invalidArgument, "start_time \(r.startTime) is beyond the media's duration \(r.media.duration)")
        }
        fields["autoplay"] = .bool(r.hasAutoplay ? r.autoplay : true)
        fields["currentTime"] = .number(r.startTime)
        if r.playbackRate != 0 {
            try rate(r.playbackRate)
            fields["playbackRate"] = .number(r.playbackRate)
        }
        if !r.activeTrackIds.isEmpty {
            let known = Set(r.media.tracks.map(\.trackID))
            if let unknown = r.activeTrackIds.first(where: { !known.contains($0) }) {
                throw CastdError(.invalidArgument, "active track \(unknown) is not one of the media's tracks")
            }
            fields["activeTrackIds"] = .array(r.activeTrackIds.map { .number(Double($0)) })
        }
        if !r.credentials.isEmpty { fields["credentials"] = .string(r.credentials) }
        if !r.credentialsType.isEmpty { fields["credentialsType"] = .string(r.credentialsType) }
        if let customData = try parseClientJSON(r.customDataJson, field: "custom_data_json") {
            fields["customData"] = customData
        }
        try fits(.object(fields))
        return fields
    }

    package static func newItems(_ items: [CastdQueueItem]) throws -> [JSONValue] {
        guard !items.isEmpty else { throw CastdError(.invalidArgument, "give at least one queue item") }
        return try items.enumerated().map { index, item in
            guard item.hasMedia else { throw CastdError(.invalidArgument, "queue item \(index + 1) has no media") }
            _ = try media(item.media, what: "queue item \(index + 1)")
            try itemTimes(item, index: index)
            return try item.castJSON(includeItemID: false)
        }
    }

    private static func itemTimes(_ item: CastdQueueItem, index: Int) throws {
        for (name, value) in [("start_time", item.startTime), ("preload_time", item.preloadTime)] {
            guard value.isFinite, value >= 0 else {
                throw CastdError(.invalidArgument, "queue item \(index + 1) \(name) must be ≥ 0 seconds, not \(value)")
            }
        }
    }

    package static func queueLoad(_ r: Castd_V1_QueueLoadRequest) throws -> [String: JSONValue] {
        let items = try newItems(r.items)
        guard Int(r.startIndex) < items.count else {
            throw CastdError(.invalidArgument, "start_index \(r.startIndex) is past the last of \(items.count) items")
        }
        if case .UNRECOGNIZED(let n) = r.repeatMode { throw CastdError(.invalidArgument, "unknown repeat mode \(n)") }
        guard r.startTime.isFinite, r.startTime >= 0 else {
            throw CastdError(.invalidArgument, "start_time must be ≥ 0 seconds, not \(r.startTime)")
        }
        var fields: [String: JSONValue] = [
            "items": .array(items), "startIndex": .number(Double(r.startIndex)),
            "repeatMode": .string(r.repeatMode.castValue),
        ]
        if r.startTime > 0 { fields["currentTime"] = .number(r.startTime) }
        if let customData = try parseClientJSON(r.customDataJson, field: "custom_data_json") {
            fields["customData"] = customData
        }
        try fits(.object(fields))
        return fields
    }

    package static func queueUpdate(_ r: Castd_V1_QueueUpdateRequest) throws -> ([JSONValue], [Int64]) {
        if r.hasRepeatMode, case .UNRECOGNIZED(let n) = r.repeatMode {
            throw CastdError(.invalidArgument, "unknown repeat mode \(n)")
        }
        if r.currentItemID != 0 { try ids([r.currentItemID], what: "item") }
        guard r.currentItemID == 0 || r.jump == 0 else {
            throw CastdError(.invalidArgument, "jump to an item or by an offset, not both")
        }
        guard r.currentTime.isFinite, r.currentTime >= 0 else {
            throw CastdError(.invalidArgument, "current_time must be ≥ 0 seconds, not \(r.currentTime)")
        }
        guard r.currentItemID != 0 || r.jump != 0 || r.hasRepeatMode || !r.items.isEmpty else {
            throw CastdError(.invalidArgument, "nothing to update: set current_item_id, jump, repeat_mode or items")
        }
        let itemIDs = r.items.map(\.itemID)
        try ids(itemIDs, what: "item")
        let items = try r.items.enumerated().map { index, item in
            if item.hasMedia { _ = try media(item.media, what: "queue item \(item.itemID)") }
            try itemTimes(item, index: index)
            return try item.castJSON(includeItemID: true)
        }
        return (items, itemIDs)
    }

    package static func namespace(_ namespace: String) throws {
        guard namespace.hasPrefix("urn:x-cast:"), namespace.count > "urn:x-cast:".count else {
            throw CastdError(
                .invalidArgument,
                "invalid namespace '\(namespace)': custom namespaces start with urn:x-cast: (e.g. urn:x-cast:com.example.app)"
            )
        }
        guard namespace.utf8.count <= 128, !namespace.contains(where: { $0.isWhitespace || $0.isNewline }) else {
            throw CastdError(.invalidArgument, "invalid namespace '\(namespace)': at most 128 characters, no spaces")
        }
        if namespace.hasPrefix("urn:x-cast:com.google.cast.") {
            throw CastdError(
                .invalidArgument,
                "\(namespace) is reserved for the Cast platform; use castd's media and session methods")
        }
    }

    package static func messagePayload(_ r: Castd_V1_SendMessageRequest) throws -> String {
        let text: String
        switch r.payload {
        case .text(let t)?: text = t
        case .json(let json)?:
            do {
                text = try JSONValue.parse(json).jsonString
            } catch {
                throw CastdError(.invalidArgument, "the message is not valid JSON: \(error)")
            }
        case nil:
            throw CastdError(.invalidArgument, "the message is empty: set text or json")
        }
        guard text.utf8.count <= maximumPayload else {
            throw CastdError(
                .invalidArgument,
                "a message of \(text.utf8.count) bytes does not fit in a 64 KiB Cast message (limit \(maximumPayload) bytes)"
            )
        }
        return text
    }

    /// A request must fit in one 64 KiB CastV2 frame, with room for the envelope.
    private static func fits(_ json: JSONValue) throws {
        let size = json.jsonString.utf8.count
        guard size < maximumPayload else {
            throw CastdError(.invalidArgument, "a request of \(size) bytes does not fit in a 64 KiB Cast message")
        }
    }
}
