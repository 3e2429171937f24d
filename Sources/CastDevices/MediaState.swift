import CastProtocol
import CastdAPI
import Foundation
import Logging

/// The media namespace of one device, as castd holds it: the one source of what the device
/// plays. It reads MEDIA_STATUS (a reply or a broadcast), merged across statuses that leave
/// fields out, and says what to publish; and it judges requests about the loaded media against
/// that status before they are sent. The device's controller owns it (its isolation guards it)
/// and does the sending and the publishing.
struct MediaState {
    let deviceID: String
    let logger: Logger

    /// The media status castd last published for this device; nil when nothing is loaded.
    private(set) var status: CastdMediaStatus?
    /// The last MEDIA_STATUS entry read: a repeat of it (a reply and its broadcast twin) is no
    /// news.
    private(set) var lastEntry: CastMediaStatus?
    /// What castd last knew of the loaded media (of the latest media session only: an app that
    /// starts a new media session with every status must not grow castd), and of queue items
    /// (at most ``itemMediaLimit``).
    private(set) var knownMedia: [Int64: CastMediaInformation] = [:]
    private(set) var itemMedia: [Int64: CastMediaInformation] = [:]
    /// The most queue items whose media castd keeps; past it, only the items the latest
    /// status names are kept.
    static let itemMediaLimit = 1024
    /// The last media seen playing, paused or buffering, and when.
    private var lastActiveMedia: (media: CastMediaInformation, at: ContinuousClock.Instant)?
    /// The `arrival` of the newest MEDIA_STATUS applied from the current link.
    private var appliedArrival: UInt64 = 0
    /// The media session's whole queue.
    private(set) var queue = MediaQueue()

    init(deviceID: String, logger: Logger) {
        self.deviceID = deviceID
        self.logger = logger
    }

    /// The status to answer a media request with: what is loaded, or an idle player.
    var current: CastdMediaStatus {
        status ?? Self.idle(deviceID)
    }

    /// A new link counts its messages from 1.
    mutating func linkChanged() {
        appliedArrival = 0
        queue.linkChanged()
    }

    // MARK: MEDIA_STATUS

    /// Reads a MEDIA_STATUS payload. With `arrival` (its place in the link's order), one older
    /// than a status already applied is skipped, as for RECEIVER_STATUS.
    ///
    /// - Returns: The status to publish, or nil when there is nothing new.
    mutating func apply(_ payload: JSONValue, arrival: UInt64? = nil) -> CastdMediaStatus? {
        if let arrival {
            guard arrival > appliedArrival else { return nil }
            appliedArrival = arrival
        }
        guard let entries = CastMediaStatus.read(payload) else {
            // Not "no media session" (that is `[]`): a status castd cannot read says nothing.
            logger.warning(
                "skipped a MEDIA_STATUS whose status cannot be read",
                metadata: ["payload": "\(String(payload.jsonString.prefix(120)))"])
            return nil
        }
        guard let entry = entries.first else {
            return lastEntry != nil ? clear() : nil
        }
        if entry == lastEntry { return nil }  // the reply and its broadcast twin
        lastEntry = entry
        let mediaSessionID = entry.mediaSessionID
        let currentItem = entry.currentItemID
        queue.follow(mediaSessionID: mediaSessionID)
        queue.read(statusItems: entry.items ?? [])
        for item in entry.items ?? [] {
            if let itemID = item.itemID, let media = item.media { itemMedia[itemID] = media }
        }
        var media: CastMediaInformation?
        if let sent = entry.media {
            media = sent
            if let currentItem { itemMedia[currentItem] = sent }
        } else if let currentItem, let known = itemMedia[currentItem] {
            media = known
        } else {
            media = knownMedia[mediaSessionID]
        }
        if let media { knownMedia = [mediaSessionID: media] }
        if itemMedia.count > Self.itemMediaLimit {
            // Item ids that keep changing: keep what this status names (bounded by the frame).
            var named = Set((entry.items ?? []).compactMap(\.itemID))
            if let currentItem { named.insert(currentItem) }
            itemMedia = itemMedia.filter { named.contains($0.key) }
        }
        if let media, entry.isActive {
            lastActiveMedia = (media, .now)
        }
        if entry.hasEnded, entry.items == nil {
            // The media session ended; its items are gone with it.
            itemMedia.removeAll()
        }
        var next = CastdMediaStatus(
            deviceID: deviceID, status: entry, media: media, itemMedia: itemMedia, receivedAt: Date())
        if let previous = status, previous.mediaSessionID == next.mediaSessionID {
            keepKnown(of: previous, unreadable: entry.unreadable, in: &next)
        }
        next.queueItemIds = queue.order ?? []
        status = next
        return next
    }

    // MARK: the whole queue

    /// A QUEUE_CHANGE from the device, for the media session castd holds.
    ///
    /// - Returns: What changed, and the status to publish with the queue's new order.
    mutating func applyQueueChange(_ change: CastQueueChange, arrival: UInt64? = nil) -> (
        changes: [MediaQueue.Change], status: CastdMediaStatus?
    ) {
        guard status != nil else { return ([], nil) }
        if let session = change.mediaSessionID, session != queue.mediaSessionID { return ([], nil) }
        let changes = queue.apply(change, arrival: arrival)
        return (changes, changes.isEmpty ? nil : withQueueOrder())
    }

