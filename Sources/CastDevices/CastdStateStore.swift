import CastdSupport
import CastdAPI
import Foundation

/// The daemon's published state — devices, sessions, media — and the one ordered stream of
/// changes to it. Every change gets the next sequence number under one lock, and is queued to
/// every watcher in that order; a snapshot is always consistent with a sequence number.
///
/// A watcher that does not keep up has a bounded queue: on overflow its queue is replaced by a
/// `lagged` event and a fresh snapshot, so nobody else ever waits for it.
public final class CastdStateStore: Sendable {
    private struct State {
        var sequence: UInt64 = 0
        /// What the events published so far say, by the rule every client reads them with.
        var fold = CastdState()
        var devices: [String: CastdDevice] { fold.devices }
        var sessions: [String: CastdSession] { fold.sessions }  // by device id; only live sessions
        var media: [String: CastdMediaStatus] { fold.media }  // by device id
        var castState: CastdCastState { fold.castState }
        var watchers: [Int: Watcher] = [:]
        /// The watchers that are castd's own (`watch(ownedByCastd:)`), not its clients'.
        var ownWatchers: Set<Int> = []
        var nextWatcherID = 0
        /// With a discovery criterion (castd.toml's `launch.filter_devices`), what each device
        /// answered when asked whether it can run the criterion's app: only those that can count
        /// as available in castd's cast state. Nil: no criterion, every listed device counts.
        var criterionAnswers: [String: Bool]?
    }

    private let state = Locked(State())
    public let watcherQueueLimit: Int

    /// `filtersDevices`: castd has a discovery criterion, and its cast state counts only the
    /// devices that said they meet it (``recordCriterion(deviceID:met:)``).
    public init(watcherQueueLimit: Int = 256, filtersDevices: Bool = false) {
        precondition(watcherQueueLimit >= 2)
        self.watcherQueueLimit = watcherQueueLimit
        if filtersDevices { state.withLock { $0.criterionAnswers = [:] } }
    }

    // MARK: reading

    public func snapshot() -> Castd_V1_Snapshot {
        state.withLock { Self.snapshot(of: $0) }
    }

    public var sequence: UInt64 { state.withLock { $0.sequence } }

    /// castd's cast state, as the Cast SDK's session manager gives it (``CastdCastState``).
    public var castState: CastdCastState { state.withLock { $0.castState } }

    /// The snapshot and the sequence number it is current at, taken together.
    public func sequencedSnapshot() -> (sequence: UInt64, snapshot: Castd_V1_Snapshot) {
        state.withLock { ($0.sequence, Self.snapshot(of: $0)) }
    }

    public func device(id: String) -> CastdDevice? { state.withLock { $0.devices[id] } }
    public func session(deviceID: String) -> CastdSession? { state.withLock { $0.sessions[deviceID] } }
    public func media(deviceID: String) -> CastdMediaStatus? { state.withLock { $0.media[deviceID] } }

    /// Devices sorted by friendly name (then id, for a stable order).
    public func devices() -> [CastdDevice] { state.withLock { DeviceSelector.listOrder($0.devices.values) } }

    /// Runs `body` over the devices by id and the live sessions by device id, as they are now,
    /// under the store's lock: for reads that need both and copy neither (finding the device a
    /// call names). `body` must not call back into the store.
    public func withDevicesAndSessions<T>(
        _ body: (_ devices: [String: CastdDevice], _ sessions: [String: CastdSession]) -> T
    ) -> T {
        state.withLock { body($0.devices, $0.sessions) }
    }

    private static func snapshot(of state: State) -> Castd_V1_Snapshot {
        var snapshot = Castd_V1_Snapshot()
        snapshot.devices = DeviceSelector.listOrder(state.devices.values)
        snapshot.sessions = state.sessions.values.sorted { $0.deviceID < $1.deviceID }
        snapshot.media = state.media.values.sorted { $0.deviceID < $1.deviceID }
        snapshot.castState = state.castState
        return snapshot
    }

    // MARK: cast state

    /// A device's cast state, from the session castd holds on it (nil: none).
    static func castState(of session: CastdSession?) -> CastdCastState {
        switch session?.state {
        case .started?, .resumed?, .ending?: .connected
        case .starting?, .suspended?, .resuming?: .connecting
        default: .notConnected
        }
    }

    /// castd's cast state: a session's, the most advanced of them; else whether any device is
    /// available: listed, and with a discovery criterion, known to meet it (the sender SDK
    /// offers only the devices that can run its app).
    private static func castState(of state: State) -> CastdCastState {
        let sessions = state.sessions.values.map { castState(of: $0) }
        if sessions.contains(.connected) { return .connected }
        if sessions.contains(.connecting) { return .connecting }
        let available =
            if let answers = state.criterionAnswers {
                state.devices.keys.contains { answers[$0] == true }
            } else {
                !state.devices.isEmpty
            }
        return available ? .notConnected : .noDevicesAvailable
    }

    // MARK: the discovery criterion

