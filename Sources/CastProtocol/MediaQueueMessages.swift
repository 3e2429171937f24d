/// What a receiver says of its queue, beyond MEDIA_STATUS: the answers to QUEUE_GET_ITEM_IDS and
/// QUEUE_GET_ITEMS, and the QUEUE_CHANGE it sends every sender when the queue changes. Read
/// leniently, like every message from a device: a member of the wrong type reads as unset.

/// QUEUE_CHANGE: how the queue changed, by item id.
public struct CastQueueChange: Sendable, Hashable, JSONRecord {
    /// INSERT, REMOVE, ITEMS_CHANGE, UPDATE (a reorder: every id, in the new order) or
    /// NO_CHANGE (``CastQueueChangeType``); receivers may add others.
    public var changeType: String?
    public var itemIDs: [Int64]?
    /// INSERT: the item the new ones precede; absent: at the end.
    public var insertBefore: Int64?
    /// A reorder's UPDATE: the items that moved.
    public var reorderItemIDs: [Int64]?
    public var mediaSessionID: Int64?
    public var sequenceNumber: Int64?

    static let members: [JSONMember<Self>] = [
        .string("changeType", \.changeType), .integers("itemIds", \.itemIDs),
        .integer("insertBefore", \.insertBefore), .integers("reorderItemIds", \.reorderItemIDs),
        .integer("mediaSessionId", \.mediaSessionID), .integer("sequenceNumber", \.sequenceNumber),
    ]

    public init() {}

    public init(json: JSONValue) { self.init(reading: json) }

    public var json: JSONValue { writing() }
}

/// The answer to QUEUE_GET_ITEM_IDS (QUEUE_ITEM_IDS): every item id, in play order.
public struct CastQueueItemIDs: Sendable, Hashable, JSONRecord {
    public var itemIDs: [Int64]?

    static let members: [JSONMember<Self>] = [.integers("itemIds", \.itemIDs)]

    init() {}

    public init(json: JSONValue) { self.init(reading: json) }
}

/// The answer to QUEUE_GET_ITEMS (QUEUE_ITEMS): the items asked for that the receiver has.
public struct CastQueueItems: Sendable, Hashable, JSONRecord {
    public var items: [CastQueueItem]?

    static let members: [JSONMember<Self>] = [.records("items", \.items)]

    init() {}

    public init(json: JSONValue) { self.init(reading: json) }
}
