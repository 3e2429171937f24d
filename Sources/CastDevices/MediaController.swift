import CastProtocol
import CastSenderLink
import CastdAPI
import Logging

/// Where an app on a device takes a namespace's requests: the device's link and the app's
/// transport id.
struct AppEndpoint: Sendable {
    let link: CastLink
    let transportID: String
}

/// The media namespace of one device: the sender SDK's remote media client (pychromecast's
/// MediaController). It sends the namespace's requests, waits for their replies and applies
/// them, reads what the app broadcasts (MEDIA_STATUS, QUEUE_CHANGE), and publishes what changed
/// to the state store. What it knows is `MediaState`, the one source of what the device plays.
///
/// The device's controller owns it and keeps the session: it says where the app is
/// (`AppEndpoint`) and maps errors. Its isolation guards this object: the async methods run on
/// the controller's executor (`nonisolated(nonsending)`), so nothing crosses between them.
final class MediaController {
    private(set) var state: MediaState
    private let store: CastdStateStore
    private let superseding: SupersedingRequests
    let logger: Logger
    /// A QUEUE_GET_ITEM_IDS castd sent by itself is on its way (one at a time).
    private var orderAskPending = false

    init(deviceID: String, store: CastdStateStore, superseding: SupersedingRequests, logger: Logger) {
        self.state = MediaState(deviceID: deviceID, logger: logger)
        self.store = store
        self.superseding = superseding
        self.logger = logger
    }

    // MARK: what the app says

    /// Applies a MEDIA_STATUS payload (a reply or a broadcast) and publishes what changed.
    func receive(_ payload: JSONValue, arrival: UInt64? = nil) {
        if let status = state.apply(payload, arrival: arrival) { store.updateMedia(status) }
    }

    /// Applies a reply's MEDIA_STATUS.
    func receive(_ reply: CastReply) {
        receive(reply.payload, arrival: reply.arrival)
    }

    /// A QUEUE_CHANGE from the session's app.
    func receiveQueueChange(_ change: CastQueueChange, arrival: UInt64? = nil) {
        let (changes, status) = state.applyQueueChange(change, arrival: arrival)
        publishQueue(changes, status: status)
    }

    /// Forgets the media and tells every watcher nothing is loaded.
    func clear() {
        store.updateMedia(state.clear())
    }

    /// A new link counts its messages from 1.
    func linkChanged() { state.linkChanged() }

    /// The media last seen playing, if recent, taken (a session that vanished while playing).
    func takeActiveMedia() -> CastMediaInformation? { state.takeActiveMedia() }

    // MARK: requests

    /// LOAD or QUEUE_LOAD (a queue too long for one message as a QUEUE_LOAD and QUEUE_INSERTs),
    /// to the app at `app`; returns the media status after the device's answer.
    nonisolated(nonsending) func load(
        _ request: MediaRequest, at app: AppEndpoint, device: String
    ) async throws -> CastdMediaStatus {
        if case .queueLoad(let load) = request, let split = try QueueLoadSplit(load) {
            return try await loadQueue(split, at: app)
        }
        // (A start past a duration the LOAD gives was refused before: CastdValidation.load.)
        let start: Double? = if case .load(let load) = request, load.currentTime > 0 { load.currentTime } else { nil }
        logger.info("\(request.type)", metadata: ["media.content": "\(LogRedaction.url(request.contentID ?? ""))"])
        receive(
            try await app.link.requestReply(namespace: CastNamespace.media, destination: app.transportID) {
                request.payload(requestID: $0)
            })
        // A start past an end the device learnt of only once it loaded (it finished at once, or
        // stands at the end): the same OUT_OF_RANGE, with the range it has.
        let status = state.current
        if let start, status.media.streamType != .live, status.media.duration > 0, start > status.media.duration + 0.001
        {
            throw startOutOfRange(start, duration: status.media.duration, device: device)
        }
        return status
    }