    /// Records whether device `deviceID` can run the app of castd's discovery criterion (its
    /// answer to GET_APP_AVAILABILITY), which castd's cast state follows. Nothing without a
    /// criterion.
    public func recordCriterion(deviceID: String, met: Bool) {
        state.withLock { state in
            guard state.criterionAnswers != nil, state.criterionAnswers?[deviceID] != met else { return }
            state.criterionAnswers?[deviceID] = met
            Self.publishCastState(in: &state, limit: watcherQueueLimit)
        }
    }

    /// What device `deviceID` answered about the criterion's app; nil: not asked yet (or no
    /// criterion).
    public func criterionAnswer(deviceID: String) -> Bool? {
        state.withLock { $0.criterionAnswers?[deviceID] }
    }

    /// Publishes castd's cast state if the change just published moved it.
    private static func publishCastState(in state: inout State, limit: Int) {
        let now = castState(of: state)
        guard now != state.castState else { return }
        var change = Castd_V1_CastStateChange()
        change.previous = state.castState
        change.state = now
        var event = CastdEvent()
        event.kind = .castState(change)
        publish(event, in: &state, limit: limit)
    }

    // MARK: changing

    /// Creates or changes a device. `change` sees the current record (or a fresh one with only
    /// the id set). Publishes added/updated only if something changed.
    public func updateDevice(id: String, _ change: (inout CastdDevice) -> Void) {
        changeDevice(id: id, creating: true, change)
    }

    /// Changes a device castd still lists; a device removed meanwhile (it left mDNS) stays
    /// removed. What a device's own controller says about it goes through here.
    public func updateKnownDevice(id: String, _ change: (inout CastdDevice) -> Void) {
        changeDevice(id: id, creating: false, change)
    }

    private func changeDevice(id: String, creating: Bool, _ change: (inout CastdDevice) -> Void) {
        state.withLock { state in
            let existing = state.devices[id]
            guard creating || existing != nil else { return }
            var device = existing ?? CastdDevice()
            device.id = id
            change(&device)
            device.castState = Self.castState(of: state.sessions[id])
            guard device != existing else { return }
            var event = CastdEvent()
            event.kind = existing == nil ? .deviceAdded(device) : .deviceUpdated(device)
            Self.publish(event, in: &state, limit: watcherQueueLimit)
            Self.publishCastState(in: &state, limit: watcherQueueLimit)
        }
    }

    public func removeDevice(id: String) {
        state.withLock { state in
            // What it last played goes with it, unless a session still holds it (CastdState).
            guard let device = state.devices[id] else { return }
            // Asked again if it comes back: what it runs may have changed meanwhile.
            state.criterionAnswers?[id] = nil
            var event = CastdEvent()
            event.kind = .deviceRemoved(device)
            Self.publish(event, in: &state, limit: watcherQueueLimit)
            Self.publishCastState(in: &state, limit: watcherQueueLimit)
        }
    }

    /// Publishes a session state change. Ended sessions, and those that failed to start or to
    /// resume, leave the live set. The
    /// device's cast state, and castd's, follow it: each published after it if it moved.
    public func updateSession(_ session: CastdSession) {
        state.withLock { state in
            var event = CastdEvent()
            event.kind = .session(session)
            Self.publish(event, in: &state, limit: watcherQueueLimit)
            let castState = Self.castState(of: state.sessions[session.deviceID])
            if var device = state.devices[session.deviceID], device.castState != castState {
                device.castState = castState
                var event = CastdEvent()
                event.kind = .deviceUpdated(device)
                Self.publish(event, in: &state, limit: watcherQueueLimit)
            }
            Self.publishCastState(in: &state, limit: watcherQueueLimit)
        }
    }

    /// Publishes that castd's session moved from one device to another (stream transfer).
    public func publishTransfer(_ transfer: Castd_V1_SessionTransfer) {
        state.withLock { state in
            var event = CastdEvent()
            event.kind = .transferred(transfer)
            Self.publish(event, in: &state, limit: watcherQueueLimit)
        }
    }

    /// Publishes a media status (changed or not: a repeated status is news, e.g. a seek that
    /// landed where it was).
    public func updateMedia(_ media: CastdMediaStatus) {
        state.withLock { state in
            var event = CastdEvent()
            event.kind = .media(media)
            Self.publish(event, in: &state, limit: watcherQueueLimit)
        }
    }

    /// Publishes how a media session's queue changed, one event per change, in order; `media`
    /// (the status with the queue's new order) replaces what castd holds for new watchers'
    /// snapshots without an event of its own: the changes say it.
    public func updateQueue(_ changes: [Castd_V1_QueueChange], media: CastdMediaStatus?) {
        state.withLock { state in
            for change in changes {
                var event = CastdEvent()
                event.kind = .queue(change)
                Self.publish(event, in: &state, limit: watcherQueueLimit)
            }
            if let media { state.fold.replaceMedia(media) }
        }
    }

