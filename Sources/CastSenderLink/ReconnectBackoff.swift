/// When to try a lost device again.
///
/// The first retry comes within a second of the loss (most drops are blips: a Wi-Fi roam, a
/// device's network restart), then the wait doubles up to a cap, each wait drawn at random from
/// its upper half ("equal jitter") so that a room of devices lost at once is not retried in
/// lock-step. However the waits come out, two attempts on one device start at least
/// ``minimumGap`` apart: the caller measures from the last attempt's start and waits the rest.
///
/// Chromium's own policy starts at 15 s; castd's owners asked for a first retry within 1 s, so
/// the doubling starts there. With the defaults: ½–1 s, 1–2 s, 2–4 s, 4–8 s, 8–16 s, 15–30 s,
/// then 15–30 s for as long as the device stays away.
public struct ReconnectBackoff: Sendable, Hashable {
    /// The base of the first retry; the wait itself is drawn from [first/2, first].
    public var first: Duration
    /// No wait is longer than this.
    public var cap: Duration
    /// Attempts on one device start at least this far apart.
    public var minimumGap: Duration

    public init(first: Duration = .seconds(1), cap: Duration = .seconds(30), minimumGap: Duration = .seconds(1)) {
        self.first = first
        self.cap = cap
        self.minimumGap = minimumGap
    }

    /// The base wait before retry number `failures + 1`, after `failures` failed retries in a
    /// row (0 right after the link was lost).
    public func base(afterFailures failures: Int) -> Duration {
        var base = first
        for _ in 0..<max(0, min(failures, 32)) {
            base = base * 2
            if base >= cap { return cap }
        }
        return min(base, cap)
    }

    /// The wait before the next attempt, drawn with `generator`: in [base/2, base], and never
    /// shorter than ``minimumGap`` once the first retry has failed.
    public func delay(afterFailures failures: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        finish(Int64.random(in: window(afterFailures: failures), using: &generator), afterFailures: failures)
    }

    /// The wait before the next attempt, drawn from the system's generator.
    ///
    /// `Int64.random(in:)` rather than a `SystemRandomNumberGenerator` passed `inout`: that
    /// struct is empty, and ThreadSanitizer builds (Swift 6.3) crash on an `inout` access to an
    /// empty value, whose address is not a real one.
    public func delay(afterFailures failures: Int) -> Duration {
        finish(Int64.random(in: window(afterFailures: failures)), afterFailures: failures)
    }

    /// The nanoseconds a wait is drawn from: the upper half of the base.
    private func window(afterFailures failures: Int) -> ClosedRange<Int64> {
        let nanoseconds = Self.nanoseconds(base(afterFailures: failures))
        let low = nanoseconds / 2
        return low...max(low, nanoseconds)
    }

    private func finish(_ nanoseconds: Int64, afterFailures failures: Int) -> Duration {
        let drawn = Duration.nanoseconds(nanoseconds)
        return failures == 0 ? drawn : max(drawn, minimumGap)
    }

    /// How much longer to wait so that an attempt does not start within ``minimumGap`` of the
    /// last one, which started `sinceLastAttempt` ago.
    public func remainingGap(sinceLastAttempt: Duration) -> Duration {
        max(.zero, minimumGap - sinceLastAttempt)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

extension ReconnectBackoff {
    /// Whole milliseconds of `duration`.
    public static func milliseconds(_ duration: Duration) -> Int64 {
        nanoseconds(duration) / 1_000_000
    }
}
