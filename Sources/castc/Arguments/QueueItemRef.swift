import ArgumentParser
import SwiftProtobuf
import CastClient

/// A queue item as people name it: by its position in the queue (1 is the first, as
/// `castc queue` and `castc status` show it), or by the id the device gave it, written `#ID`
/// (`--json` shows the ids: `.items[].itemId`).
enum QueueItemRef: Hashable, CustomStringConvertible {
    case position(Int)
    case id(Int64)

    static func parse(_ text: String) throws -> QueueItemRef {
        if text.hasPrefix("#") {
            let digits = text.dropFirst()
            guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit), let id = Int64(digits), id > 0 else {
                throw ValidationError("'\(text)' is not an item id: write # and the id `castc queue --json` shows")
            }
            return .id(id)
        }
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit), let position = Int(text), position > 0 else {
            throw ValidationError(
                "'\(text)' is not a queue position: give 1 for the first item, as `castc queue` numbers them (or #ID)")
        }
        return .position(position)
    }

    var description: String {
        switch self {
        case .position(let position): "\(position)"
        case .id(let id): "#\(id)"
        }
    }

    var isPosition: Bool { if case .position = self { true } else { false } }

    /// The item's id, its position looked up in `order` (the whole queue's ids, in play order).
    /// A position past the end is OUT_OF_RANGE, naming the positions there are.
    func itemID(in order: [Int64]) throws -> Int64 {
        switch self {
        case .id(let id):
            return id
        case .position(let position):
            guard position <= order.count else {
                throw CastdError(
                    .outOfRange,
                    order.isEmpty
                        ? "the queue is empty: there is no item \(position)"
                        : "the queue has \(order.count) item\(order.count == 1 ? "" : "s"): give 1 to \(order.count), not \(position)"
                )
            }
            return order[position - 1]
        }
    }
}

/// The queue commands that name items: each makes its call once the items are ids.
protocol QueueItemsCommand: CastcCommand {
    associatedtype Request: SwiftProtobuf.Message
    /// The items named, in the order given.
    var itemRefs: [QueueItemRef] { get }
    /// The call, with `ids` the ids of ``itemRefs``, in the same order.
    func call(ids: [Int64]) -> CastcCall<Request, CastdMediaStatus>
}

extension QueueItemsCommand {
    func run() async throws {
        let status = try await options.withClient { client in
            // Positions are the whole queue's, which castd keeps (asked of the device if need be).
            let order =
                itemRefs.contains(where: \.isPosition)
                ? try await client.queue(device: options.deviceSelector).items.map(\.itemID) : []
            return try await call(ids: itemRefs.map { try $0.itemID(in: order) }).send(client)
        }
        try options.printMedia(status)
    }
}
