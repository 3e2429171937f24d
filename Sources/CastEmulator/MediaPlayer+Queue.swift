import CastProtocol
import CastdSupport

/// Changes to the queue's order and content. The current item stays current unless said
/// otherwise; `orderId`s follow the new order.
extension MediaPlayer {
    /// Inserts `newItems` before the item at `index` (at the end when nil).
    mutating func insert(_ newItems: [MediaQueueItem], before index: Int?) {
        let currentID = current.itemID
        items.insert(contentsOf: newItems, at: index ?? items.count)
        currentIndex = items.firstIndex { $0.itemID == currentID } ?? currentIndex
    }

    enum Removal {
        case currentKept
        /// The current item was removed; its successor (the first remaining item after it, else
        /// the last one before it) is at this index, or the queue is empty.
        case currentRemoved(successor: Int?)
    }

    /// Removes the items with `ids`; the queue may be left empty.
    mutating func remove(_ ids: Set<Int>) -> Removal {
        let currentID = current.itemID
        guard ids.contains(currentID) else {
            items.removeAll { ids.contains($0.itemID) }
            currentIndex = items.firstIndex { $0.itemID == currentID } ?? 0
            return .currentKept
        }
        let after = items[(currentIndex + 1)...].first { !ids.contains($0.itemID) }?.itemID
        let before = items[..<currentIndex].last { !ids.contains($0.itemID) }?.itemID
        items.removeAll { ids.contains($0.itemID) }
        let successor = (after ?? before).flatMap { id in items.firstIndex { $0.itemID == id } }
        return .currentRemoved(successor: successor)
    }

    /// Moves the items with `ids`, in that order, before the item `beforeID` (to the end when nil).
    mutating func reorder(_ ids: [Int], before beforeID: Int?) {
        let currentID = current.itemID
        let moving = ids.compactMap { id in items.first { $0.itemID == id } }
        items.removeAll { ids.contains($0.itemID) }
        let insertAt = beforeID.flatMap { id in items.firstIndex { $0.itemID == id } } ?? items.count
        items.insert(contentsOf: moving, at: insertAt)
        currentIndex = items.firstIndex { $0.itemID == currentID } ?? 0
    }

    /// Shuffles the queue in place with a generator seeded from the media session id and the
    /// number of shuffles so far, so that a test can predict it. The current item stays current
    /// (at its new index) unless `restart`, which makes the first item of the new order current.
    mutating func shuffle(restart: Bool) {
        let currentID = current.itemID
        var generator = SplitMix64(seed: UInt64(mediaSessionID) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(shuffles))
        shuffles += 1
        items.shuffle(using: &generator)
        currentIndex = restart ? 0 : items.firstIndex { $0.itemID == currentID } ?? 0
    }
}
