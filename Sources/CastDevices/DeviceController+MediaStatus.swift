import CastProtocol
import CastSenderLink
import CastdAPI

/// The media namespace's messages, given to the media controller; and the queue's order, which
/// castd asks for in the background when it wants it.
extension DeviceController {
    /// Applies a MEDIA_STATUS payload (a reply or a broadcast).
    func applyMedia(_ payload: JSONValue, arrival: UInt64? = nil) {
        media.receive(payload, arrival: arrival)
        askQueueOrderIfWanted()
    }

    /// Applies the MEDIA_STATUS a reply carries, in its place in the link's order.
    func applyMedia(_ reply: CastReply) {
        applyMedia(reply.payload, arrival: reply.arrival)
    }

    /// A QUEUE_CHANGE from the session's app.
    func applyQueueChange(_ change: CastQueueChange, arrival: UInt64? = nil) {
        media.receiveQueueChange(change, arrival: arrival)
        askQueueOrderIfWanted()
    }

    /// Forgets the media and tells every watcher nothing is loaded.
    func clearMedia() {
        media.clear()
    }

    /// The whole queue (GetQueue): the order, asked of the device if castd lacks it, and every
    /// item castd lacks.
    public func queue() async throws -> Castd_V1_Queue {
        defer { askQueueOrderIfWanted() }
        do {
            guard let session, let status = media.state.status, status.mediaSessionID != 0 else {
                throw CastdError(
                    .failedPrecondition, "nothing is loaded on \(name); load something first (castc load URL)")
            }
            let app = AppEndpoint(link: try await link(), transportID: session.transportID)
            return try await media.queue(at: app, of: status.mediaSessionID)
        } catch {
            throw Self.map(error, device: name)
        }
    }

    /// Asks for the queue's order in the background when the media controller wants it, one
    /// request at a time, on the link castd has (none: not asked until the queue changes again).
    func askQueueOrderIfWanted() {
        guard let session, let mediaSessionID = media.queueOrderToAsk() else { return }
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
                "could not get the queue's order from the device", metadata: ["error": "\(Self.describe(error))"])
        }
        // Done: an answer that came before a change the device announced is asked for again.
        media.orderAsked()
        askQueueOrderIfWanted()
    }
}
