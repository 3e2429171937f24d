import CastdSupport

/// The records castd logged lately, for `castc logs`: the last ``capacity`` records, numbered,
/// and every new one fanned out to followers (`castc logs -f`).
///
/// Appending never blocks and never waits for a reader. Each follower has a queue of its own,
/// bounded by ``followerQueueLimit``; a follower that falls behind loses its oldest queued records
/// and learns how many it missed from the next record it reads (``LogEntry/droppedBefore``).
/// Nobody else is affected: not the logging code, not other followers.
///
/// Nothing but the buffer's own bookkeeping runs under its lock: enqueueing to a follower is
/// `AsyncStream.Continuation.yield`, which stores the record or hands it to a suspended reader
/// without running it. Ending a follower (which runs its `onTermination`, which takes the lock)
/// happens outside the lock. So a log statement anywhere, even one that a reader's own code makes
/// while it handles a record, cannot deadlock on the buffer.
public final class LogRecordBuffer: Sendable {
    public static let defaultCapacity = 1000

    /// How many records the buffer keeps.
    public let capacity: Int
    /// How many records one follower may have waiting before it loses the oldest.
    public let followerQueueLimit: Int

    private struct State {
        /// A ring of at most `capacity` records; `head` is the oldest once it is full.
        var ring: [LogEntry] = []
        var head = 0
        var nextSequence: UInt64 = 1
        var followers: [UInt64: AsyncStream<LogEntry>.Continuation] = [:]
        var nextFollowerID: UInt64 = 0
        var isShutDown = false
    }
    private let state: Locked<State>

    public init(capacity: Int = defaultCapacity, followerQueueLimit: Int = defaultCapacity) {
        precondition(capacity > 0 && followerQueueLimit > 0, "a log buffer holds at least one record")
        self.capacity = capacity
        self.followerQueueLimit = followerQueueLimit
        var state = State()
        state.ring.reserveCapacity(capacity)
        self.state = Locked(state)
    }

    /// Keeps `entry`, numbered, and hands it to every follower. Returns its sequence number.
    @discardableResult
    public func append(_ entry: LogEntry) -> UInt64 {
        var entry = entry
        entry.droppedBefore = 0
        return state.withLock { state in
            entry.sequence = state.nextSequence
            state.nextSequence += 1
            if state.ring.count < capacity {
                state.ring.append(entry)
            } else {
                state.ring[state.head] = entry
                state.head = (state.head + 1) % capacity
            }
            // Under the lock, so that every follower gets records in sequence order. yield never
            // blocks: a full queue drops its oldest record.
            for continuation in state.followers.values { continuation.yield(entry) }
            return entry.sequence
        }
    }

    /// The newest `count` records (fewer if fewer were kept), oldest first.
    public func recent(_ count: Int) -> [LogEntry] {
        state.withLock { Self.newest(count, of: $0) }
    }

    /// The sequence number the next record will get.
    public var nextSequence: UInt64 { state.withLock { $0.nextSequence } }

    /// How many followers there are now.
    public var followerCount: Int { state.withLock { $0.followers.count } }

    /// The newest `recent` records, and a follower that gets every record appended after them:
    /// both taken at one instant, so nothing is missed or repeated in between. After
    /// ``shutDown()`` the follower is already finished.
    public func follow(recent: Int) -> (recent: [LogEntry], follower: LogFollower) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: LogEntry.self, bufferingPolicy: .bufferingNewest(followerQueueLimit))
        let (records, id, last, open) = state.withLock { state in
            let id = state.nextFollowerID
            state.nextFollowerID += 1
            if !state.isShutDown { state.followers[id] = continuation }
            return (Self.newest(recent, of: state), id, state.nextSequence - 1, !state.isShutDown)
        }
        if open {
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.followers.removeValue(forKey: id) }
            }
        } else {
            continuation.finish()
        }
        return (records, LogFollower(stream: stream, continuation: continuation, after: last))
    }

    /// Ends every follower, now and to come. Records are still kept.
    public func shutDown() {
        let followers = state.withLock { state in
            state.isShutDown = true
            defer { state.followers.removeAll() }
            return Array(state.followers.values)
        }
        for continuation in followers { continuation.finish() }
    }

    private static func newest(_ count: Int, of state: State) -> [LogEntry] {
        let count = min(max(count, 0), state.ring.count)
        guard count > 0 else { return [] }
        let ordered = state.ring[state.head...] + state.ring[..<state.head]
        return Array(ordered.suffix(count))
    }
}

/// The records appended to a ``LogRecordBuffer`` after ``LogRecordBuffer/follow(recent:)``, in
/// order. A record after a gap (the follower read too slowly and its queue overflowed) carries
/// in ``LogEntry/droppedBefore`` how many were lost. The sequence ends when the buffer shuts
/// down, ``finish()`` is called, or the reading task is cancelled.
public struct LogFollower: AsyncSequence, Sendable {
    public typealias Element = LogEntry
    public typealias Failure = Never

    let stream: AsyncStream<LogEntry>
    let continuation: AsyncStream<LogEntry>.Continuation
    /// The sequence number of the last record before this follower's first.
    let after: UInt64

    /// Ends the sequence once the reader has read what is queued.
    public func finish() { continuation.finish() }

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator(), last: after)
    }

    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<LogEntry>.Iterator
        var last: UInt64

        public mutating func next() async -> LogEntry? {
            guard var entry = await base.next() else { return nil }
            // Every record is yielded to every follower in sequence order, so a gap is exactly
            // what this follower's queue dropped.
            entry.droppedBefore = entry.sequence > last + 1 ? entry.sequence - last - 1 : 0
            last = entry.sequence
            return entry
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> LogEntry? {
            guard var entry = await base.next(isolation: actor) else { return nil }
            entry.droppedBefore = entry.sequence > last + 1 ? entry.sequence - last - 1 : 0
            last = entry.sequence
            return entry
        }
    }
}
