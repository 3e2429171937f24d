import CastProtocol
import CastdAPI

/// The whole queue of one media session, as castd knows it (the sender SDK's media queue).
///
/// Receivers put only a few items around the current one in MEDIA_STATUS. The rest castd asks
/// for: the order with QUEUE_GET_ITEM_IDS, items with QUEUE_GET_ITEMS. The device announces
/// changes with QUEUE_CHANGE, which this applies to the order it holds, saying what changed so
/// that watchers never compare statuses. What a device sends is bounded here: ids are positive
/// and at most ``maximumItems``, and a change that does not fit the order castd holds makes it
/// ask for the order again rather than guess.
struct MediaQueue {
    /// The most items castd follows in one queue (a QUEUE_ITEM_IDS of 64 KiB holds about 6,000).
    static let maximumItems = 5000
    /// How many items one QUEUE_GET_ITEMS asks for.
    static let batch = 20

    /// The media session the queue is of.
    private(set) var mediaSessionID: Int64?
    /// Every item id in play order; nil until the device has said it (QUEUE_ITEM_IDS).
    private(set) var order: [Int64]? {
        didSet { members = Set(order ?? []) }
    }
    /// The ids in `order`, to look up: every MEDIA_STATUS is checked against them, and the order
    /// changes far less often.
    private var members: Set<Int64> = []
    /// The items castd has, with their media.
    private(set) var items: [Int64: CastQueueItem] = [:]
    /// Items the device was asked for and did not give: not asked again until they change.
    private var withheld: Set<Int64> = []
    /// The order is worth asking for: the session has a queue of more than one item, or changed.
    private(set) var wantsOrder = false
    /// The place in the link's order of the last QUEUE_CHANGE applied. A reply the device sent
    /// before it (QUEUE_ITEM_IDS, QUEUE_ITEMS) may be handled after it, since a reply resumes
    /// the task that asked: it describes the queue before the change, and is not applied.
    private var changeArrival: UInt64 = 0

    /// A change, as castd.v1 says it (without the device and media session, added on publishing).
    typealias Change = Castd_V1_QueueChange

    /// The queue is now that of `mediaSessionID`: a new media session starts with nothing known.
    mutating func follow(mediaSessionID: Int64) {
        guard mediaSessionID != self.mediaSessionID else { return }
        self = MediaQueue()
        self.mediaSessionID = mediaSessionID
    }

    /// Forgets everything (nothing is loaded).
    mutating func clear() {
        self = MediaQueue()
    }

    /// A new link counts its messages from 1.
    mutating func linkChanged() {
        changeArrival = 0
    }

    /// Whether a reply at `arrival` in the link's order came after every change applied.
    private func isCurrent(_ arrival: UInt64?) -> Bool {
        guard let arrival else { return true }
        return arrival > changeArrival
    }

    /// The items a MEDIA_STATUS carries (a window around the current one): their content is
    /// kept, and an id castd does not have in the order makes the order worth asking for.
    mutating func read(statusItems: [CastQueueItem]) {
        for item in statusItems.prefix(Self.maximumItems) {
            guard let id = item.itemID, id > 0 else { continue }
            if item.media != nil {
                store(item, id: id)
            }
            if order != nil, !members.contains(id) { wantsOrder = true }
        }
        if order == nil, statusItems.count > 1 { wantsOrder = true }
    }

    /// QUEUE_ITEM_IDS: the whole order. Returns how it differs from the order castd held (none
    /// when it held none: the order is then the news, in MediaStatus.queue_item_ids).
    mutating func setOrder(_ ids: [Int64], arrival: UInt64? = nil) -> [Change] {
        guard isCurrent(arrival) else {
            // The device changed the queue after it answered: ask again.
            wantsOrder = true
            return []
        }
        wantsOrder = false
        let new = Self.ids(ids)
        let old = order
        order = new
        items = items.filter { members.contains($0.key) }
        withheld.formIntersection(members)
        guard let old, old != new else { return [] }
        return Self.differences(from: old, to: new)
    }

    /// The device would not give the order: castd does not ask again until something changes.
    mutating func orderRefused() {
        wantsOrder = false
    }

