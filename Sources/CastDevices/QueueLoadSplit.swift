import CastProtocol
import CastSenderLink
import CastdAPI

/// The most of a media request's JSON castd puts in one Cast message: a frame's body is at most
/// 64 KiB (`CastWire.maximumFrameLength`), and the CastMessage's other fields (the ids, the
/// namespace) and the request id take the rest.
let mediaPayloadBudget = CastdValidation.maximumCastPayload

/// A QUEUE_LOAD too large for one Cast message, said as a QUEUE_LOAD of the items that fit
/// around the one to play first, then QUEUE_INSERTs of the rest: those after it appended in
/// order, those before it inserted before the first item loaded.
struct QueueLoadSplit {
    /// The QUEUE_LOAD: items `loaded` of the whole list.
    var load: QueueLoad
    var loaded: Range<Int>
    /// The QUEUE_INSERTs that append the items after `loaded`, in order.
    var after: [[CastQueueItem]]
    /// The QUEUE_INSERTs that put the items before `loaded` before its first item, in order.
    var before: [[CastQueueItem]]

    /// nil when `load` fits in one message; throws when one item alone does not fit.
    init?(_ load: QueueLoad, budget: Int = mediaPayloadBudget) throws(CastdError) {
        let whole = MediaRequest.queueLoad(load).payload(requestID: Int64(Int32.max)).jsonString.utf8.count
        guard whole > budget else { return nil }
        let sizes = load.items.map { $0.json.jsonString.utf8.count + 1 }
        for (index, size) in sizes.enumerated() where size > MediaRequest.maximumMediaInformation {
            throw CastdError(
                .invalidArgument,
                "queue item \(index) is \(size) bytes of JSON; castd sends at most \(MediaRequest.maximumMediaInformation) an item, since the device's status repeats it and a Cast message holds 64 KiB"
            )
        }
        var empty = load
        empty.items = []
        let base = MediaRequest.queueLoad(empty).payload(requestID: Int64(Int32.max)).jsonString.utf8.count
        // From the first item if it reaches the one to play first, else from that one.
        let start = load.startIndex
        let first = base + sizes[...start].reduce(0, +) <= budget ? 0 : start
        var end = first
        var used = base
        while end < sizes.count, used + sizes[end] <= budget {
            used += sizes[end]
            end += 1
        }
        var head = load
        head.items = Array(load.items[first..<end])
        head.startIndex = start - first
        self.load = head
        loaded = first..<end
        let insertBase =
            MediaRequest.queueInsert(items: [], before: Int64(Int32.max), playNow: false)
            .payload(requestID: Int64(Int32.max), mediaSessionID: Int64(Int32.max)).jsonString.utf8.count
        after = Self.chunks(load.items[end...], sizes: sizes, budget: budget - insertBase)
        before = Self.chunks(load.items[..<first], sizes: sizes, budget: budget - insertBase)
    }

    /// `items` (indices of `sizes`) in runs that each fit in `budget`.
    static func chunks(_ items: ArraySlice<CastQueueItem>, sizes: [Int], budget: Int) -> [[CastQueueItem]] {
        var chunks: [[CastQueueItem]] = []
        var chunk: [CastQueueItem] = []
        var used = 0
        for index in items.indices {
            if !chunk.isEmpty, used + sizes[index] > budget {
                chunks.append(chunk)
                chunk = []
                used = 0
            }
            chunk.append(items[index])
            used += sizes[index]
        }
        if !chunk.isEmpty { chunks.append(chunk) }
        return chunks
    }
}
