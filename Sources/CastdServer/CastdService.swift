import CastCore
import CastProtocol
import CastdAPI
import Foundation
import SwiftProtobuf

/// What `GetStatus` reports about the daemon itself.
public struct DaemonFacts: Sendable {
    public var version: String
    public var startedAt: Date
    public var socketPath: String

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

    public init(registry: DeviceRegistry, hub: CastdEventHub, facts: DaemonFacts) {
        self.registry = registry
        self.hub = hub
        self.facts = facts
    }

    /// Runs one call. `send` writes one response message. Throws `CastdError` for a non-OK end.
    func handle(
        _ method: CastdMethod, request: [UInt8], context: CallContext, send: @Sendable (any SwiftProtobuf.Message) async throws -> Void
    ) async throws {
        switch method {
        case .listDevices:
            _ = try decode(Castd_V1_ListDevicesRequest.self, request)
            var response = Castd_V1_ListDevicesResponse()
            response.devices = hub.devices()
            try await send(response)
        case .getStatus:
            _ = try decode(Castd_V1_GetStatusRequest.self, request)
            try await send(await status(context))
        case .startSession:
            let r = try decode(Castd_V1_StartSessionRequest.self, request)
            if !r.appID.isEmpty { try Validate.appID(r.appID) }
            let device = try await registry.controller(for: r.device)
            try await send(try await device.startSession(appID: r.appID))
        case .endSession:
            let r = try decode(Castd_V1_EndSessionRequest.self, request)
            let device = try await registry.controller(for: r.device)
            var response = Castd_V1_EndSessionResponse()
            response.session = try await device.endSession(stopApp: r.stopApp)
            try await send(response)
        case .load:
            let r = try decode(Castd_V1_LoadRequest.self, request)
            let media = try Validate.media(r.media)
            guard r.startTime.isFinite, r.startTime >= 0 else {
                throw CastdError(.invalidArgument, "start_time must be a number of seconds ≥ 0, not \(r.startTime)")
            }
            let device = try await registry.controller(for: r.device)
            try await send(
                try await device.load(media, autoplay: r.hasAutoplay ? r.autoplay : true, startTime: r.startTime))
        case .play, .pause, .stop:
            let r = try decode(Castd_V1_MediaRequest.self, request)
            let device = try await registry.controller(for: r.device)
            let type = method == .play ? "PLAY" : method == .pause ? "PAUSE" : "STOP"
            try await send(try await device.mediaCommand(type))
        case .seek:
            let r = try decode(Castd_V1_SeekRequest.self, request)
            guard r.position.isFinite, r.relative || r.position >= 0 else {
                throw CastdError(.invalidArgument, "seek position must be a number of seconds ≥ 0, not \(r.position)")
            }
            let device = try await registry.controller(for: r.device)
            try await send(try await device.seek(to: r.position, relative: r.relative))
        case .setVolume:
            let r = try decode(Castd_V1_SetVolumeRequest.self, request)
            guard r.hasLevel || r.hasMuted else {
                throw CastdError(.invalidArgument, "set a volume level (0.0–1.0) or muted")
            }
            if r.hasLevel, !(r.level.isFinite && (0...1).contains(r.level)) {
                throw CastdError(.invalidArgument, "volume level must be between 0.0 and 1.0, not \(r.level)")
            }
            let device = try await registry.controller(for: r.device)
            try await send(
                try await device.setVolume(level: r.hasLevel ? r.level : nil, muted: r.hasMuted ? r.muted : nil))
        case .watch:
            _ = try decode(Castd_V1_WatchRequest.self, request)
            let subscription = hub.watch()
            defer { subscription.cancel() }
            for await event in subscription {
                try await send(event)
            }
            try Task.checkCancellation()
            throw CastdError(.unavailable, "castd is shutting down")
        default:
            throw CastdError(.unimplemented, "\(method.rawValue) is not implemented yet")
        }
    }

    func status(_ context: CallContext) async -> CastdStatusResponse {
        var response = CastdStatusResponse()
        var daemon = Castd_V1_DaemonInfo()
        daemon.version = facts.version
        daemon.startedAtMs = Int64(facts.startedAt.timeIntervalSince1970 * 1000)
        daemon.socketPath = facts.socketPath
        daemon.discovery = await registry.discoveryState.description
        daemon.clients = UInt32(clamping: context.connectedClients)
        response.daemon = daemon
        let snapshot = hub.snapshot()
        response.devices = snapshot.devices
        response.sessions = snapshot.sessions
        response.media = snapshot.media
        return response
    }

    private func decode<M: SwiftProtobuf.Message>(_ type: M.Type, _ bytes: [UInt8]) throws -> M {
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
}

/// Checks on what clients send, before anything reaches a device.
enum Validate {
    static func appID(_ id: String) throws {
        guard id.count <= 64, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." }) else {
            throw CastdError(.invalidArgument, "invalid app id '\(id)' (letters, digits, '_', '-', '.' only)")
        }
    }

    static func media(_ media: CastdMediaInformation) throws -> CastMediaInformation {
        let content = media.contentURL.isEmpty ? media.contentID : media.contentURL
        guard !content.isEmpty else {
            throw CastdError(.invalidArgument, "media has no content: set content_url (a URL) or content_id")
        }
        if !media.contentURL.isEmpty || content.contains("://") {
            try url(content)
        }
        if media.duration < 0 || !media.duration.isFinite {
            throw CastdError(.invalidArgument, "media duration must be ≥ 0 seconds, not \(media.duration)")
        }
        if media.hasMetadata {
            for image in media.metadata.images { try url(image.url, what: "image URL") }
        }
        let cast = try media.castValue()
        // A LOAD must fit in one 64 KiB CastV2 frame, with room for the envelope.
        let size = cast.json.jsonString.utf8.count
        guard size < CastWire.maximumFrameLength - 1024 else {
            throw CastdError(.invalidArgument, "media information of \(size) bytes does not fit in a 64 KiB Cast message")
        }
        return cast
    }

    static func url(_ text: String, what: String = "URL") throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme, !scheme.isEmpty else {
            throw CastdError(.invalidArgument, "invalid \(what) '\(text)': not an absolute URL (e.g. https://host/video.mp4)")
        }
        if ["http", "https"].contains(scheme.lowercased()) && (components.host ?? "").isEmpty {
            throw CastdError(.invalidArgument, "invalid \(what) '\(text)': no host")
        }
        if text.contains(where: { $0.isWhitespace }) {
            throw CastdError(.invalidArgument, "invalid \(what) '\(text)': contains spaces (percent-encode them)")
        }
    }
}
