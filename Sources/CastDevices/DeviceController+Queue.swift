import CastProtocol
import CastSenderLink
import CastdAPI

/// The whole queue (the sender SDK's media queue): its order and its items, asked of the device
/// when MEDIA_STATUS leaves them out, and the device's QUEUE_CHANGE announcements applied to it.
extension DeviceController {
    /// A QUEUE_CHANGE from the session's app.
    func applyQueueChange(_ change: CastQueueChange, arrival: UInt64? = nil) {
        let (changes, status) = mediaState.applyQueueChange(change, arrival: arrival)
        publishQueue(changes, status: status)
        askQueueOrderIfWanted()
    }

    /// Publishes queue changes with the device's id and the media session's.
    private func publishQueue(_ changes: [MediaQueue.Change], status: CastdMediaStatus?) {
        guard !changes.isEmpty || status != nil else { return }
        let mediaSessionID = mediaState.queue.mediaSessionID ?? 0
        store.updateQueue(
            changes.map { change in
                var change = change
                change.deviceID = id
                change.mediaSessionID = mediaSessionID
                return change
            }, media: status)
    }

    /// The whole queue (GetQueue): the order, asked of the device if castd lacks it, and every
    /// item castd lacks, asked in batches, those nearest the current item first.
    public func queue() async throws -> Castd_V1_Queue {
        do {
            guard let session, let status = mediaState.status, status.mediaSessionID != 0 else {
                throw CastdError(
                    .failedPrecondition, "nothing is loaded on \(name); load something first (castc load URL)")
            }
            let link = try await link()
            // An answer the device sent before a change it announced is not used: asked again.
            for _ in 0..<4 where mediaState.queue.order == nil || mediaState.queue.wantsOrder {
                try await askQueueOrder(on: link, transportID: session.transportID, of: status.mediaSessionID)
            }
            // Each batch asks for items not yet asked (those the device leaves out are not asked
            // again), so this ends; the bound is for a queue that keeps changing meanwhile.
            for _ in 0..<(2 * MediaQueue.maximumItems / MediaQueue.batch) {
                guard let mediaSessionID = mediaState.queue.mediaSessionID else { break }
                let wanted = mediaState.queue.missing(around: mediaState.status?.currentItemID)
                guard !wanted.isEmpty else { break }
                let reply = try await link.requestReply(
                    namespace: CastNamespace.media, destination: session.transportID
                ) {
                    MediaRequest.queueGetItems(itemIDs: wanted).payload(requestID: $0, mediaSessionID: mediaSessionID)
                }
                mediaState.storeQueueItems(
                    CastQueueItems(json: reply.payload).items ?? [], asked: wanted, of: mediaSessionID,
                    arrival: reply.arrival)
            }
            return mediaState.queueAPI
        } catch {
            throw Self.map(error, device: name)
        }
    }

    /// QUEUE_GET_ITEM_IDS, and the order it gives applied (what changed is published).
    func askQueueOrder(on link: CastLink, transportID: String, of mediaSessionID: Int64) async throws {
        do {
            let reply = try await link.requestReply(namespace: CastNamespace.media, destination: transportID) {
                MediaRequest.queueGetItemIDs.payload(requestID: $0, mediaSessionID: mediaSessionID)
            }
            let (changes, status) = mediaState.setQueueOrder(
                CastQueueItemIDs(json: reply.payload).itemIDs ?? [], of: mediaSessionID, arrival: reply.arrival)
            publishQueue(changes, status: status)
        } catch {
            mediaState.queueOrderRefused()
            throw error
        }
    }

    /// Asks for the order in the background when castd wants it (a queue of several items
    /// appeared, or a change did not fit the order castd held), one request at a time.
    func askQueueOrderIfWanted() {
        guard mediaState.queue.wantsOrder, !queueOrderPending, let session,
            let mediaSessionID = mediaState.queue.mediaSessionID
        else { return }
        queueOrderPending = true
        let transportID = session.transportID
        spawn { [weak self] in
            await self?.askQueueOrderInBackground(transportID: transportID, of: mediaSessionID)
        }
    }

    private func askQueueOrderInBackground(transportID: String, of mediaSessionID: Int64) async {
        do {
            if case .connected(let link) = keeper.phase {
                try await askQueueOrder(on: link, transportID: transportID, of: mediaSessionID)
            } else {
                mediaState.queueOrderRefused()
            }
        } catch {
            mediaLogger.notice(
                "could not get the queue's order from the device", metadata: ["error": "\(Self.describe(error))"])
        }
        // Done: an answer that came before a change the device announced is asked for again.
        queueOrderPending = false
        askQueueOrderIfWanted()
    }
}
