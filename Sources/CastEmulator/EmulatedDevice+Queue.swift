import CastProtocol

/// The queue commands: QUEUE_LOAD, QUEUE_INSERT, QUEUE_REMOVE, QUEUE_REORDER, QUEUE_UPDATE,
/// QUEUE_NEXT / QUEUE_PREV (older senders), QUEUE_GET_ITEM_IDS and QUEUE_GET_ITEMS. Unknown item
/// ids and bad repeat modes are INVALID_REQUEST INVALID_PARAMS, and nothing changes then.
extension EmulatedDevice {
    static let invalidParams = MediaCommandResult.refused(.invalidRequest("INVALID_PARAMS"))

    /// QUEUE_LOAD {items, startIndex, repeatMode, currentTime, customData}: a new media session.
    mutating func queueLoad(_ command: MediaCommand, into outcome: inout DeviceOutcome) {
        guard let items = command.payload["items"]?.arrayValue, !items.isEmpty else {
            refuseLoad(command, reason: "INVALID_PARAMS", record: nil, &outcome)
            return
        }
        loadQueue(
            command, items: items, startIndex: command.payload["startIndex"],
            repeatMode: command.payload["repeatMode"], into: &outcome
        )
    }

    /// A queue from QUEUE_LOAD or from LOAD's `queueData`.
    mutating func loadQueue(
        _ command: MediaCommand, items entries: [JSONValue], startIndex: JSONValue?, repeatMode: JSONValue?,
        into outcome: inout DeviceOutcome
    ) {
        guard let items = queueItems(entries) else {
            refuseLoad(command, reason: "INVALID_PARAMS", record: nil, &outcome)
            return
        }
        let index = startIndex.flatMap { $0.isNull ? nil : $0 }.map { $0.intValue.map(Int.init) ?? -1 } ?? 0
        let record = loadRecord(command, media: items[items.indices.contains(index) ? index : 0].media)
        let mode: RepeatMode?
        do {
            mode = try Self.repeatMode(repeatMode)
        } catch {
            refuseLoad(command, reason: "INVALID_PARAMS", record: record, &outcome)
            return
        }
        let rate = command.payload["playbackRate"]?.doubleValue ?? 1
        guard items.indices.contains(index), MediaPlayer.playbackRates.contains(rate) else {
            refuseLoad(command, reason: "INVALID_PARAMS", record: record, &outcome)
            return
        }
        nextItemID += items.count
        startSession(
            command, items: items, startIndex: index, startTime: command.startTime, repeatMode: mode ?? .off,
            rate: rate, record: record, into: &outcome
        )
    }

    /// Queue items from QUEUE_LOAD / QUEUE_INSERT entries, numbered from ``nextItemID`` (which
    /// the caller moves on once it keeps them); nil when one of them is not valid.
    func queueItems(_ entries: [JSONValue]) -> [MediaQueueItem]? {
        var items: [MediaQueueItem] = []
        for (offset, entry) in entries.enumerated() {
            guard
                let item = MediaQueueItem(
                    json: entry, itemID: nextItemID + offset, defaultDuration: defaultMediaDuration)
            else { return nil }
            items.append(item)
        }
        return items
    }

    /// A repeat mode as sent; nil when absent; INVALID_PARAMS when it is not one.
    static func repeatMode(_ value: JSONValue?) throws(MediaPlayer.Refusal) -> RepeatMode? {
        guard let value, !value.isNull else { return nil }
        guard let mode = value.stringValue.flatMap(RepeatMode.init(rawValue:)) else {
            throw .invalidRequest("INVALID_PARAMS")
        }
        return mode
    }

    /// A non-empty list of distinct item ids, each in `session`'s queue.
    static func existingItemIDs(_ value: JSONValue?, in session: MediaPlayer) -> [Int]? {
        guard let list = value?.arrayValue, !list.isEmpty else { return nil }
        var ids: [Int] = []
        for entry in list {
            guard let id = entry.intValue, session.index(ofItem: id) != nil, !ids.contains(Int(id)) else { return nil }
            ids.append(Int(id))
        }
        return ids
    }

