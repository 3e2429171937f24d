import CastdSupport

/// The time source of an emulated device's media playback.
///
/// Playback position, and the moment media reaches its end, follow this clock. Tests inject a
/// ``ManualEmulatorClock`` so that they can move time forward without sleeping; everything else
/// uses ``SystemEmulatorClock``.
///
/// Times are durations since the clock's own origin.
public protocol EmulatorClock: Sendable {
    /// The current time.
    func now() -> Duration
    /// Suspends until ``now()`` has reached `deadline`. Throws `CancellationError` when the
    /// calling task is cancelled.
    func sleep(until deadline: Duration) async throws
}

/// Real time, from `ContinuousClock`.
public struct SystemEmulatorClock: EmulatorClock {
    private let origin: ContinuousClock.Instant

    public init() {
        origin = .now
    }

    public func now() -> Duration {
        ContinuousClock.now - origin
    }

    public func sleep(until deadline: Duration) async throws {
        try await Task.sleep(until: origin + deadline, clock: .continuous)
    }
}

/// A clock that only moves when told to: ``advance(by:)`` resumes every sleeper whose deadline
/// has been reached.
///
/// ```swift
/// let clock = ManualEmulatorClock()
/// var configuration = EmulatorConfiguration()
/// configuration.clock = clock
/// // … LOAD something, then:
/// clock.advance(by: .seconds(10))   // the media is now 10 s further on
/// ```
public final class ManualEmulatorClock: EmulatorClock {
    private struct Sleeper {
        var deadline: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Duration = .zero
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
        /// Sleepers cancelled before they registered.
        var cancelled: Set<Int> = []
    }

    private let state: Locked<State>

    public init(now: Duration = .zero) {
        state = Locked(State(now: now))
    }

    public func now() -> Duration {
        state.withLock { $0.now }
    }

    /// Moves time forward and wakes the sleepers that are due.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "a clock does not go backwards")
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now += duration
            let now = state.now
            let dueIDs = state.sleepers.filter { $0.value.deadline <= now }.map(\.key)
            return dueIDs.compactMap { state.sleepers.removeValue(forKey: $0)?.continuation }
        }
        for continuation in due { continuation.resume() }
    }

    /// How many tasks are sleeping on this clock: lets a test wait until the device has armed
    /// its timer.
    public var sleeperCount: Int {
        state.withLock { $0.sleepers.count }
    }

    public func sleep(until deadline: Duration) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        defer { _ = state.withLock { $0.cancelled.remove(id) } }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelled.contains(id) { return .failure(CancellationError()) }
                    if state.now >= deadline { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                if let sleeper = state.sleepers.removeValue(forKey: id) { return sleeper.continuation }
                state.cancelled.insert(id)
                return nil
            }
            continuation?.resume(throwing: CancellationError())
        }
    }
}