    /// QUEUE_ITEM_IDS: the order of the media session `mediaSessionID` (if it is still the one).
    mutating func setQueueOrder(_ ids: [Int64], of mediaSessionID: Int64, arrival: UInt64? = nil) -> (
        changes: [MediaQueue.Change], status: CastdMediaStatus?
    ) {
        guard status != nil, mediaSessionID == queue.mediaSessionID else { return ([], nil) }
        let before = queue.order
        let changes = queue.setOrder(ids, arrival: arrival)
        return (changes, queue.order != before ? withQueueOrder() : nil)
    }

    /// The device would not give the queue's order.
    mutating func queueOrderRefused() {
        queue.orderRefused()
    }

    /// QUEUE_ITEMS: items asked for, of the media session `mediaSessionID`.
    mutating func storeQueueItems(
        _ items: [CastQueueItem], asked: [Int64], of mediaSessionID: Int64, arrival: UInt64? = nil
    ) {
        guard mediaSessionID == queue.mediaSessionID else { return }
        queue.store(items, asked: asked, arrival: arrival)
    }

    /// The queue as castd.v1 gives it.
    var queueAPI: Castd_V1_Queue {
        queue.api(deviceID: deviceID, currentItemID: status?.currentItemID ?? 0, knownMedia: itemMedia)
    }

    /// The status castd holds, with the queue's order as it now is.
    private mutating func withQueueOrder() -> CastdMediaStatus? {
        guard var current = status else { return nil }
        current.queueItemIds = queue.order ?? []
        status = current
        return current
    }

    /// Forgets the media (the session ended, the link dropped).
    ///
    /// - Returns: The idle status to publish.
    mutating func clear() -> CastdMediaStatus {
        lastEntry = nil
        status = nil
        knownMedia.removeAll()
        itemMedia.removeAll()
        queue.clear()
        return Self.idle(deviceID)
    }

    /// The media information of what was playing, paused or buffering when the app went away,
    /// if anything: the media still active, or active until moments ago (a receiver handing its
    /// session to another device ends the media, IDLE CANCELLED, just before its app stops).
    mutating func takeActiveMedia() -> CastMediaInformation? {
        defer { lastActiveMedia = nil }
        guard let (media, at) = lastActiveMedia, ContinuousClock.now - at < .seconds(5) else { return nil }
        if lastEntry?.endedByItself == true { return nil }
        return media
    }

    static func idle(_ deviceID: String) -> CastdMediaStatus {
        var empty = CastdMediaStatus()
        empty.deviceID = deviceID
        empty.playerState = .idle
        return empty
    }

    /// Fields of a MEDIA_STATUS entry that are there but cannot be read (`unreadable`: a
    /// `currentTime` that is an object, a volume level that is a word) are no news: `status`
    /// keeps what castd last published for the same media session, rather than a position or
    /// a volume of 0.
    private func keepKnown(
        of previous: CastdMediaStatus, unreadable: [CastStatusField], in status: inout CastdMediaStatus
    ) {
        guard !unreadable.isEmpty else { return }
        for field in unreadable {
            switch field {
            case .currentTime:
                status.currentTime = previous.currentTime
                status.updatedAtMs = previous.updatedAtMs  // the position as of then, not now
            case .playbackRate: status.playbackRate = previous.playbackRate
            case .volume: status.volume = previous.volume
            case .volumeLevel: status.volume.level = previous.volume.level
            case .volumeMuted: status.volume.muted = previous.volume.muted
            case .applications: break
            }
        }
        logger.warning(
            "the device's MEDIA_STATUS has fields that cannot be read; kept what castd knew of them",
            metadata: ["fields": "\(unreadable.map(\.rawValue).joined(separator: ", "))"])
    }

    // MARK: requests about the loaded media

