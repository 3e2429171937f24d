import CastTestSupport
import CastProtocol
import Testing

@testable import CastEmulator

/// Queues: QUEUE_LOAD, INSERT, REMOVE, REORDER, UPDATE, NEXT / PREV, and what happens when an
/// item reaches its end in each repeat mode.
@Suite("Media queue (state machine)", .tags(.cpuBound))
struct QueueTests {
    /// A device playing a queue of `names` (100 s each unless given), from `startIndex`.
    static func queue(
        _ names: [String], startIndex: Int = 0, repeatMode: String? = nil,
        items extra: [Int: [String: JSONValue]] = [:],
        settings: EmulatedDevice.Settings = .init()
    ) throws -> DeviceHarness {
        let harness = DeviceHarness(settings: settings)
        try harness.launch()
        var request: [String: JSONValue] = [
            "type": "QUEUE_LOAD", "requestId": 700, "startIndex": .number(Double(startIndex)),
            "items": .array(
                names.enumerated().map { index, name in
                    // The sender's id is ignored.
                    var item: [String: JSONValue] = ["media": queueMedia(name), "itemId": 4242]
                    for (key, value) in extra[index] ?? [:] { item[key] = value }
                    return .object(item)
                }
            ),
        ]
        if let repeatMode { request["repeatMode"] = .string(repeatMode) }
        let sent = harness.media(.object(request))
        _ = try #require(sent.reply(to: 700)?.firstStatus, "QUEUE_LOAD answered with a status")
        return harness
    }

    static func itemIDs(_ status: JSONValue?) -> [Int64] {
        status?["items"]?.arrayValue?.compactMap { $0["itemId"]?.intValue } ?? []
    }

    static func contentName(_ status: JSONValue?) -> String? {
        status?["media"]?["contentId"]?.stringValue?.split(separator: "/").last.map(String.init)
    }

    @Test(
        "QUEUE_LOAD: the device assigns increasing item ids; startIndex, orderId, currentItemId, repeatMode, currentTime"
    )
    func queueLoad() throws {
        let harness = DeviceHarness()
        try harness.launch()
        let sent = harness.media([
            "type": "QUEUE_LOAD", "requestId": 1, "startIndex": 1, "repeatMode": "REPEAT_ALL", "currentTime": 7,
            "items": [
                ["media": queueMedia("a"), "itemId": 99], ["media": queueMedia("b"), "customData": ["n": 2]],
                ["media": queueMedia("c")],
            ],
        ])
        let status = try #require(sent.reply(to: 1)?.firstStatus)
        let ids = Self.itemIDs(status)
        #expect(ids.count == 3)
        #expect(ids == ids.sorted() && Set(ids).count == 3)
        #expect(status["currentItemId"]?.intValue == ids[1])
        #expect(Self.contentName(status) == "b")
        #expect(status["currentTime"] == 7)
        #expect(status["repeatMode"] == "REPEAT_ALL")
        #expect(status["items"]?.arrayValue?.map { $0["orderId"] } == [0, 1, 2])
        #expect(status["items"]?.arrayValue?[1]["customData"] == ["n": 2])
        let broadcasts = sent.broadcastStatuses
        #expect(broadcasts.first?["playerState"] == "BUFFERING")
        #expect(broadcasts.first?["loadingItemId"]?.intValue == ids[1])

        // A later queue gets later ids.
        let again = harness.media(["type": "QUEUE_LOAD", "requestId": 2, "items": [["media": queueMedia("d")]]])
        let laterIDs = Self.itemIDs(again.reply(to: 2)?.firstStatus)
        let later = try #require(laterIDs.first)
        #expect(later > ids[2])

        for (requestID, request) in [
            (3, ["type": "QUEUE_LOAD", "requestId": 3, "items": []]),
            (4, ["type": "QUEUE_LOAD", "requestId": 4, "items": [["media": queueMedia("a")]], "startIndex": 1]),
            (
                5,
                [
                    "type": "QUEUE_LOAD", "requestId": 5, "items": [["media": queueMedia("a")]],
                    "repeatMode": "REPEAT_SOMETIMES",
                ]
            ),
            (6, ["type": "QUEUE_LOAD", "requestId": 6, "items": [["autoplay": true]]]),
        ] as [(Int, JSONValue)] {
            #expect(harness.media(request).reply(to: requestID)?["reason"] == "INVALID_PARAMS", "request \(requestID)")
        }
    }