    /// QUEUE_ITEMS: the items asked for (`asked`); those the answer leaves out are withheld.
    mutating func store(_ answer: [CastQueueItem], asked: [Int64], arrival: UInt64? = nil) {
        // Items the device changed after it answered are asked again.
        guard isCurrent(arrival) else { return }
        var given: Set<Int64> = []
        for item in answer.prefix(Self.maximumItems) {
            guard let id = item.itemID, id > 0, asked.contains(id) else { continue }
            store(item, id: id)
            given.insert(id)
        }
        withheld.formUnion(asked.filter { !given.contains($0) })
    }

    private mutating func store(_ item: CastQueueItem, id: Int64) {
        guard items[id] != nil || items.count < Self.maximumItems else { return }
        items[id] = item
        withheld.remove(id)
    }

    /// A QUEUE_CHANGE: applied to the order castd holds. Returns what changed; when the change
    /// does not fit the order (an inserted id castd has, a removed one it has not), the order
    /// is forgotten and worth asking for again.
    mutating func apply(_ device: CastQueueChange, arrival: UInt64? = nil) -> [Change] {
        if let arrival { changeArrival = max(changeArrival, arrival) }
        let ids = Self.ids(device.itemIDs)
        var change = Change()
        change.itemIds = ids
        change.index = -1
        switch device.kind {
        case .insert?:
            change.kind = .inserted
            let before = device.insertBefore ?? 0
            change.insertBefore = before > 0 ? before : 0
            if var order {
                let position = before > 0 ? order.firstIndex(of: before) : order.endIndex
                guard let position, !ids.contains(where: members.contains),
                    order.count + ids.count <= Self.maximumItems
                else { return forgetOrder(change) }
                order.insert(contentsOf: ids, at: position)
                change.index = Int64(position)
                self.order = order
            }
        case .remove?:
            change.kind = .removed
            for id in ids { items[id] = nil }
            withheld.subtract(ids)
            if var order {
                guard ids.allSatisfy(members.contains) else { return forgetOrder(change) }
                let removed = Set(ids)
                order.removeAll { removed.contains($0) }
                self.order = order
            }
        case .itemsChange?:
            change.kind = .updated
            for id in ids { items[id] = nil }
            withheld.subtract(ids)
        case .update?:
            // A reorder: every id, in the new order (and the ones moved in reorderItemIds).
            // (ids are distinct: the same count, all in the order, is the same items.)
            guard let order, ids.count == order.count, ids.allSatisfy(members.contains) else {
                return forgetOrder(change, kind: .reordered)
            }
            guard ids != order else { return [] }
            change.kind = .reordered
            let moved = Self.ids(device.reorderItemIDs)
            change.itemIds = moved.isEmpty ? Self.moved(from: order, to: ids) : moved
            self.order = ids
        case .noChange?, nil:
            return []  // NO_CHANGE, or a kind castd does not know
        }
        if let order { change.order = order }
        return [change]
    }

    /// The change as it came, with no order; the order is asked for again.
    private mutating func forgetOrder(_ change: Change, kind: Castd_V1_QueueChangeKind? = nil) -> [Change] {
        var change = change
        if let kind { change.kind = kind }
        change.index = -1
        change.order = []
        order = nil
        wantsOrder = true
        return [change]
    }

    /// The ids in the order that castd lacks the items of (and has not been refused), nearest
    /// the current item first (after it before before it), at most `limit`.
    func missing(around current: Int64?, limit: Int = batch) -> [Int64] {
        guard let order else { return [] }
        let center = current.flatMap { order.firstIndex(of: $0) } ?? 0
        var result: [Int64] = []
        var distance = 0
        while result.count < limit, distance < order.count {
            for index in [center + distance, center - distance - 1] where order.indices.contains(index) {
                let id = order[index]
                if items[id] == nil, !withheld.contains(id), result.count < limit { result.append(id) }
            }
            distance += 1
        }
        return result
    }

