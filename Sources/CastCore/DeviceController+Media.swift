import CastChannel
import CastProtocol
import CastdAPI
import Foundation

/// The remote media client: LOAD, playback control, tracks, ad breaks, queue, volume.
extension DeviceController {
    /// The session's media endpoint, starting the Default Media Receiver if the session's app
    /// has no media player (or there is no session).
    private func mediaSession() async throws -> (CastLink, CastdSession) {
        if let session, session.namespaces.contains(CastNamespace.media) {
            return (try await link(), session)
        }
        let session = try await startSession(appID: CastAppID.defaultMediaReceiver)
        return (try await link(), session)
    }

    /// LOAD: `request` is the whole LOAD payload but `type` and `requestId`.
    public func load(_ request: [String: JSONValue]) async throws -> CastdMediaStatus {
        try await startMedia(type: "LOAD", request)
    }

    /// QUEUE_LOAD: like a LOAD, it starts a new media session.
    public func queueLoad(_ request: [String: JSONValue]) async throws -> CastdMediaStatus {
        try await startMedia(type: "QUEUE_LOAD", request)
    }

    private func startMedia(type: String, _ fields: [String: JSONValue]) async throws -> CastdMediaStatus {
        do {
            let (link, session) = try await mediaSession()
            mediaLogger.info(
                "\(type)",
                metadata: ["media.content": "\(LogRedaction.url(fields["media"]?["contentId"]?.stringValue ?? ""))"])
            let reply = try await link.requestReply(namespace: CastNamespace.media, destination: session.transportID) {
                MediaRequest.make(type, requestID: $0, fields)
            }
            applyMedia(reply)
            return currentMedia()
        } catch {
            throw Self.map(error, device: name)
        }
    }

    /// PLAY, PAUSE, STOP, SKIP_AD or GET_STATUS on the loaded media.
    public func mediaCommand(_ type: String) async throws -> CastdMediaStatus {
        try await withLoadedMedia(type: type)
    }

    public func seek(to position: Double, relative: Bool, resumeState: Castd_V1_ResumeState = .unchanged) async throws
        -> CastdMediaStatus
    {
        var fields: [String: JSONValue] = [relative ? "relativeTime" : "currentTime": .number(position)]
        switch resumeState {
        case .play: fields["resumeState"] = "PLAYBACK_START"
        case .pause: fields["resumeState"] = "PLAYBACK_PAUSE"
        default: break
        }
        return try await withLoadedMedia(type: "SEEK", replacing: "seek", fields) { [name] status in
            let duration = status.media.duration
            guard duration > 0, status.media.streamType != .live else { return }
            let target = relative ? status.estimatedPosition() + position : position
            if target > duration + 0.001 {
                throw CastdError(
                    .invalidArgument,
                    "cannot seek to \(Self.seconds(target)): the media on \(name) is \(Self.seconds(duration)) long")
            }
        }
    }

    public func setPlaybackRate(_ rate: Double) async throws -> CastdMediaStatus {
        try await withLoadedMedia(
            type: "SET_PLAYBACK_RATE", replacing: "playback rate", ["playbackRate": .number(rate)])
    }

    /// EDIT_TRACKS_INFO: the active tracks (nil leaves them) and the text track style (nil leaves it).
    public func editTracks(activeTrackIDs: [Int64]?, style: JSONValue?) async throws -> CastdMediaStatus {
        var fields: [String: JSONValue] = [:]
        if let activeTrackIDs { fields["activeTrackIds"] = .array(activeTrackIDs.map { .number(Double($0)) }) }
        if let style { fields["textTrackStyle"] = style }
        return try await withLoadedMedia(type: "EDIT_TRACKS_INFO", replacing: "tracks", fields) { [name] status in
            guard let activeTrackIDs else { return }
            let known = Set(status.media.tracks.map(\.trackID))
            let unknown = activeTrackIDs.filter { !known.contains($0) }
            if !unknown.isEmpty {
                let list =
                    known.isEmpty
                    ? "it has no tracks" : "its tracks are \(known.sorted().map(String.init).joined(separator: ", "))"
                throw CastdError(
                    .invalidArgument,
                    "no track \(unknown.map(String.init).joined(separator: ", ")) in the media on \(name); \(list)")
            }
        }
    }