    /// The rule for positions (``MediaState/checkPosition(_:in:deviceName:)``) for a load's start.
    private func startOutOfRange(_ start: Double, duration: Double, device: String) -> CastdError {
        CastdError(
            .outOfRange,
            "cannot start at \(MediaState.seconds(start)) in the media on \(device): it runs from 0 s to \(MediaState.seconds(duration))"
        )
    }

    /// A request about the loaded media, once judged against the status castd holds (the queue's
    /// order asked for first when the request names items). A stale media session id is
    /// answered by refreshing the status and retrying once. `device` names the device in errors.
    nonisolated(nonsending) func send(
        _ request: MediaRequest, at app: AppEndpoint, device: String
    ) async throws -> CastdMediaStatus {
        guard let status = state.status, status.mediaSessionID != 0 else {
            if request == .getStatus {
                receive(try await getStatus(at: app))
                return state.current
            }
            throw CastdError(
                .failedPrecondition, "nothing is loaded on \(device); load something first (castc load URL)")
        }
        if MediaState.namesQueueItems(request), state.queue.order == nil {
            // Judged against the whole queue: asked for first (a device that will not say
            // judges the request itself).
            try? await askQueueOrder(at: app, of: status.mediaSessionID)
        }
        try MediaState.check(request, against: status, queueOrder: state.queue.order, deviceName: device)
        logger.debug("\(request.type)", metadata: ["media.session": "\(status.mediaSessionID)"])
        let kind = MediaState.supersedingKind(of: request)
        let superseding = self.superseding
        let send = { (mediaSessionID: Int64) async throws -> CastReply in
            let make: @Sendable (Int64) -> JSONValue = {
                request.payload(requestID: $0, mediaSessionID: mediaSessionID)
            }
            if let kind {
                return try await superseding.send(
                    kind, device: device, on: app.link, namespace: CastNamespace.media, destination: app.transportID,
                    make)
            }
            return try await app.link.requestReply(
                namespace: CastNamespace.media, destination: app.transportID, make)
        }
        do {
            receive(try await send(status.mediaSessionID))
        } catch let error as CastLinkError where error.deviceError?.isStaleMediaSession == true {
            receive(try await getStatus(at: app))
            guard let fresh = state.status, fresh.mediaSessionID != 0 else { throw error }
            receive(try await send(fresh.mediaSessionID))
        }
        return state.current
    }

    /// GET_STATUS of the app at `app`, its answer not applied (``receive(_:)`` applies it).
    nonisolated(nonsending) func getStatus(at app: AppEndpoint) async throws -> CastReply {
        try await app.link.requestReply(namespace: CastNamespace.media, destination: app.transportID) {
            MediaRequest.getStatus.payload(requestID: $0)
        }
    }

    /// Loads a queue too large for one message: the QUEUE_LOAD, then each QUEUE_INSERT, each
    /// awaited before the next (the device numbers the items in the order it gets them).
    private nonisolated(nonsending) func loadQueue(_ split: QueueLoadSplit, at app: AppEndpoint) async throws
        -> CastdMediaStatus
    {
        let total = split.loaded.count + split.after.joined().count + split.before.joined().count
        logger.info(
            "QUEUE_LOAD of \(total) items, in \(1 + split.after.count + split.before.count) messages",
            metadata: ["media.content": "\(LogRedaction.url(MediaRequest.queueLoad(split.load).contentID ?? ""))"])
        receive(
            try await app.link.requestReply(namespace: CastNamespace.media, destination: app.transportID) {
                MediaRequest.queueLoad(split.load).payload(requestID: $0)
            })
        guard let status = state.status, status.mediaSessionID != 0 else {
            throw QueueLoadStopped.endedTheSession(loaded: split.loaded.count)
        }
        // The item loaded first is the one to play first when items come before it.
        let firstLoaded = status.currentItemID
        if !split.before.isEmpty, firstLoaded <= 0 { throw QueueLoadStopped.noCurrentItem }
        let inserts =
            split.after.map { MediaRequest.queueInsert(items: $0, before: nil, playNow: false) }
            + split.before.map { MediaRequest.queueInsert(items: $0, before: firstLoaded, playNow: false) }
        for insert in inserts {
            let mediaSessionID = state.status?.mediaSessionID ?? status.mediaSessionID
            receive(
                try await app.link.requestReply(namespace: CastNamespace.media, destination: app.transportID) {
                    insert.payload(requestID: $0, mediaSessionID: mediaSessionID)
                })
        }
        return state.current
    }