    /// Numbers `event`, applies it to the state (``CastdState/apply(_:)``: the rule every
    /// client reads it with) and queues it to every watcher.
    private static func publish(_ event: CastdEvent, in state: inout State, limit: Int) {
        state.sequence += 1
        var event = event
        event.sequence = state.sequence
        event.timeMs = Int64(Date().timeIntervalSince1970 * 1000)
        state.fold.apply(event)
        var snapshotEvent: CastdEvent?
        for watcher in state.watchers.values {
            if !watcher.enqueue(event, limit: limit) {
                // Overflow: replace the backlog with "lagged" and a fresh snapshot.
                if snapshotEvent == nil {
                    var e = CastdEvent()
                    e.sequence = state.sequence
                    e.timeMs = event.timeMs
                    e.kind = .snapshot(snapshot(of: state))
                    snapshotEvent = e
                }
                watcher.replaceBacklog(with: snapshotEvent!)
            }
        }
    }

    // MARK: watching

    /// A new watcher: its first event is a snapshot, then every change after it, in order.
    /// `ownedByCastd`: one of castd's own parts follows the state (the media server), and is not
    /// counted among the watchers (`watcherCount`: clients').
    public func watch(ownedByCastd: Bool = false) -> CastdEventSubscription {
        let watcher = Watcher()
        let id = state.withLock { state -> Int in
            var e = CastdEvent()
            e.sequence = state.sequence
            e.timeMs = Int64(Date().timeIntervalSince1970 * 1000)
            e.kind = .snapshot(Self.snapshot(of: state))
            _ = watcher.enqueue(e, limit: .max)
            defer { state.nextWatcherID += 1 }
            state.watchers[state.nextWatcherID] = watcher
            if ownedByCastd { state.ownWatchers.insert(state.nextWatcherID) }
            return state.nextWatcherID
        }
        return CastdEventSubscription(watcher: watcher) { [weak self] in
            self?.state.withLock { state in
                state.watchers.removeValue(forKey: id)
                state.ownWatchers.remove(id)
            }
        }
    }

    /// Clients' watchers (castd's own are not counted).
    public var watcherCount: Int { state.withLock { $0.watchers.count - $0.ownWatchers.count } }

    /// Ends every watcher's stream (daemon shutdown).
    public func finishAll() {
        let watchers = state.withLock { state -> [Watcher] in
            defer { state.watchers.removeAll() }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.finish() }
    }
}

/// One watcher's queue. Producers never block; the consumer awaits.
final class Watcher: Sendable {
    private struct State {
        var queue: [CastdEvent] = []
        var head = 0
        var waiter: CheckedContinuation<CastdEvent?, Never>?
        var finished = false
        var dropped: UInt64 = 0
        var count: Int { queue.count - head }
    }
    private let state = Locked(State())

    /// Returns false (and queues nothing) if the queue is full.
    func enqueue(_ event: CastdEvent, limit: Int) -> Bool {
        let (accepted, waiter) = state.withLock { state -> (Bool, CheckedContinuation<CastdEvent?, Never>?) in
            if state.finished { return (true, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (true, waiter)
            }
            guard state.count < limit else { return (false, nil) }
            state.queue.append(event)
            return (true, nil)
        }
        waiter?.resume(returning: event)
        return accepted
    }

    func replaceBacklog(with snapshot: CastdEvent) {
        state.withLock { state in
            let dropped = UInt64(state.count) + 1
            state.dropped += dropped
            var lagged = CastdEvent()
            lagged.sequence = snapshot.sequence
            lagged.timeMs = snapshot.timeMs
            var info = Castd_V1_Lagged()
            info.dropped = dropped
            lagged.kind = .lagged(info)
            state.queue = [lagged, snapshot]
            state.head = 0
        }
    }

    func next() async -> CastdEvent? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> CastdEvent?? in
                if state.head < state.queue.count {
                    let event = state.queue[state.head]
                    state.head += 1
                    if state.head > 64 && state.head * 2 > state.queue.count {
                        state.queue.removeFirst(state.head)
                        state.head = 0
                    }
                    return .some(event)
                }
                if state.finished { return .some(nil) }
                state.waiter = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<CastdEvent?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}

/// The events of one watcher, snapshot first. Ends when the store finishes or the task is
/// cancelled; deregisters itself when dropped.
public final class CastdEventSubscription: AsyncSequence, Sendable {
    public typealias Element = CastdEvent
    private let watcher: Watcher
    private let onEnd: @Sendable () -> Void

    init(watcher: Watcher, onEnd: @escaping @Sendable () -> Void) {
        self.watcher = watcher
        self.onEnd = onEnd
    }

    deinit {
        onEnd()
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let watcher: Watcher
        public mutating func next() async -> CastdEvent? {
            let watcher = self.watcher
            return await withTaskCancellationHandler {
                await watcher.next()
            } onCancel: {
                watcher.finish()
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(watcher: watcher) }

    /// Stops delivery; `next()` returns nil once the backlog is consumed.
    public func cancel() {
        onEnd()
        watcher.finish()
    }
}