    /// The queue as castd.v1 gives it; `knownMedia` stands in for items' media the device left
    /// out (the current item's, from its status).
    func api(deviceID: String, currentItemID: Int64, knownMedia: [Int64: CastMediaInformation]) -> Castd_V1_Queue {
        var queue = Castd_V1_Queue()
        queue.deviceID = deviceID
        queue.mediaSessionID = mediaSessionID ?? 0
        queue.currentItemID = currentItemID
        var complete = true
        for (position, id) in (order ?? []).enumerated() {
            if let item = items[id] {
                var entry = CastdQueueItem(item, knownMedia: knownMedia[id])
                if item.orderID == nil { entry.orderID = Int64(position) }
                complete = complete && entry.hasMedia
                queue.items.append(entry)
            } else {
                var entry = CastdQueueItem()
                entry.itemID = id
                entry.orderID = Int64(position)
                if let media = knownMedia[id] {
                    entry.media = CastdMediaInformation(media)
                } else {
                    complete = false
                }
                queue.items.append(entry)
            }
        }
        queue.complete = order != nil && complete
        return queue
    }

    // MARK: differences

    /// At most this many changes say one difference of the order: past it, one REORDERED says
    /// the whole new order. Each change carries the order after it, so a difference said run by
    /// run costs runs × items (a device that interleaves 2,500 new ids with 2,500 old ones
    /// would make 2,500 changes of 5,000 ids each, under the store's lock).
    static let maximumChanges = 8

    /// The changes that take `old` to `new`: the removed items, then each run of new items
    /// (before the item that follows it), then a reorder if the items kept moved. Each change
    /// carries the order after it. When that would take more than ``maximumChanges`` changes,
    /// one REORDERED with the new order, naming the items whose place changed (new ones among
    /// them); the items removed are those of the old order missing from it.
    static func differences(from old: [Int64], to new: [Int64]) -> [Change] {
        let newSet = Set(new)
        let oldSet = Set(old)
        let removed = old.filter { !newSet.contains($0) }
        // The runs of new items: where each starts and ends in `new`.
        var runs: [Range<Int>] = []
        var index = 0
        while index < new.count, runs.count < maximumChanges {
            guard !oldSet.contains(new[index]) else {
                index += 1
                continue
            }
            var end = index
            while end < new.count, !oldSet.contains(new[end]) { end += 1 }
            runs.append(index..<end)
            index = end
        }
        let moreRuns = new[index...].contains { !oldSet.contains($0) }
        guard !moreRuns, runs.count + (removed.isEmpty ? 0 : 1) + 1 <= maximumChanges else {
            var change = Change()
            change.kind = .reordered
            change.itemIds = moved(from: old, to: new)
            change.index = -1
            change.order = new
            return [change]
        }

        var changes: [Change] = []
        var current = old.filter { newSet.contains($0) }
        if !removed.isEmpty {
            var change = Change()
            change.kind = .removed
            change.itemIds = removed
            change.index = -1
            change.order = current
            changes.append(change)
        }
        for run in runs {
            let before = run.upperBound < new.count ? new[run.upperBound] : 0
            let position = before == 0 ? current.endIndex : current.firstIndex(of: before) ?? current.endIndex
            current.insert(contentsOf: new[run], at: position)
            var change = Change()
            change.kind = .inserted
            change.itemIds = Array(new[run])
            change.insertBefore = before
            change.index = Int64(position)
            change.order = current
            changes.append(change)
        }
        if current != new {
            var change = Change()
            change.kind = .reordered
            change.itemIds = moved(from: current, to: new)
            change.index = -1
            change.order = new
            changes.append(change)
        }
        return changes
    }

    /// The items of `new` whose place differs from theirs in `old` (those not in `old` among
    /// them).
    static func moved(from old: [Int64], to new: [Int64]) -> [Int64] {
        new.indices.filter { $0 >= old.count || old[$0] != new[$0] }.map { new[$0] }
    }

    /// The positive ids of a list a device sent, without repeats, at most ``maximumItems``.
    static func ids(_ list: [Int64]?) -> [Int64] {
        var seen: Set<Int64> = []
        // Not lazy: the filter keeps state, and a lazy filter may be run more than once.
        return Array((list ?? []).filter { $0 > 0 && seen.insert($0).inserted }.prefix(maximumItems))
    }
}