    /// Why a queue load in several messages stopped; the device's controller words it with the
    /// device's name.
    enum QueueLoadStopped: Error {
        case endedTheSession(loaded: Int)
        case noCurrentItem
    }

    // MARK: the whole queue

    /// The whole queue (GetQueue): the order, asked of the device if castd lacks it, and every
    /// item castd lacks, asked in batches, those nearest the current item first.
    nonisolated(nonsending) func queue(at app: AppEndpoint, of mediaSessionID: Int64) async throws -> Castd_V1_Queue {
        // An answer the device sent before a change it announced is not used: asked again.
        for _ in 0..<4 where state.queue.order == nil || state.queue.wantsOrder {
            try await askQueueOrder(at: app, of: mediaSessionID)
        }
        // Each batch asks for items not yet asked (those the device leaves out are not asked
        // again), so this ends; the bound is for a queue that keeps changing meanwhile.
        for _ in 0..<(2 * MediaQueue.maximumItems / MediaQueue.batch) {
            guard let mediaSessionID = state.queue.mediaSessionID else { break }
            let wanted = state.queue.missing(around: state.status?.currentItemID)
            guard !wanted.isEmpty else { break }
            let reply = try await app.link.requestReply(namespace: CastNamespace.media, destination: app.transportID) {
                MediaRequest.queueGetItems(itemIDs: wanted).payload(requestID: $0, mediaSessionID: mediaSessionID)
            }
            state.storeQueueItems(
                CastQueueItems(json: reply.payload).items ?? [], asked: wanted, of: mediaSessionID,
                arrival: reply.arrival)
        }
        return state.queueAPI
    }

    /// QUEUE_GET_ITEM_IDS, and the order it gives applied (what changed is published).
    nonisolated(nonsending) func askQueueOrder(at app: AppEndpoint, of mediaSessionID: Int64) async throws {
        do {
            let reply = try await app.link.requestReply(namespace: CastNamespace.media, destination: app.transportID) {
                MediaRequest.queueGetItemIDs.payload(requestID: $0, mediaSessionID: mediaSessionID)
            }
            let (changes, status) = state.setQueueOrder(
                CastQueueItemIDs(json: reply.payload).itemIDs ?? [], of: mediaSessionID, arrival: reply.arrival)
            publishQueue(changes, status: status)
        } catch {
            state.queueOrderRefused()
            throw error
        }
    }

    /// No link to ask on: castd stops wanting the order until the queue changes again.
    func queueOrderUnavailable() { state.queueOrderRefused() }

    /// The media session whose queue order castd wants asked for in the background (a queue of
    /// several items appeared, or a change did not fit the order castd held), if no such ask is
    /// on its way: the device's controller then asks (`askQueueOrder(at:of:)`) and calls
    /// `orderAsked()`. One at a time.
    func queueOrderToAsk() -> Int64? {
        guard state.queue.wantsOrder, !orderAskPending, let mediaSessionID = state.queue.mediaSessionID else {
            return nil
        }
        orderAskPending = true
        return mediaSessionID
    }

    /// The background ask is done (an answer that came before a change the device announced is
    /// asked for again: see `queueOrderToAsk()`).
    func orderAsked() { orderAskPending = false }

    /// Publishes queue changes with the device's id and the media session's.
    private func publishQueue(_ changes: [MediaQueue.Change], status: CastdMediaStatus?) {
        guard !changes.isEmpty || status != nil else { return }
        let mediaSessionID = state.queue.mediaSessionID ?? 0
        let deviceID = state.deviceID
        store.updateQueue(
            changes.map { change in
                var change = change
                change.deviceID = deviceID
                change.mediaSessionID = mediaSessionID
                return change
            }, media: status)
    }
}
