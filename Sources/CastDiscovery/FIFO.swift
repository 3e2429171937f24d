/// A first-in first-out queue with O(1) push and pop (amortized): an array and a head index,
/// compacted when more than half of it has been popped.
struct FIFO<Element> {
    var items: [Element] = []
    var head = 0

    var isEmpty: Bool { head == items.count }
    var count: Int { items.count - head }

    mutating func push(_ item: Element) {
        items.append(item)
    }

    func peek() -> Element? {
        head < items.count ? items[head] : nil
    }

    /// Removes every element `shouldRemove` picks, keeping the order of the rest.
    mutating func removeAll(where shouldRemove: (Element) -> Bool) {
        items = items[head...].filter { !shouldRemove($0) }
        head = 0
    }

    mutating func pop() -> Element? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head > 64, head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }
}

extension FIFO: Sendable where Element: Sendable {}