    /// Refuses `request` when the loaded media, as `status` says, makes it impossible: nothing
    /// loaded (the player idle), an ad that cannot be skipped yet, a position outside the media,
    /// a track or a queue item that is not there, a jump past either end of a queue that does
    /// not repeat. Queue items are judged against the whole queue's order (`queueOrder`,
    /// ``MediaQueue``), never against the few items a status carries; what castd does not know
    /// (an order it has not been given) it leaves to the device.
    static func check(
        _ request: MediaRequest, against status: CastdMediaStatus, queueOrder order: [Int64]?, deviceName name: String
    ) throws {
        if status.playerState == .idle, needsLoadedMedia(request) {
            let ended = idleWords[status.idleReason].map { " (the last media \($0))" } ?? ""
            throw CastdError(
                .failedPrecondition, "nothing is loaded on \(name)\(ended); load something first (castc load URL)")
        }
        switch request {
        case .seek(let position, let relative, _):
            let target = relative ? status.estimatedPosition() + position : position
            try checkPosition(target, in: status, deviceName: name)
        case .skipAd:
            guard status.hasBreakStatus else { return }
            guard let wait = status.secondsUntilSkippable() else {
                throw CastdError(.failedPrecondition, "the ad that plays on \(name) cannot be skipped")
            }
            // A second's grace: the device's clock, not castd's estimate, decides.
            if wait > 1 {
                throw CastdError(
                    .failedPrecondition, "the ad that plays on \(name) can be skipped in \(Int(wait.rounded(.up))) s")
            }
        case .editTracks(let activeTrackIDs, _):
            guard let activeTrackIDs else { return }
            let known = Set(status.media.tracks.map(\.trackID))
            let unknown = activeTrackIDs.filter { !known.contains($0) }
            if !unknown.isEmpty {
                let list =
                    known.isEmpty
                    ? "it has no tracks"
                    : "its tracks are \(known.sorted().map(String.init).joined(separator: ", "))"
                throw CastdError(
                    .notFound,
                    "no track \(unknown.map(String.init).joined(separator: ", ")) in the media on \(name); \(list)")
            }
        case .queueInsert(_, let before, _):
            if let before { try checkItems([before], in: order) }
        case .queueRemove(let itemIDs):
            try checkItems(itemIDs, in: order)
        case .queueReorder(let itemIDs, let before):
            try checkItems(itemIDs + (before.map { [$0] } ?? []), in: order)
        case .queueUpdate(let update):
            try checkItems(update.itemIDs + (update.currentItemID.map { [$0] } ?? []), in: order)
            if let jump = update.jump, let order, !order.isEmpty {
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
        case .load, .queueLoad, .getStatus, .play, .pause, .stop, .setPlaybackRate, .setStreamVolume,
            .queueGetItemIDs, .queueGetItems:
            return
        }
    }

    /// The one rule for positions, said in `castc seek --help`: a position outside the media (before
    /// its start or past its end; for a live stream, outside the range it can seek in) is refused
    /// with OUT_OF_RANGE, naming the range. What castd does not know (no duration yet) the
    /// device judges.
    static func checkPosition(_ target: Double, in status: CastdMediaStatus, deviceName name: String) throws {
        let range: ClosedRange<Double>
        if status.media.streamType == .live || status.media.duration <= 0 {
            guard status.hasLiveSeekableRange, status.liveSeekableRange.end >= status.liveSeekableRange.start else {
                if target < 0 { throw outOfRange(target, "before the start", name: name) }
                return
            }
            range = status.liveSeekableRange.start...status.liveSeekableRange.end
        } else {
            range = 0...status.media.duration
        }
        guard target < range.lowerBound - 0.001 || target > range.upperBound + 0.001 else { return }
        throw outOfRange(
            target, "it can seek from \(seconds(range.lowerBound)) to \(seconds(range.upperBound))", name: name)
    }

    private static func outOfRange(_ target: Double, _ why: String, name: String) -> CastdError {
        CastdError(.outOfRange, "cannot seek to \(seconds(target)) in the media on \(name): \(why)")
    }

    /// The requests that need loaded media (refused by castd when the player is idle).
    private static func needsLoadedMedia(_ request: MediaRequest) -> Bool {
        switch request {
        case .play, .pause, .seek, .setPlaybackRate, .skipAd, .editTracks: true
        default: false
        }
    }

    private static let idleWords = [
        "FINISHED": "finished", "CANCELLED": "was stopped", "INTERRUPTED": "was interrupted", "ERROR": "failed",
    ]

    /// The kind of request a newer one of the same kind supersedes while it waits for the
    /// device's answer (`SupersedingRequests`), or nil.
    static func supersedingKind(of request: MediaRequest) -> String? {
        switch request {
        case .seek: "seek"
        case .setPlaybackRate: "playback rate"
        case .editTracks: "tracks"
        case .setStreamVolume: "stream volume"
        case .queueUpdate(let update): update.moves ? "queue jump" : nil
        default: nil
        }
    }

    private static func checkItems(_ itemIDs: [Int64], in order: [Int64]?) throws {
        guard let order, !order.isEmpty else { return }  // castd does not know the queue: the device judges
        let known = Set(order)
        let unknown = itemIDs.filter { !known.contains($0) }
        if !unknown.isEmpty {
            // A long queue is named by its first items and its length.
            let shown = order.prefix(10).map(String.init).joined(separator: ", ")
            let items = order.count <= 10 ? "items: \(shown)" : "\(order.count) items: \(shown), …"
            throw CastdError(
                .notFound,
                "no item \(unknown.prefix(10).map(String.init).joined(separator: ", ")) in the queue (\(items))")
        }
    }

    /// Whether `request` names queue items (or moves in the queue) castd judges against the
    /// queue's order.
    static func namesQueueItems(_ request: MediaRequest) -> Bool {
        switch request {
        case .queueInsert(_, let before, _): before != nil
        case .queueRemove, .queueReorder: true
        case .queueUpdate(let update): !update.itemIDs.isEmpty || update.currentItemID != nil || update.jump != nil
        default: false
        }
    }

    static func seconds(_ value: Double) -> String {
        value.rounded() == value ? "\(Int(value)) s" : String(format: "%.1f s", value)
    }
}