    @Test(
        "REPEAT_OFF: an item that ends moves on in the same media session (BUFFERING with loadingItemId), the last ends IDLE FINISHED"
    )
    func repeatOff() throws {
        let harness = try Self.queue(["a", "b"])
        let session = harness.device.player?.mediaSessionID
        let first = try #require(harness.status())
        let ids = Self.itemIDs(first)
        let moved = harness.advance(by: .seconds(100))
        let statuses = moved.broadcastStatuses
        #expect(statuses.count == 2)
        #expect(statuses[0]["playerState"] == "BUFFERING")
        #expect(statuses[0]["loadingItemId"]?.intValue == ids[1])
        #expect(statuses[1]["playerState"] == "PLAYING")
        #expect(statuses[1]["currentItemId"]?.intValue == ids[1])
        #expect(statuses[1]["mediaSessionId"]?.intValue == session.map(Int64.init))
        #expect(Self.contentName(statuses[1]) == "b", "a new item's status carries its media")
        #expect(statuses[1]["currentTime"] == 0)

        let finished = harness.advance(by: .seconds(100)).broadcastStatuses
        #expect(finished.count == 1)
        #expect(finished.first?["playerState"] == "IDLE")
        #expect(finished.first?["idleReason"] == "FINISHED")
        #expect(harness.device.player == nil)
    }

    @Test("REPEAT_ALL wraps around; REPEAT_SINGLE plays the same item again")
    func repeatAllAndSingle() throws {
        let all = try Self.queue(["a", "b"], startIndex: 1, repeatMode: "REPEAT_ALL")
        let wrapped = all.advance(by: .seconds(100)).broadcastStatuses.last
        #expect(Self.contentName(wrapped) == "a")
        #expect(wrapped?["playerState"] == "PLAYING")

        let single = try Self.queue(["a", "b"], repeatMode: "REPEAT_SINGLE")
        let again = single.advance(by: .seconds(100)).broadcastStatuses.last
        #expect(Self.contentName(again) == "a")
        #expect(again?["currentTime"] == 0)
        #expect(single.advance(by: .seconds(250)).broadcastStatuses.allSatisfy { Self.contentName($0) == "a" })
        #expect(single.device.player != nil)
    }

    @Test("REPEAT_ALL_AND_SHUFFLE: after the last item the queue is shuffled (deterministically) and starts over")
    func repeatAllAndShuffle() throws {
        let names = ["a", "b", "c", "d", "e", "f", "g", "h"]
        func run() throws -> (before: [Int64], after: [Int64], current: JSONValue?) {
            let harness = try Self.queue(names, startIndex: 7, repeatMode: "REPEAT_ALL_AND_SHUFFLE")
            let before = Self.itemIDs(harness.status())
            let status = harness.advance(by: .seconds(100)).broadcastStatuses.last
            return (before, Self.itemIDs(status), status)
        }
        let first = try run()
        #expect(first.after.sorted() == first.before.sorted())
        #expect(first.after != first.before, "8 items: a shuffle that changes nothing is 1 in 40320")
        #expect(first.current?["currentItemId"]?.intValue == first.after.first)
        #expect(first.current?["items"]?.arrayValue?.map { $0["orderId"] } == (0..<8).map { .number(Double($0)) })
        let second = try run()
        #expect(second.after == first.after, "same media session id, same shuffle")
    }

    @Test("A repeated item whose startTime is at (or past) its end starts from 0 instead of ending over and over")
    func startTimeAtEnd() throws {
        let harness = try Self.queue(["a"], repeatMode: "REPEAT_SINGLE", items: [0: ["startTime": 100]])
        #expect(harness.status()?["currentTime"] == 0)
        let again = harness.advance(by: .seconds(100)).broadcastStatuses
        #expect(again.count == 2, "BUFFERING and PLAYING once, not a loop")
        #expect(again.last?["currentTime"] == 0)
        #expect(harness.device.nextDeadline == .seconds(200))
    }

