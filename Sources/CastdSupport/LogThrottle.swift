import Logging

/// A kind of log record that a peer can cause at will (a bad frame, a refused call, a refused
/// connection), let through at most `burst` times in each `interval`. The records held back are
/// counted: the count goes with the next record let through, as ``Admission/unlogged``, or is
/// taken by ``takeUnlogged()`` for a summary when the peer goes. A flood costs a few records a
/// minute, and says how big it was.
public final class LogThrottle: Sendable {
    public struct Admission: Sendable, Equatable {
        /// Records held back since the last one let through.
        public var unlogged: Int

        package init(unlogged: Int) {
            self.unlogged = unlogged
        }
    }

    private struct State {
        var windowStart: ContinuousClock.Instant
        var inWindow = 0
        var unlogged = 0
    }

    public let burst: Int
    public let interval: Duration
    private let state: Locked<State>

    public init(burst: Int = 5, interval: Duration = .seconds(60)) {
        self.burst = burst
        self.interval = interval
        state = Locked(State(windowStart: .now))
    }

    /// One more record of this kind: an admission when it may be logged, nil when it is held back.
    public func admit(now: ContinuousClock.Instant = .now) -> Admission? {
        state.withLock { state in
            if now - state.windowStart >= interval {
                state.windowStart = now
                state.inWindow = 0
            }
            guard state.inWindow < burst else {
                state.unlogged += 1
                return nil
            }
            state.inWindow += 1
            defer { state.unlogged = 0 }
            return Admission(unlogged: state.unlogged)
        }
    }

    /// `metadata` for one more record of this kind, with `unlogged` (how many were held back
    /// since the last one let through) when there were any; nil when this one is held back.
    public func metadata(_ metadata: Logger.Metadata = [:]) -> Logger.Metadata? {
        guard let admission = admit() else { return nil }
        var metadata = metadata
        if admission.unlogged > 0 { metadata["unlogged"] = "\(admission.unlogged)" }
        return metadata
    }

    /// The records held back and not yet reported, and forgets them.
    public func takeUnlogged() -> Int {
        state.withLock { state in
            defer { state.unlogged = 0 }
            return state.unlogged
        }
    }
}