    mutating func handleQueueCommand(_ command: MediaCommand, into outcome: inout DeviceOutcome) -> MediaCommandResult {
        guard let session = player else { return .refused(.invalidPlayerState) }
        switch command.type {
        case "QUEUE_INSERT": return queueInsert(command, into: &outcome)
        case "QUEUE_REMOVE": return queueRemove(command, into: &outcome)
        case "QUEUE_REORDER": return queueReorder(command, into: &outcome)
        case "QUEUE_UPDATE": return queueUpdate(command, into: &outcome)
        case "QUEUE_NEXT", "QUEUE_PREV":
            guard let index = session.jumpTarget(command.type == "QUEUE_NEXT" ? 1 : -1), index != session.currentIndex
            else { return Self.invalidParams }
            return jump(to: index, position: nil, command, into: &outcome)
        case "QUEUE_GET_ITEM_IDS":
            reply(
                [
                    "type": "QUEUE_ITEM_IDS", "requestId": command.requestID,
                    "itemIds": .array(session.items.map { .number(Double($0.itemID)) }),
                ],
                to: command, &outcome
            )
            return .answered
        case "QUEUE_GET_ITEMS":
            guard let wanted = command.payload["itemIds"]?.arrayValue else { return Self.invalidParams }
            let items = wanted.compactMap { session.index(ofItem: $0.intValue) }.map {
                session.items[$0].json(orderID: $0, includeMedia: true)
            }
            reply(
                ["type": "QUEUE_ITEMS", "requestId": command.requestID, "items": .array(items)], to: command, &outcome)
            return .answered
        default:
            return .refused(.invalidRequest("INVALID_COMMAND"))
        }
    }

    /// Makes another item current, keeping the media session; LOAD_FAILED to the requester
    /// when the device cannot play it (the session then ends IDLE ERROR).
    mutating func jump(
        to index: Int, position: Double?, _ command: MediaCommand, into outcome: inout DeviceOutcome
    ) -> MediaCommandResult {
        guard let itemID = player?.items[index].itemID else { return .refused(.invalidPlayerState) }
        guard enterItem(at: index, position: position, command.transportID, now: command.now, &outcome) else {
            reply(loadFailed(command.requestID, itemID: itemID), to: command, &outcome)
            return .answered
        }
        return .changed(includeMedia: true)
    }

    /// QUEUE_INSERT {items, insertBefore (absent: at the end), currentItemIndex (into the new
    /// items) or currentItemId (an existing item) to jump to, currentTime}.
    private mutating func queueInsert(_ command: MediaCommand, into outcome: inout DeviceOutcome) -> MediaCommandResult
    {
        guard var session = player, let entries = command.payload["items"]?.arrayValue, !entries.isEmpty,
            let items = queueItems(entries)
        else {
            return Self.invalidParams
        }
        var before: Int?
        if let insertBefore = command.payload["insertBefore"], !insertBefore.isNull {
            guard let index = session.index(ofItem: insertBefore.intValue) else { return Self.invalidParams }
            before = index
        }
        var targetID: Int?
        if let value = command.payload["currentItemIndex"], !value.isNull {
            guard let index = value.intValue.map(Int.init), items.indices.contains(index) else {
                return Self.invalidParams
            }
            targetID = items[index].itemID
        } else if let value = command.payload["currentItemId"], !value.isNull {
            guard let index = session.index(ofItem: value.intValue) else { return Self.invalidParams }
            targetID = session.items[index].itemID
        }
        nextItemID += items.count
        let insertBefore = before.map { session.items[$0].itemID }
        session.insert(items, before: before)
        player = session
        announceQueueChange(
            .insert, items.map(\.itemID), insertBefore: insertBefore, command.transportID, &outcome)
        if let targetID, targetID != session.current.itemID,
            let index = session.items.firstIndex(where: { $0.itemID == targetID })
        {
            return jump(to: index, position: Self.time(command.payload["currentTime"]), command, into: &outcome)
        }
        return .changed(includeMedia: true)
    }

    /// QUEUE_REMOVE {itemIds}: removing the current item moves on to the next one (else the one
    /// before); removing every item ends the session (IDLE CANCELLED).
    private mutating func queueRemove(_ command: MediaCommand, into outcome: inout DeviceOutcome) -> MediaCommandResult
    {
        guard var session = player, let ids = Self.existingItemIDs(command.payload["itemIds"], in: session) else {
            return Self.invalidParams
        }
        let idle = session.idleEntry(reason: "CANCELLED")
        switch session.remove(Set(ids)) {
        case .currentKept:
            player = session
            announceQueueChange(.remove, ids, command.transportID, &outcome)
            return .changed(includeMedia: false)
        case .currentRemoved(let successor?):
            player = session
            announceQueueChange(.remove, ids, command.transportID, &outcome)
            return jump(to: successor, position: nil, command, into: &outcome)
        case .currentRemoved(nil):
            player = nil
            outcome.note(.info, "media session \(session.mediaSessionID): queue emptied → IDLE (CANCELLED)")
            replyAndBroadcast(idle, command, &outcome)
            return .answered
        }
    }

    /// QUEUE_REORDER {itemIds, insertBefore (absent: to the end)}.
    private mutating func queueReorder(_ command: MediaCommand, into outcome: inout DeviceOutcome)
        -> MediaCommandResult
    {
        guard var session = player, let ids = Self.existingItemIDs(command.payload["itemIds"], in: session) else {
            return Self.invalidParams
        }
        var beforeID: Int?
        if let insertBefore = command.payload["insertBefore"], !insertBefore.isNull {
            guard let index = session.index(ofItem: insertBefore.intValue), !ids.contains(session.items[index].itemID)
            else { return Self.invalidParams }
            beforeID = session.items[index].itemID
        }
        session.reorder(ids, before: beforeID)
        player = session
        // A reorder is an UPDATE with every item id in the new order (and the ones moved).
        announceQueueChange(
            .update, session.items.map(\.itemID), reordered: ids, command.transportID, &outcome)
        return .changed(includeMedia: false)
    }