    @Test("Per-item autoplay false loads PAUSED; startTime is where an item starts")
    func autoplayAndStartTime() throws {
        let harness = try Self.queue(["a", "b"], items: [1: ["autoplay": false, "startTime": 30]])
        let next = harness.advance(by: .seconds(100)).broadcastStatuses.last
        #expect(next?["playerState"] == "PAUSED")
        #expect(next?["currentTime"] == 30)
        #expect(harness.device.nextDeadline == nil)

        let paused = try Self.queue(["a"], items: [0: ["autoplay": false]])
        #expect(paused.status()?["playerState"] == "PAUSED")
    }

    @Test("preloadedItemId: broadcast once the next item is within its preloadTime of the current end")
    func preload() throws {
        let harness = try Self.queue(["a", "b"], items: [1: ["preloadTime": 20]])
        let ids = Self.itemIDs(harness.status())
        #expect(harness.status()?["preloadedItemId"] == nil)
        #expect(harness.advance(by: .seconds(79)).isEmpty)
        let announced = harness.advance(by: .seconds(1)).broadcastStatuses
        #expect(announced.count == 1)
        #expect(announced.first?["preloadedItemId"]?.intValue == ids[1])
        #expect(announced.first?["currentItemId"]?.intValue == ids[0])
        #expect(harness.advance(by: .seconds(10)).isEmpty, "announced once")
        #expect(harness.status()?["preloadedItemId"]?.intValue == ids[1])
    }

    @Test(
        "QUEUE_INSERT: at the end, before an item, jumping with currentItemIndex; unknown insertBefore is INVALID_PARAMS"
    )
    func insert() throws {
        let harness = try Self.queue(["a", "b"])
        let ids = Self.itemIDs(harness.status())
        let atEnd = harness.command("QUEUE_INSERT", 1, ["items": [["media": queueMedia("c")]]])
        let afterEnd = Self.itemIDs(atEnd.reply(to: 1)?.firstStatus)
        #expect(afterEnd.count == 3 && Array(afterEnd.prefix(2)) == ids)
        #expect(afterEnd[2] > ids[1])
        #expect(atEnd.reply(to: 1)?.firstStatus?["currentItemId"]?.intValue == ids[0])

        let before = harness.command(
            "QUEUE_INSERT", 2,
            [
                "items": [["media": queueMedia("x")], ["media": queueMedia("y")]],
                "insertBefore": .number(Double(ids[1])), "currentItemIndex": 1,
            ]
        )
        let status = try #require(before.reply(to: 2)?.firstStatus)
        let order = Self.itemIDs(status)
        #expect(order.count == 5 && order[0] == ids[0] && order[3] == ids[1])
        #expect(status["currentItemId"]?.intValue == order[2], "jumped to y")
        #expect(Self.contentName(status) == "y")
        #expect(before.broadcastStatuses.first?["loadingItemId"]?.intValue == order[2])

        let unknown = harness.command("QUEUE_INSERT", 3, ["items": [["media": queueMedia("z")]], "insertBefore": 9999])
        #expect(unknown.reply(to: 3)?["reason"] == "INVALID_PARAMS")
        #expect(Self.itemIDs(harness.status()).count == 5)
    }

    @Test("QUEUE_REMOVE: others go; the current one moves playback on; unknown ids refused; all gone is IDLE CANCELLED")
    func remove() throws {
        let harness = try Self.queue(["a", "b", "c"])
        let ids = Self.itemIDs(harness.status())
        let other = harness.command("QUEUE_REMOVE", 1, ["itemIds": [.number(Double(ids[2]))]])
        #expect(Self.itemIDs(other.reply(to: 1)?.firstStatus) == Array(ids.prefix(2)))

        let unknown = harness.command("QUEUE_REMOVE", 2, ["itemIds": [.number(Double(ids[1])), 9999]])
        #expect(unknown.reply(to: 2)?["reason"] == "INVALID_PARAMS")
        #expect(Self.itemIDs(harness.status()).count == 2)

        let current = harness.command("QUEUE_REMOVE", 3, ["itemIds": [.number(Double(ids[0]))]])
        #expect(current.reply(to: 3)?.firstStatus?["currentItemId"]?.intValue == ids[1])
        #expect(Self.contentName(current.reply(to: 3)?.firstStatus) == "b")

        let all = harness.command("QUEUE_REMOVE", 4, ["itemIds": [.number(Double(ids[1]))]])
        #expect(all.reply(to: 4)?.firstStatus?["idleReason"] == "CANCELLED")
        #expect(all.broadcastStatuses.first?["playerState"] == "IDLE")
        #expect(harness.device.player == nil)
    }

