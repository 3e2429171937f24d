import CastProtocol
import CastdAPI
import Testing

@testable import CastDevices

/// The whole queue castd keeps: the order from QUEUE_ITEM_IDS, the device's QUEUE_CHANGE applied
/// to it, what changed said as changes, and what a hostile device sends bounded.
extension MediaQueue {
    /// A QUEUE_CHANGE as the device sends it, read as castd reads it.
    mutating func apply(device json: JSONValue, arrival: UInt64? = nil) -> [Change] {
        apply(CastQueueChange(json: json), arrival: arrival)
    }
}

@Suite(.tags(.cpuBound)) struct MediaQueueTests {
    /// A queue of `session` whose order is `ids`.
    func queue(_ ids: [Int64], session: Int64 = 1) -> MediaQueue {
        var queue = MediaQueue()
        queue.follow(mediaSessionID: session)
        #expect(queue.setOrder(ids).isEmpty)  // the first order is no change
        return queue
    }

    func item(_ id: Int64, title: String? = nil) -> CastQueueItem {
        var media = CastMediaInformation(contentID: "https://example.com/\(id).mp3")
        if let title { media.metadata = CastMediaMetadata(metadataType: 0, title: title) }
        return CastQueueItem(itemID: id, media: media)
    }

    /// Applies `changes` as a client would: each change's order, else by its kind.
    func replay(_ changes: [Castd_V1_QueueChange], on start: [Int64]) -> [Int64] {
        var order = start
        for change in changes {
            if !change.order.isEmpty {
                order = change.order
                continue
            }
            switch change.kind {
            case .removed: order.removeAll { change.itemIds.contains($0) }
            case .inserted:
                let at = change.insertBefore == 0 ? order.endIndex : order.firstIndex(of: change.insertBefore)!
                order.insert(contentsOf: change.itemIds, at: at)
            default: break
            }
        }
        return order
    }

    @Test func differencesTakeTheOldOrderToTheNew() {
        let cases: [([Int64], [Int64])] = [
            ([1, 2, 3], [1, 2, 3, 4, 5]),  // appended
            ([1, 2, 3], [7, 1, 8, 9, 2, 3]),  // inserted in two places
            ([1, 2, 3, 4], [1, 4]),  // removed
            ([1, 2, 3, 4], [4, 2, 3, 1]),  // reordered
            ([1, 2, 3, 4], [5, 3, 1, 6]),  // all at once
            ([1, 2], []),  // emptied
        ]
        for (old, new) in cases {
            let changes = MediaQueue.differences(from: old, to: new)
            #expect(replay(changes, on: old) == new, "\(old) → \(new): \(changes)")
            #expect(changes.last?.order == new, "the last change carries the order")
        }
        let inserted = MediaQueue.differences(from: [1, 2, 3], to: [1, 7, 8, 2, 3])
        #expect(inserted.count == 1 && inserted[0].kind == .inserted)
        #expect(inserted[0].itemIds == [7, 8] && inserted[0].insertBefore == 2 && inserted[0].index == 1)
    }

    /// A device that answers QUEUE_GET_ITEM_IDS with new ids interleaved among the old ones
    /// makes one REORDERED with the new order, not a change per run each carrying the order:
    /// said run by run, 2,500 runs of a 5,000-id queue were 2,500 changes and 9.4 M ids.
    @Test func aDifferenceOfManyRunsIsOneReorder() {
        let old = (1...2_500).map { Int64($0 * 2) }
        let interleaved = old.flatMap { [$0 - 1, $0] }  // a new id before every old one
        for (name, new) in [
            ("interleaved", interleaved),
            ("interleaved, half removed", interleaved.enumerated().filter { $0.offset % 4 != 1 }.map(\.element)),
            ("reversed with new ids", interleaved.reversed()),
        ] {
            let changes = MediaQueue.differences(from: old, to: new)
            #expect(changes.count <= MediaQueue.maximumChanges, "\(name): \(changes.count) changes")
            #expect(replay(changes, on: old) == new, "\(name)")
            let ids = changes.reduce(0) { $0 + $1.order.count + $1.itemIds.count }
            #expect(ids <= 2 * new.count, "\(name): the changes carry \(ids) ids")
        }
        let reorder = MediaQueue.differences(from: old, to: interleaved)
        #expect(reorder.count == 1 && reorder[0].kind == .reordered && reorder[0].order == interleaved)
        #expect(Set(reorder[0].itemIds).isSuperset(of: interleaved.filter { $0 % 2 == 1 }), "new items are named")
        // A few runs are still said run by run.
        let few = MediaQueue.differences(from: [1, 2, 3, 4], to: [9, 1, 2, 8, 3, 4, 7])
        #expect(few.map(\.kind) == [.inserted, .inserted, .inserted])
    }

    @Test func theDevicesChangesApplyToTheOrder() {
        var queue = queue([1, 2, 3])
        let insert = queue.apply(device: ["changeType": "INSERT", "itemIds": [10, 11], "insertBefore": 2])
        #expect(insert.first?.kind == .inserted && insert.first?.index == 1)
        #expect(queue.order == [1, 10, 11, 2, 3] && insert.first?.order == [1, 10, 11, 2, 3])

        let atEnd = queue.apply(device: ["changeType": "INSERT", "itemIds": [12]])
        #expect(atEnd.first?.insertBefore == 0 && atEnd.first?.index == 5 && queue.order?.last == 12)

        let remove = queue.apply(device: ["changeType": "REMOVE", "itemIds": [10, 3]])
        #expect(remove.first?.kind == .removed && queue.order == [1, 11, 2, 12])

        let reorder = queue.apply(device: [
            "changeType": "UPDATE", "itemIds": [12, 1, 11, 2], "reorderItemIds": [12],
        ])
        #expect(reorder.first?.kind == .reordered && reorder.first?.itemIds == [12])
        #expect(queue.order == [12, 1, 11, 2] && reorder.first?.order == [12, 1, 11, 2])

        queue.store([item(1, title: "One")], asked: [1])
        #expect(queue.items[1] != nil)
        let update = queue.apply(device: ["changeType": "ITEMS_CHANGE", "itemIds": [1]])
        #expect(update.first?.kind == .updated && queue.items[1] == nil, "an updated item is fetched again")
        #expect(queue.apply(device: ["changeType": "NO_CHANGE"]).isEmpty)
        #expect(!queue.wantsOrder)
    }

    @Test func aChangeThatDoesNotFitMakesCastdAskForTheOrderAgain() {
        for change: JSONValue in [
            ["changeType": "INSERT", "itemIds": [2]],  // already there
            ["changeType": "INSERT", "itemIds": [9], "insertBefore": 77],  // before an item castd lacks
            ["changeType": "REMOVE", "itemIds": [77]],  // not there
            ["changeType": "UPDATE", "itemIds": [3, 1]],  // a reorder that is not of the same items
        ] {
            var queue = queue([1, 2, 3])
            let changes = queue.apply(device: change)
            #expect(changes.count == 1 && changes[0].order.isEmpty && changes[0].index == -1, "\(change)")
            #expect(queue.order == nil && queue.wantsOrder, "\(change)")
        }
    }

    /// A reply resumes the task that asked, so castd may handle it after a QUEUE_CHANGE the
    /// device sent later: such a reply describes the queue before the change and is not used.
    @Test func aReplyOlderThanAChangeIsNotApplied() {
        var queue = MediaQueue()
        queue.follow(mediaSessionID: 1)
        // The device answered QUEUE_GET_ITEM_IDS (arrival 5), then announced an insert (6);
        // castd handled the insert first.
        _ = queue.apply(device: ["changeType": "INSERT", "itemIds": [4]], arrival: 6)
        #expect(queue.setOrder([1, 2, 3], arrival: 5).isEmpty)
        #expect(queue.order == nil && queue.wantsOrder, "asked again")
        #expect(queue.setOrder([1, 2, 3, 4], arrival: 8).isEmpty && queue.order == [1, 2, 3, 4])
        // Items answered before a change are not kept either (asked again).
        _ = queue.apply(device: ["changeType": "ITEMS_CHANGE", "itemIds": [2]], arrival: 10)
        queue.store([item(2, title: "old")], asked: [2], arrival: 9)
        #expect(queue.items[2] == nil && queue.missing(around: 1).contains(2))
        queue.store([item(2, title: "new")], asked: [2], arrival: 11)
        #expect(queue.items[2]?.media?.metadata?.title == "new")
        // A new link counts from 1 again.
        queue.linkChanged()
        #expect(queue.setOrder([1, 2, 3, 4, 5], arrival: 1).count == 1 && queue.order?.count == 5)
    }

    @Test func missingItemsAreAskedNearestTheCurrentOneFirst() {
        var queue = queue(Array(1...50))
        #expect(queue.missing(around: 25, limit: 6) == [25, 24, 26, 23, 27, 22])
        #expect(queue.missing(around: 1, limit: 3) == [1, 2, 3])
        #expect(queue.missing(around: 50, limit: 3) == [50, 49, 48])
        // Items given are not asked again; items the device left out are not either.
        queue.store([item(25), item(24)], asked: [25, 24, 26])
        #expect(queue.missing(around: 25, limit: 3) == [23, 27, 22])
        var all = self.queue(Array(1...5))
        all.store((1...5).map { item($0) }, asked: Array(1...5))
        #expect(all.missing(around: 3).isEmpty)
        let api = all.api(deviceID: "tv", currentItemID: 3, knownMedia: [:])
        #expect(
            api.complete && api.items.map(\.itemID) == [1, 2, 3, 4, 5] && api.items.map(\.orderID) == [0, 1, 2, 3, 4])
    }

    @Test func whatAHostileDeviceSendsIsBounded() {
        var queue = MediaQueue()
        queue.follow(mediaSessionID: 1)
        let tooMany = Array(1...Int64(MediaQueue.maximumItems + 500))
        _ = queue.setOrder(MediaQueue.ids(tooMany))
        #expect(queue.order?.count == MediaQueue.maximumItems)
        #expect(MediaQueue.ids(CastQueueChange(json: ["itemIds": [0, -3, 4, 4, 5, "x", 1.5]]).itemIDs) == [4, 5])
        // Items the device was not asked for are not kept.
        queue.store([item(999_999)], asked: [1])
        #expect(queue.items.isEmpty)
        // A new media session starts from nothing.
        queue.follow(mediaSessionID: 2)
        #expect(queue.order == nil && queue.items.isEmpty)
        // A status of several items makes the order worth asking for; one item does not.
        var single = MediaQueue()
        single.follow(mediaSessionID: 3)
        single.read(statusItems: [item(1)])
        #expect(!single.wantsOrder)
        single.read(statusItems: [item(1), item(2)])
        #expect(single.wantsOrder)
    }
}