    /// The stream's volume (SET_VOLUME on the media namespace).
    public func setStreamVolume(level: Double?, muted: Bool?) async throws -> CastdMediaStatus {
        try await withLoadedMedia(
            type: "SET_VOLUME", replacing: "stream volume", ["volume": CastVolume(level: level, muted: muted).json])
    }

    // MARK: queue

    public func queueInsert(items: [JSONValue], before: Int64, playNow: Bool) async throws -> CastdMediaStatus {
        var fields: [String: JSONValue] = ["items": .array(items)]
        if before != 0 { fields["insertBefore"] = .number(Double(before)) }
        if playNow { fields["currentItemIndex"] = 0 }
        return try await withLoadedMedia(type: "QUEUE_INSERT", fields) { status in
            if before != 0 { try self.checkItems([before], in: status) }
        }
    }

    public func queueRemove(itemIDs: [Int64]) async throws -> CastdMediaStatus {
        try await withLoadedMedia(type: "QUEUE_REMOVE", ["itemIds": Self.ids(itemIDs)]) { status in
            try self.checkItems(itemIDs, in: status)
        }
    }

    public func queueReorder(itemIDs: [Int64], before: Int64) async throws -> CastdMediaStatus {
        var fields: [String: JSONValue] = ["itemIds": Self.ids(itemIDs)]
        if before != 0 { fields["insertBefore"] = .number(Double(before)) }
        return try await withLoadedMedia(type: "QUEUE_REORDER", fields) { status in
            try self.checkItems(itemIDs + (before != 0 ? [before] : []), in: status)
        }
    }

    /// QUEUE_UPDATE: jump to an item or by an offset, change the repeat mode, update items.
    public func queueUpdate(
        currentItemID: Int64, jump: Int32, repeatMode: CastdRepeatMode?, items: [JSONValue], itemIDs: [Int64],
        currentTime: Double
    ) async throws -> CastdMediaStatus {
        var fields: [String: JSONValue] = [:]
        if currentItemID != 0 { fields["currentItemId"] = .number(Double(currentItemID)) }
        if jump != 0 { fields["jump"] = .number(Double(jump)) }
        if let repeatMode { fields["repeatMode"] = .string(repeatMode.castValue) }
        if !items.isEmpty { fields["items"] = .array(items) }
        if currentTime > 0 { fields["currentTime"] = .number(currentTime) }
        let moves = currentItemID != 0 || jump != 0
        return try await withLoadedMedia(type: "QUEUE_UPDATE", replacing: moves ? "queue jump" : nil, fields) {
            [name] status in
            try self.checkItems(itemIDs + (currentItemID != 0 ? [currentItemID] : []), in: status)
            if jump != 0, !status.items.isEmpty {
                let order = status.items.map(\.itemID)
                if let index = order.firstIndex(of: status.currentItemID), status.repeatMode == .off {
                    let target = index + Int(jump)
                    if target < 0 || target >= order.count {
                        throw CastdError(
                            .outOfRange,
                            "no \(jump > 0 ? "next" : "previous") item in the queue on \(name) (item \(index + 1) of \(order.count), repeat off)"
                        )
                    }
                }
            }
        }
    }

    private nonisolated func checkItems(_ itemIDs: [Int64], in status: CastdMediaStatus) throws {
        let known = Set(status.items.map(\.itemID))
        guard !known.isEmpty else { return }  // the device did not list its queue: let it judge
        let unknown = itemIDs.filter { !known.contains($0) }
        if !unknown.isEmpty {
            throw CastdError(
                .invalidArgument,
                "no item \(unknown.map(String.init).joined(separator: ", ")) in the queue (items: \(known.sorted().map(String.init).joined(separator: ", ")))"
            )
        }
    }

    // MARK: requests about the loaded media