    @Test("QUEUE_REORDER: moves items before another (or to the end), orderIds follow, the current item stays")
    func reorder() throws {
        let harness = try Self.queue(["a", "b", "c", "d"])
        let ids = Self.itemIDs(harness.status())
        let moved = harness.command(
            "QUEUE_REORDER", 1,
            ["itemIds": [.number(Double(ids[3])), .number(Double(ids[2]))], "insertBefore": .number(Double(ids[0]))])
        let status = try #require(moved.reply(to: 1)?.firstStatus)
        #expect(Self.itemIDs(status) == [ids[3], ids[2], ids[0], ids[1]])
        #expect(status["currentItemId"]?.intValue == ids[0])
        #expect(status["items"]?.arrayValue?.map { $0["orderId"] } == [0, 1, 2, 3])

        let toEnd = harness.command("QUEUE_REORDER", 2, ["itemIds": [.number(Double(ids[3]))]])
        #expect(Self.itemIDs(toEnd.reply(to: 2)?.firstStatus) == [ids[2], ids[0], ids[1], ids[3]])

        let selfBefore = harness.command(
            "QUEUE_REORDER", 3, ["itemIds": [.number(Double(ids[1]))], "insertBefore": .number(Double(ids[1]))])
        #expect(selfBefore.reply(to: 3)?["reason"] == "INVALID_PARAMS")
        #expect(harness.command("QUEUE_REORDER", 4, ["itemIds": [4242]]).reply(to: 4)?["reason"] == "INVALID_PARAMS")
    }

    @Test("QUEUE_UPDATE: jump, currentItemId, repeatMode, items by id, currentTime; bad values are INVALID_PARAMS")
    func update() throws {
        let harness = try Self.queue(["a", "b", "c"])
        let ids = Self.itemIDs(harness.status())
        let session = harness.device.player?.mediaSessionID

        let jumped = try #require(
            harness.command("QUEUE_UPDATE", 1, ["jump": 2, "currentTime": 15]).reply(to: 1)?.firstStatus)
        #expect(jumped["currentItemId"]?.intValue == ids[2])
        #expect(jumped["currentTime"] == 15)
        #expect(jumped["mediaSessionId"]?.intValue == session.map(Int64.init), "jumping keeps the media session")

        let back = harness.command("QUEUE_UPDATE", 2, ["currentItemId": .number(Double(ids[0]))]).reply(to: 2)?
            .firstStatus
        #expect(back?["currentItemId"]?.intValue == ids[0])

