import CastSenderLink
import CastProtocol
import CastdAPI
import Foundation

/// The remote media client: LOAD, playback control, tracks, ad breaks, queue, volume.
extension DeviceController {
    /// The session's media endpoint, starting the default app (castd's launch defaults; else
    /// the Default Media Receiver) if the session's app has no media player (or there is no
    /// session).
    private func mediaSession() async throws -> (CastLink, CastdSession) {
        if let session, session.namespaces.contains(CastNamespace.media) {
            return (try await link(), session)
        }
        let session = try await startSession(launchDefaults.mediaSession)
        return (try await link(), session)
    }

    /// Sends a media request (a LOAD or QUEUE_LOAD starts the media session; the others are
    /// about the loaded media, and the media controller may refuse them first) and returns the
    /// media status after the device's answer.
    public func media(_ request: MediaRequest) async throws -> CastdMediaStatus {
        switch request {
        case .load, .queueLoad:
            return try await startMedia(request)
        default:
            return try await withLoadedMedia(request)
        }
    }

    private func startMedia(_ request: MediaRequest) async throws -> CastdMediaStatus {
        do {
            let (link, session) = try await mediaSession()
            if case .queueLoad(let load) = request, let split = try QueueLoadSplit(load) {
                return try await loadQueue(split, on: link, session: session)
            }
            mediaLogger.info(
                "\(request.type)", metadata: ["media.content": "\(LogRedaction.url(request.contentID ?? ""))"])
            let reply = try await link.requestReply(namespace: CastNamespace.media, destination: session.transportID) {
                request.payload(requestID: $0)
            }
            applyMedia(reply)
            return mediaState.current
        } catch {
            throw Self.map(error, device: name)
        }
    }

    // MARK: requests about the loaded media

    /// Sends a request about the loaded media, once the media controller has judged it against
    /// the status castd holds. A stale media session id is answered by refreshing the status and
    /// retrying once.
    private func withLoadedMedia(_ request: MediaRequest) async throws -> CastdMediaStatus {
        let kind = MediaController.supersedingKind(of: request)
        do {
            guard let session else {
                throw CastdError(
                    .failedPrecondition, "there is no session on \(name); load something first (castc load URL)")
            }
            let link = try await link()
            guard let status = mediaState.status, status.mediaSessionID != 0 else {
                if request == .getStatus {
                    let reply = try await link.requestReply(
                        namespace: CastNamespace.media, destination: session.transportID
                    ) {
                        MediaRequest.getStatus.payload(requestID: $0)
                    }
                    applyMedia(reply)
                    return mediaState.current
                }
                throw CastdError(
                    .failedPrecondition, "nothing is loaded on \(name); load something first (castc load URL)")
            }
            if MediaController.namesQueueItems(request), mediaState.queue.order == nil {
                // Judged against the whole queue: asked for first (a device that will not say
                // judges the request itself).
                try? await askQueueOrder(on: link, transportID: session.transportID, of: status.mediaSessionID)
            }
            try MediaController.check(
                request, against: status, queueOrder: mediaState.queue.order, deviceName: name)
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
            } catch let error as CastLinkError where error.deviceError?.isStaleMediaSession == true {
                let refreshed = try await link.requestReply(
                    namespace: CastNamespace.media, destination: session.transportID
                ) {
                    MediaRequest.getStatus.payload(requestID: $0)
                }
                applyMedia(refreshed)
                guard let fresh = mediaState.status, fresh.mediaSessionID != 0 else { throw error }
                let reply = try await send(fresh.mediaSessionID)
                applyMedia(reply)
            }
            return mediaState.current
        } catch {
            throw Self.map(error, device: name)
        }
    }

    // MARK: device volume

    /// Device volume: a level, mute, or `steps` of the device's step interval (the volume buttons).
    public func setVolume(level: Double?, muted: Bool?, steps: Int32 = 0) async throws -> CastdVolume {
        do {
            let link = try await link()
            let current: CastVolume
            if let volume = receiverState.status?.volume {
                current = volume
            } else {
                current = try await refreshReceiver(link).volume ?? CastVolume()
            }
            var level = level
            if steps != 0 || level != nil, current.control == .fixed {
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
