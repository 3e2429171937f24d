import CastSenderLink
import CastProtocol
import CastdAPI
import Foundation

/// The remote media client: LOAD, playback control, tracks, ad breaks, the queue (and its
/// order, asked in the background when castd wants it); device volume.
extension DeviceController {
    /// The session's media endpoint, starting the default app (castd's launch defaults; else
    /// the Default Media Receiver) if the session's app has no media player (or there is no
    /// session).
    private func mediaSession() async throws -> AppEndpoint {
        if let session = sessions.session, session.namespaces.contains(CastNamespace.media) {
            return AppEndpoint(link: try await link(), transportID: session.transportID)
        }
        let session = try await startSession(launchDefaults.mediaSession)
        return AppEndpoint(link: try await link(), transportID: session.transportID)
    }

    /// Sends a media request (a LOAD or QUEUE_LOAD starts the media session; the others are
    /// about the loaded media, and the media controller may refuse them first) and returns the
    /// media status after the device's answer.
    public func media(_ request: MediaRequest) async throws -> CastdMediaStatus {
        defer { askQueueOrderIfWanted() }
        do {
            switch request {
            case .load, .queueLoad:
                return try await media.load(request, at: mediaSession(), device: name)
            default:
                guard let session = sessions.session else {
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
            throw DeviceFailure.castdError(error, device: name, ask: .media(request))
        }
    }

    // MARK: device volume

    /// Device volume: a level, mute, or `steps` of the device's step interval (the volume buttons).
    public func setVolume(level: Double?, muted: Bool?, steps: Int32 = 0) async throws -> CastdVolume {
        do {
            let link = try await link()
            return CastdVolume(
                try await receiver.setVolume(level: level, muted: muted, steps: steps, device: name, on: link))
        } catch {
            throw DeviceFailure.castdError(error, device: name, ask: .volume)
        }
    }

    // MARK: the queue

    /// The whole queue (GetQueue): the order, asked of the device if castd lacks it, and every
    /// item castd lacks.
    public func queue() async throws -> Castd_V1_Queue {
        defer { askQueueOrderIfWanted() }
        do {
            guard let session = sessions.session, let status = media.state.status, status.mediaSessionID != 0 else {
                throw CastdError(
                    .failedPrecondition, "nothing is loaded on \(name); load something first (castc load URL)")
            }
            let app = AppEndpoint(link: try await link(), transportID: session.transportID)
            return try await media.queue(at: app, of: status.mediaSessionID)
        } catch {
            throw DeviceFailure.castdError(error, device: name, ask: .media(.queueGetItemIDs))
        }
    }

    /// Asks for the queue's order in the background when the media controller wants it, one
    /// request at a time, on the link castd has (none: not asked until the queue changes again).
    func askQueueOrderIfWanted() {
        guard let session = sessions.session, let mediaSessionID = media.queueOrderToAsk() else { return }
        let transportID = session.transportID
        spawn { [weak self] in
            await self?.askQueueOrderInBackground(transportID: transportID, of: mediaSessionID)
        }
    }

    private func askQueueOrderInBackground(transportID: String, of mediaSessionID: Int64) async {
        do {
            if case .connected(let link) = keeper.phase {
                try await media.askQueueOrder(at: AppEndpoint(link: link, transportID: transportID), of: mediaSessionID)
            } else {
                media.queueOrderUnavailable()
            }
        } catch {
            mediaLogger.notice(
                "could not get the queue's order from the device",
                metadata: ["error": "\(DeviceFailure.describe(error))"])
        }
        // Done: an answer that came before a change the device announced is asked for again.
        media.orderAsked()
        askQueueOrderIfWanted()
    }
}