    /// Sends a request about the loaded media. `check` may refuse it first, from the media
    /// status castd holds. A stale media session id is answered by refreshing the status and
    /// retrying once.
    private func withLoadedMedia(
        type: String, replacing kind: String? = nil, _ fields: [String: JSONValue] = [:],
        check: (CastdMediaStatus) throws -> Void = { _ in }
    ) async throws -> CastdMediaStatus {
        do {
            guard let session else {
                throw CastdError(
                    .failedPrecondition, "there is no session on \(name); load something first (castc load URL)")
            }
            let link = try await link()
            guard let status = hub.media(deviceID: id), status.mediaSessionID != 0, lastEntry != nil else {
                if type == "GET_STATUS" {
                    let reply = try await link.requestReply(
                        namespace: CastNamespace.media, destination: session.transportID
                    ) {
                        MediaRequest.make("GET_STATUS", requestID: $0)
                    }
                    applyMedia(reply)
                    return currentMedia()
                }
                throw CastdError(
                    .failedPrecondition, "nothing is loaded on \(name); load something first (castc load URL)")
            }
            try check(status)
            mediaLogger.debug("\(type)", metadata: ["media.session": "\(status.mediaSessionID)"])
            let send = { (mediaSessionID: Int64) async throws -> CastReply in
                let make: @Sendable (Int64) -> JSONValue = {
                    MediaRequest.make(type, requestID: $0, mediaSessionID: mediaSessionID, fields)
                }
                if let kind {
                    return try await self.replacing(
                        kind, on: link, namespace: CastNamespace.media, destination: session.transportID, make)
                }
                return try await link.requestReply(
                    namespace: CastNamespace.media, destination: session.transportID, make)
            }
            do {
                let reply = try await send(status.mediaSessionID)
                applyMedia(reply)
            } catch let error as CastChannelError where error.deviceError?.reason == "INVALID_MEDIA_SESSION_ID" {
                let refreshed = try await link.requestReply(
                    namespace: CastNamespace.media, destination: session.transportID
                ) {
                    MediaRequest.make("GET_STATUS", requestID: $0)
                }
                applyMedia(refreshed)
                guard let fresh = hub.media(deviceID: id), fresh.mediaSessionID != 0 else { throw error }
                let reply = try await send(fresh.mediaSessionID)
                applyMedia(reply)
            }
            return currentMedia()
        } catch {
            throw Self.map(error, device: name)
        }
    }

    func currentMedia() -> CastdMediaStatus {
        hub.media(deviceID: id)
            ?? {
                var empty = CastdMediaStatus()
                empty.deviceID = id
                empty.playerState = .idle
                return empty
            }()
    }

    private static func ids(_ ids: [Int64]) -> JSONValue { .array(ids.map { .number(Double($0)) }) }

    static func seconds(_ value: Double) -> String {
        value.rounded() == value ? "\(Int(value)) s" : String(format: "%.1f s", value)
    }

    // MARK: device volume

    /// Device volume: a level, mute, or `steps` of the device's step interval (the volume buttons).
    public func setVolume(level: Double?, muted: Bool?, steps: Int32 = 0) async throws -> CastdVolume {
        do {
            let link = try await link()
            let current: CastVolume
            if let volume = receiver?.volume {
                current = volume
            } else {
                current = try await refreshReceiver(link).volume ?? CastVolume()
            }
            var level = level
            if steps != 0 || level != nil, current.controlType == "fixed" {
                throw CastdError(.failedPrecondition, "\(name) has a fixed volume; only mute can change")
            }
            if steps != 0 {
                let step = current.stepInterval.flatMap { $0 > 0 ? $0 : nil } ?? 0.05
                level = min(1, max(0, (current.level ?? 0) + Double(steps) * step))
            }
            let requested = level
            let reply = try await replacing(
                "volume", on: link, namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
            ) { ReceiverRequest.setVolume(level: requested, muted: muted, requestID: $0) }
            let status = applyReceiver(reply)
            return CastdVolume(status.volume ?? CastVolume())
        } catch {
            throw Self.map(error, device: name)
        }
    }
}