    /// QUEUE_UPDATE {items (updated by itemId), repeatMode, shuffle, currentItemId or jump (±n),
    /// currentTime}.
    private mutating func queueUpdate(_ command: MediaCommand, into outcome: inout DeviceOutcome) -> MediaCommandResult
    {
        guard var session = player else { return .refused(.invalidPlayerState) }
        let payload = command.payload
        let mode: RepeatMode?
        do {
            mode = try Self.repeatMode(payload["repeatMode"])
        } catch {
            return .refused(error)
        }
        var changedIDs: [Int] = []
        if let updates = payload["items"], !updates.isNull {
            guard let list = updates.arrayValue else { return Self.invalidParams }
            for update in list {
                guard let index = session.index(ofItem: update["itemId"]?.intValue),
                    session.items[index].update(with: update, defaultDuration: defaultMediaDuration)
                else { return Self.invalidParams }
                changedIDs.append(session.items[index].itemID)
            }
        }
        let itemsChanged = !changedIDs.isEmpty
        if let mode { session.repeatMode = mode }
        if payload["shuffle"]?.boolValue == true { session.shuffle(restart: false) }
        var target: Int?
        if let value = payload["currentItemId"], !value.isNull {
            guard let index = session.index(ofItem: value.intValue) else { return Self.invalidParams }
            if index != session.currentIndex { target = index }
        } else if let value = payload["jump"], !value.isNull {
            guard let offset = value.intValue, let index = session.jumpTarget(Int(offset)) else {
                return Self.invalidParams
            }
            if offset != 0 { target = index }
        }
        let position = Self.time(payload["currentTime"])
        if payload["currentTime"].map({ !$0.isNull && position == nil }) == true { return Self.invalidParams }
        if target == nil, let position {
            do {
                try session.seek(["currentTime": .number(position)], at: command.now)
            } catch {
                return .refused(error)
            }
        }
        player = session
        if itemsChanged { announceQueueChange(.itemsChange, changedIDs, command.transportID, &outcome) }
        if let target { return jump(to: target, position: position, command, into: &outcome) }
        return .changed(includeMedia: itemsChanged)
    }

    /// QUEUE_CHANGE to every sender of the app: what changed in the queue, by item id, so that
    /// senders that keep the whole queue (the SDK's media queue) need not fetch it again.
    /// `sequenceNumber` counts the session's changes.
    mutating func announceQueueChange(
        _ changeType: CastQueueChangeType, _ itemIDs: [Int], insertBefore: Int? = nil, reordered: [Int]? = nil,
        _ transportID: String, _ outcome: inout DeviceOutcome
    ) {
        guard var session = player else { return }
        session.queueSequence += 1
        player = session
        var payload: [String: JSONValue] = [
            "type": "QUEUE_CHANGE", "requestId": 0, "changeType": .string(changeType.rawValue),
            "itemIds": .array(itemIDs.map { .number(Double($0)) }),
            "sequenceNumber": .number(Double(session.queueSequence)),
        ]
        if let insertBefore { payload["insertBefore"] = .number(Double(insertBefore)) }
        if let reordered { payload["reorderItemIds"] = .array(reordered.map { .number(Double($0)) }) }
        outcome.note(.info, "media session \(session.mediaSessionID): QUEUE_CHANGE \(changeType.rawValue) \(itemIDs)")
        broadcast(from: transportID, CastNamespace.media, .object(payload), &outcome)
    }

    /// A time in seconds as sent (a finite number), else nil.
    static func time(_ value: JSONValue?) -> Double? {
        value?.doubleValue.flatMap { $0.isFinite ? $0 : nil }
    }
}

extension EmulatedDevice {
    /// A hostile device's queue churn: every other item (the current one kept) is replaced by
    /// a new one, without a QUEUE_CHANGE; then a MEDIA_STATUS to every sender, whose items name
    /// ids the senders do not know, so that they ask for the order (QUEUE_GET_ITEM_IDS) and
    /// find half of it removed and half of it inserted in runs of one.
    mutating func churnQueue(now: Duration) -> DeviceOutcome {
        var outcome = DeviceOutcome()
        guard var session = player, let running else { return outcome }
        let current = session.current.itemID
        for index in session.items.indices where index % 2 == 1 && session.items[index].itemID != current {
            session.items[index].itemID = nextItemID
            nextItemID += 1
        }
        player = session
        outcome.note(.info, "media session \(session.mediaSessionID): queue churned, \(session.items.count) items")
        broadcastStatus(session.statusEntry(at: now, includeMedia: false), running.transportID, &outcome)
        return outcome
    }
}
