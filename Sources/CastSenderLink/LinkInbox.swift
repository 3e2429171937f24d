import CastdSupport
import CastProtocol
import NIOCore

/// The messages a link has read from its device and its consumer has not taken yet: at most
/// `limit` of them. When that many wait, the link stops reading from the device until the
/// consumer takes one: the device's messages then wait in TCP, which slows the device down. So
/// a device that sends faster than castd handles (a flood of statuses) costs castd a bounded
/// amount of memory, whatever it sends, and nothing it sent is dropped.
///
/// One producer (the link's reader) and one consumer (``CastLink/messages``).
final class LinkInbox: Sendable {
    /// How many messages may wait (each at most a 64 KiB frame).
    let limit: Int

    private struct State {
        var messages = CircularBuffer<LinkMessage>()
        var finished = false
        /// The consumer, waiting for a message.
        var consumer: CheckedContinuation<LinkMessage?, Never>?
        /// The producer, waiting for room.
        var producer: CheckedContinuation<Void, Never>?
        /// The most that have waited at once.
        var highWater = 0
    }

    private let state = Locked(State())

    init(limit: Int) {
        precondition(limit > 0)
        self.limit = limit
    }

    /// Messages waiting now.
    var count: Int { state.withLock { $0.messages.count } }

    /// The most messages that have waited at once.
    var highWater: Int { state.withLock { $0.highWater } }

    /// Hands `message` to the consumer; waits while `limit` messages wait already. After
    /// ``finish()``, or when the calling task is cancelled, the message is dropped: the link is
    /// closing.
    func push(_ message: LinkMessage) async {
        while !Task.isCancelled {
            enum Outcome {
                case handedOver(CheckedContinuation<LinkMessage?, Never>)
                case done
                case full
            }
            let outcome = state.withLock { state -> Outcome in
                if state.finished { return .done }
                if let consumer = state.consumer {
                    state.consumer = nil
                    return .handedOver(consumer)
                }
                guard state.messages.count < limit else { return .full }
                state.messages.append(message)
                state.highWater = max(state.highWater, state.messages.count)
                return .done
            }
            switch outcome {
            case .handedOver(let consumer):
                consumer.resume(returning: message)
                return
            case .done:
                return
            case .full:
                await waitForRoom()
            }
        }
    }

    private func waitForRoom() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = state.withLock { state -> Bool in
                    guard !state.finished, state.messages.count >= limit, !Task.isCancelled else { return false }
                    precondition(state.producer == nil, "one producer at a time")
                    state.producer = continuation
                    return true
                }
                if !waiting { continuation.resume() }
            }
        } onCancel: {
            let producer = state.withLock { state in
                defer { state.producer = nil }
                return state.producer
            }
            producer?.resume()
        }
    }

    /// The next message; nil once finished and every message has been taken, or when the
    /// calling task is cancelled.
    func next() async -> LinkMessage? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<LinkMessage?, Never>) in
                let (now, producer) = state.withLock {
                    state -> (LinkMessage??, CheckedContinuation<Void, Never>?) in
                    if let message = state.messages.popFirst() {
                        defer { state.producer = nil }
                        return (.some(message), state.producer)
                    }
                    if state.finished || Task.isCancelled { return (.some(nil), nil) }
                    precondition(state.consumer == nil, "one consumer at a time")
                    state.consumer = continuation
                    return (nil, nil)
                }
                producer?.resume()
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let consumer = state.withLock { state in
                defer { state.consumer = nil }
                return state.consumer
            }
            consumer?.resume(returning: nil)
        }
    }

    /// No more messages come: the consumer gets those waiting, then nil; a waiting producer
    /// goes on (and drops what it pushes).
    func finish() {
        let (consumer, producer) = state.withLock { state in
            state.finished = true
            defer {
                state.consumer = nil
                state.producer = nil
            }
            return (state.consumer, state.producer)
        }
        consumer?.resume(returning: nil)
        producer?.resume()
    }
}

extension CastLink {
    /// The messages of a link, in order, as its device sent them (``CastLink/messages``). Ends
    /// when the link closes. At most ``CastLink/messageBufferLimit`` wait for the consumer; a
    /// consumer that is slower than its device slows the device down.
    public struct Messages: AsyncSequence, Sendable {
        public typealias Element = LinkMessage
        public typealias Failure = Never

        let inbox: LinkInbox

        public struct AsyncIterator: AsyncIteratorProtocol {
            public typealias Element = LinkMessage
            public typealias Failure = Never

            let inbox: LinkInbox

            public mutating func next() async -> LinkMessage? {
                await inbox.next()
            }
        }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(inbox: inbox)
        }
    }
}
