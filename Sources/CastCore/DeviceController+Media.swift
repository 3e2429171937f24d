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

    /// Sends a media request (a LOAD or QUEUE_LOAD starts the media session; the others are
    /// about the loaded media) and returns the media status after the device's answer.
    public func media(_ request: MediaRequest) async throws -> CastdMediaStatus {
        switch request {
        case .load, .queueLoad:
            return try await startMedia(request)
        case .seek(let position, let relative, _):
            return try await withLoadedMedia(request, replacing: "seek") { [name] status in
                let duration = status.media.duration
                guard duration > 0, status.media.streamType != .live else { return }
                let target = relative ? status.estimatedPosition() + position : position
                if target > duration + 0.001 {
                    throw CastdError(
                        .invalidArgument,
                        "cannot seek to \(Self.seconds(target)): the media on \(name) is \(Self.seconds(duration)) long"
                    )
                }
            }
        case .setPlaybackRate:
            return try await withLoadedMedia(request, replacing: "playback rate")
        case .editTracks(let activeTrackIDs, _):
            return try await withLoadedMedia(request, replacing: "tracks") { [name] status in
                guard let activeTrackIDs else { return }
                let known = Set(status.media.tracks.map(\.trackID))
                let unknown = activeTrackIDs.filter { !known.contains($0) }
                if !unknown.isEmpty {
                    let list =
                        known.isEmpty
                        ? "it has no tracks"
                        : "its tracks are \(known.sorted().map(String.init).joined(separator: ", "))"
                    throw CastdError(
                        .invalidArgument,
                        "no track \(unknown.map(String.init).joined(separator: ", ")) in the media on \(name); \(list)")
                }
            }
        case .setStreamVolume:
            return try await withLoadedMedia(request, replacing: "stream volume")
        case .queueInsert(_, let before, _):
            return try await withLoadedMedia(request) { status in
                if let before { try self.checkItems([before], in: status) }
            }
        case .queueRemove(let itemIDs):
            return try await withLoadedMedia(request) { status in
                try self.checkItems(itemIDs, in: status)
            }
        case .queueReorder(let itemIDs, let before):
            return try await withLoadedMedia(request) { status in
                try self.checkItems(itemIDs + (before.map { [$0] } ?? []), in: status)
            }
        case .queueUpdate(let update):
            return try await withLoadedMedia(request, replacing: update.moves ? "queue jump" : nil) {
                [name] status in
                try self.checkItems(update.itemIDs + (update.currentItemID.map { [$0] } ?? []), in: status)
                if let jump = update.jump, !status.items.isEmpty {
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
        case .getStatus, .play, .pause, .stop, .skipAd:
            return try await withLoadedMedia(request)
        }
    }

    private func startMedia(_ request: MediaRequest) async throws -> CastdMediaStatus {
        do {
            let (link, session) = try await mediaSession()
            mediaLogger.info(
                "\(request.type)", metadata: ["media.content": "\(LogRedaction.url(request.contentID ?? ""))"])
            let reply = try await link.requestReply(namespace: CastNamespace.media, destination: session.transportID) {
                request.payload(requestID: $0)
            }
            applyMedia(reply)
            return currentMedia()
        } catch {
            throw Self.map(error, device: name)
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
        _ request: MediaRequest, replacing kind: String? = nil, check: (CastdMediaStatus) throws -> Void = { _ in }
    ) async throws -> CastdMediaStatus {
        do {
            guard let session else {
                throw CastdError(
                    .failedPrecondition, "there is no session on \(name); load something first (castc load URL)")
            }
            let link = try await link()
            guard let status = hub.media(deviceID: id), status.mediaSessionID != 0, lastEntry != nil else {
                if request == .getStatus {
                    let reply = try await link.requestReply(
                        namespace: CastNamespace.media, destination: session.transportID
                    ) {
                        MediaRequest.getStatus.payload(requestID: $0)
                    }
                    applyMedia(reply)
                    return currentMedia()
                }
                throw CastdError(
                    .failedPrecondition, "nothing is loaded on \(name); load something first (castc load URL)")
            }
            try check(status)
            mediaLogger.debug("\(request.type)", metadata: ["media.session": "\(status.mediaSessionID)"])
            let send = { (mediaSessionID: Int64) async throws -> CastReply in
                let make: @Sendable (Int64) -> JSONValue = {
                    request.payload(requestID: $0, mediaSessionID: mediaSessionID)
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
                    MediaRequest.getStatus.payload(requestID: $0)
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
