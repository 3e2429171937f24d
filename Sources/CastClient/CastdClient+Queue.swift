import CastdAPI
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The media queue: a list of items the player plays one after another. Item ids are assigned
/// by the device (`CastdMediaStatus.items[].itemID`); new items are sent with id 0.
extension CastdClient {
    /// Replaces whatever plays with a queue of `items` (starting a session with the Default Media
    /// Receiver first if the device has none).
    ///
    /// ```swift
    /// let items = ["https://example.com/a.mp3", "https://example.com/b.mp3"].map {
    ///     CastdQueueItem(media: CastdMediaInformation(url: $0, contentType: "audio/mpeg"))
    /// }
    /// try await client.queueLoad(items, repeatMode: .all)
    /// ```
    ///
    /// - Parameters:
    ///   - items: The items, in order; at least one.
    ///   - startIndex: The index in `items` of the item to play first.
    ///   - repeatMode: What happens at the end of an item and of the queue.
    ///   - startTime: Seconds into the first item played.
    ///   - customDataJSON: Custom data for the receiver app, a JSON object; `""` for none.
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if `items` is empty,
    ///   `startIndex` is past its end, or `customDataJSON` is not a JSON object.
    public func queueLoad(
        _ items: [CastdQueueItem],
        startIndex: Int = 0,
        repeatMode: CastdRepeatMode = .off,
        startTime: Double = 0,
        customDataJSON: String = "",
        device: String = ""
    ) async throws -> CastdMediaStatus {
        guard let index = UInt32(exactly: startIndex) else {
            throw CastdError(.invalidArgument, "start index \(startIndex) is not an index into the items")
        }
        var request = Castd_V1_QueueLoadRequest()
        request.device = device
        request.items = items
        request.startIndex = index
        request.repeatMode = repeatMode
        request.startTime = startTime
        request.customDataJson = customDataJSON
        if !customDataJSON.isEmpty { try Self.checkJSONObject(customDataJSON, what: "customDataJSON") }
        return try await unary(CastdMethods.queueLoad, request)
    }

    /// Inserts items into the queue.
    ///
    /// - Parameters:
    ///   - items: The new items (their `itemID` 0); at least one.
    ///   - itemID: The item to insert them before; 0 appends them at the end.
    ///   - playNow: Jump to the first inserted item.
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if `items` is empty.
    public func queueInsert(
        _ items: [CastdQueueItem],
        before itemID: Int64 = 0,
        playNow: Bool = false,
        device: String = ""
    ) async throws -> CastdMediaStatus {
        var request = Castd_V1_QueueInsertRequest()
        request.device = device
        request.items = items
        request.insertBeforeItemID = itemID
        request.playNow = playNow
        return try await unary(CastdMethods.queueInsert, request)
    }

    /// Removes items from the queue by id.
    ///
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if `itemIDs` is
    ///   empty.
    public func queueRemove(_ itemIDs: [Int64], device: String = "") async throws -> CastdMediaStatus {
        var request = Castd_V1_QueueRemoveRequest()
        request.device = device
        request.itemIds = itemIDs
        return try await unary(CastdMethods.queueRemove, request)
    }

    /// Moves items within the queue: `itemIDs`, in that order, go before the item `before`
    /// (0: to the end).
    ///
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if `itemIDs` is
    ///   empty or contains `before`.
    public func queueReorder(_ itemIDs: [Int64], before: Int64 = 0, device: String = "") async throws
        -> CastdMediaStatus
    {
        var request = Castd_V1_QueueReorderRequest()
        request.device = device
        request.itemIds = itemIDs
        request.insertBeforeItemID = before
        return try await unary(CastdMethods.queueReorder, request)
    }

    /// Updates the queue (the device's QUEUE_UPDATE), as the request gives it: `currentItemID`
    /// (jump to that item; 0 leaves it), `jump` (+1 next, -1 previous), `repeatMode` (unset
    /// leaves it), `items` (items to change, by `itemID`), `currentTime` (where to start in the
    /// item jumped to). ``queueNext(device:)``, ``queuePrevious(device:)``,
    /// ``queueJump(to:startTime:device:)`` and ``setRepeatMode(_:device:)`` are the common cases.
    public func queueUpdate(_ request: CastdQueueUpdateRequest) async throws -> CastdMediaStatus {
        return try await unary(CastdMethods.queueUpdate, request)
    }

    /// Plays the next item in the queue.
    public func queueNext(device: String = "") async throws -> CastdMediaStatus {
        var request = CastdQueueUpdateRequest()
        request.device = device
        request.jump = 1
        return try await queueUpdate(request)
    }

    /// Plays the previous item in the queue.
    public func queuePrevious(device: String = "") async throws -> CastdMediaStatus {
        var request = CastdQueueUpdateRequest()
        request.device = device
        request.jump = -1
        return try await queueUpdate(request)
    }

    /// Plays the queue item `itemID`, from `startTime` seconds into it.
    ///
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if `itemID` is not
    ///   positive.
    public func queueJump(to itemID: Int64, startTime: Double = 0, device: String = "") async throws
        -> CastdMediaStatus
    {
        var request = CastdQueueUpdateRequest()
        request.device = device
        request.currentItemID = itemID
        request.currentTime = startTime
        return try await queueUpdate(request)
    }

    /// Sets what happens at the end of an item and of the queue: `.off` (stop at the end),
    /// `.all` (start over), `.single` (repeat the item), `.allAndShuffle` (start over, shuffled).
    public func setRepeatMode(_ repeatMode: CastdRepeatMode, device: String = "") async throws -> CastdMediaStatus {
        var request = CastdQueueUpdateRequest()
        request.device = device
        request.repeatMode = repeatMode
        return try await queueUpdate(request)
    }
}