        let updated = harness.command(
            "QUEUE_UPDATE", 3,
            [
                "repeatMode": "REPEAT_ALL",
                "items": [["itemId": .number(Double(ids[1])), "autoplay": false, "customData": ["k": 1]]],
            ]
        ).reply(to: 3)?.firstStatus
        #expect(updated?["repeatMode"] == "REPEAT_ALL")
        #expect(updated?["items"]?.arrayValue?[1]["autoplay"] == false)
        #expect(updated?["items"]?.arrayValue?[1]["customData"] == ["k": 1])
        #expect(
            harness.command("QUEUE_UPDATE", 4, ["jump": -1]).reply(to: 4)?.firstStatus?["currentItemId"]?.intValue
                == ids[2], "REPEAT_ALL wraps")

        let seekOnly = harness.command("QUEUE_UPDATE", 5, ["currentTime": 40]).reply(to: 5)?.firstStatus
        #expect(seekOnly?["currentTime"] == 40)
        #expect(seekOnly?["currentItemId"]?.intValue == ids[2])

        _ = harness.command("QUEUE_UPDATE", 6, ["repeatMode": "REPEAT_OFF"])
        for (requestID, extra) in [
            (10, ["jump": 1]),  // past the end without repeat
            (11, ["repeatMode": "SHUFFLE_PLEASE"]),
            (12, ["currentItemId": 9999]),
            (13, ["items": [["itemId": 9999, "autoplay": false]]]),
            (14, ["currentTime": "soon"]),
        ] as [(Int, [String: JSONValue])] {
            let refused = harness.command("QUEUE_UPDATE", requestID, extra)
            #expect(refused.count == 1)
            #expect(refused.reply(to: requestID)?["reason"] == "INVALID_PARAMS", "request \(requestID)")
        }
        #expect(harness.status()?["repeatMode"] == "REPEAT_OFF")
        #expect(harness.status()?["currentItemId"]?.intValue == ids[2])
    }

    @Test(
        "QUEUE_NEXT / QUEUE_PREV (older senders) jump ±1; supportedMediaCommands has QUEUE_NEXT / QUEUE_PREV only when there is one"
    )
    func nextPreviousAndCommandBits() throws {
        let harness = try Self.queue(["a", "b", "c"])
        let ids = Self.itemIDs(harness.status())
        func commands() -> Int64 { harness.status()?["supportedMediaCommands"]?.intValue ?? 0 }
        let queueBits =
            CastMediaCommand.queueShuffle | CastMediaCommand.queueRepeatAll | CastMediaCommand.queueRepeatOne
        #expect(commands() == MediaPlayer.baseMediaCommands | CastMediaCommand.queueNext | queueBits)

        #expect(harness.command("QUEUE_NEXT", 1).reply(to: 1)?.firstStatus?["currentItemId"]?.intValue == ids[1])
        #expect(
            commands() & (CastMediaCommand.queueNext | CastMediaCommand.queuePrevious) == CastMediaCommand.queueNext
                | CastMediaCommand.queuePrevious)
        _ = harness.command("QUEUE_NEXT", 2)
        #expect(commands() & CastMediaCommand.queueNext == 0)
        #expect(harness.command("QUEUE_NEXT", 3).reply(to: 3)?["reason"] == "INVALID_PARAMS")
        #expect(harness.command("QUEUE_PREV", 4).reply(to: 4)?.firstStatus?["currentItemId"]?.intValue == ids[1])

        let single = try DeviceHarness.loaded(sampleMedia)
        #expect(single.status()?["supportedMediaCommands"]?.intValue == MediaPlayer.baseMediaCommands)
    }

    @Test("An item the device cannot play: reached on its own, IDLE ERROR; jumped to, LOAD_FAILED to the requester")
    func unplayableItem() throws {
        let flv = ["media": queueMedia("bad", contentType: "video/x-flv")]
        let reached = try Self.queue(["a", "b"], items: [1: flv])
        let ended = reached.advance(by: .seconds(100)).broadcastStatuses
        #expect(ended.last?["idleReason"] == "ERROR")
        #expect(reached.device.player == nil)

        let jumped = try Self.queue(["a", "b"], items: [1: flv])
        let sent = jumped.command("QUEUE_NEXT", 1)
        #expect(sent.reply(to: 1)?["type"] == "LOAD_FAILED")
        #expect(sent.reply(to: 1)?["detailedErrorCode"] == 104)
        #expect(sent.broadcastStatuses.last?["idleReason"] == "ERROR")
    }

    @Test("--queue-window: statuses carry N items around the current one; QUEUE_GET_ITEM_IDS has them all")
    func queueWindow() throws {
        let names = (0..<10).map { "item\($0)" }
        let harness = try Self.queue(names, settings: EmulatedDevice.Settings(queueWindow: 3))
        let all = try #require(
            harness.command("QUEUE_GET_ITEM_IDS", 1).reply(to: 1)?["itemIds"]?.arrayValue?.compactMap { $0.intValue })
        #expect(all.count == 10)
        #expect(Self.itemIDs(harness.status()) == Array(all[0..<3]))  // the first: it and the two after
        let middle = harness.command("QUEUE_UPDATE", 2, ["currentItemId": .number(Double(all[5]))])
        #expect(Self.itemIDs(middle.reply(to: 2)?.firstStatus) == Array(all[4..<7]))  // one before, one after
        #expect(middle.broadcastStatuses.allSatisfy { Self.itemIDs($0) == Array(all[4..<7]) })
        let last = harness.command("QUEUE_UPDATE", 3, ["currentItemId": .number(Double(all[9]))])
        #expect(Self.itemIDs(last.reply(to: 3)?.firstStatus) == Array(all[7..<10]))
        // orderId stays the item's place in the whole queue.
        #expect(harness.status()?["items"]?.arrayValue?.map { $0["orderId"] } == [7, 8, 9])

        let short = try Self.queue(["a", "b"], settings: EmulatedDevice.Settings(queueWindow: 3))
        #expect(Self.itemIDs(short.status()).count == 2)
    }

    @Test("QUEUE_CHANGE to every sender: INSERT, REMOVE, UPDATE (a reorder: every id), ITEMS_CHANGE, numbered")
    func queueChanges() throws {
        let harness = try Self.queue(["a", "b", "c"])
        let ids = Self.itemIDs(harness.status())
        func change(_ sent: [DeviceHarness.Sent]) -> JSONValue? {
            let changes = sent.filter { $0.type == "QUEUE_CHANGE" }
            #expect(changes.count == 1 && changes.allSatisfy(\.isBroadcast), "\(sent.map(\.payload))")
            return changes.first?.payload
        }

        let insert = try #require(
            change(
                harness.command(
                    "QUEUE_INSERT", 1, ["items": [["media": queueMedia("d")]], "insertBefore": .number(Double(ids[1]))])
            ))
        let inserted = try #require(insert["itemIds"]?.arrayValue?.compactMap { $0.intValue })
        #expect(insert["changeType"] == "INSERT" && inserted.count == 1 && !ids.contains(inserted[0]))
        #expect(insert["insertBefore"]?.intValue == ids[1] && insert["sequenceNumber"] == 1)
        #expect(insert["requestId"] == 0)

        let remove = try #require(change(harness.command("QUEUE_REMOVE", 2, ["itemIds": [.number(Double(ids[2]))]])))
        #expect(remove["changeType"] == "REMOVE" && remove["itemIds"]?.arrayValue?.compactMap(\.intValue) == [ids[2]])
        #expect(remove["sequenceNumber"] == 2)

        let reorder = try #require(
            change(
                harness.command(
                    "QUEUE_REORDER", 3, ["itemIds": [.number(Double(ids[0]))]])))  // to the end
        #expect(reorder["changeType"] == "UPDATE")
        #expect(reorder["itemIds"]?.arrayValue?.compactMap(\.intValue) == [inserted[0], ids[1], ids[0]])
        #expect(reorder["reorderItemIds"]?.arrayValue?.compactMap(\.intValue) == [ids[0]])

        let update = try #require(
            change(
                harness.command(
                    "QUEUE_UPDATE", 4, ["items": [["itemId": .number(Double(ids[1])), "customData": ["x": 1]]]])))
        #expect(
            update["changeType"] == "ITEMS_CHANGE" && update["itemIds"]?.arrayValue?.compactMap(\.intValue) == [ids[1]])
        #expect(update["sequenceNumber"] == 4)

        // A jump alone changes no item: no QUEUE_CHANGE.
        let jump = harness.command("QUEUE_UPDATE", 5, ["jump": 1])
        #expect(jump.filter { $0.type == "QUEUE_CHANGE" }.isEmpty)
    }

    @Test("QUEUE_GET_ITEM_IDS and QUEUE_GET_ITEMS (the sender SDK's MediaQueue)")
    func fetchItems() throws {
        let harness = try Self.queue(["a", "b"])
        let ids = Self.itemIDs(harness.status())
        let idReply = harness.command("QUEUE_GET_ITEM_IDS", 1)
        #expect(idReply.count == 1)
        #expect(idReply.reply(to: 1)?["type"] == "QUEUE_ITEM_IDS")
        #expect(idReply.reply(to: 1)?["itemIds"]?.arrayValue?.compactMap(\.intValue) == ids)
        let items = harness.command("QUEUE_GET_ITEMS", 2, ["itemIds": [.number(Double(ids[1])), 9999]]).reply(to: 2)
        #expect(items?["type"] == "QUEUE_ITEMS")
        #expect(items?["items"]?.arrayValue?.count == 1)
        #expect(items?["items"]?.arrayValue?.first?["media"]?["contentId"] == queueMedia("b")["contentId"])
    }
}
