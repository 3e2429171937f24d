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
        defer { askQueueOrderIfWanted() }
        do {
            switch request {
            case .load, .queueLoad:
                let (link, session) = try await mediaSession()
                return try await media.load(request, at: AppEndpoint(link: link, transportID: session.transportID))
            default:
                guard let session else {
                    throw CastdError(
                        .failedPrecondition, "there is no session on \(name); load something first (castc load URL)")
                }
                let app = AppEndpoint(link: try await link(), transportID: session.transportID)
                return try await media.send(request, at: app, device: name)
            }
        } catch MediaController.QueueLoadStopped.endedTheSession(let loaded) {
            throw CastdError(
                .unavailable, "\(name) loaded the queue's first \(loaded) items and ended the media session")
        } catch MediaController.QueueLoadStopped.noCurrentItem {
            throw CastdError(.unavailable, "\(name) did not say which item plays: the items before it were not added")
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
            let reply = try await superseding.send(
                "volume", device: name, on: link, namespace: CastNamespace.receiver,
                destination: CastWire.platformReceiverID
            ) { ReceiverRequest.setVolume(level: requested, muted: muted, requestID: $0) }
            let status = applyReceiver(reply)
            return CastdVolume(status.volume ?? CastVolume())
        } catch {
            throw Self.map(error, device: name)
        }
    }
}
