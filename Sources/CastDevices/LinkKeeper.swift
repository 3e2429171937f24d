import CastSenderLink

/// Whether castd has a link to one device, and when it tries again: the reconnect state
/// machine, as state and decisions only. The device's controller owns it (its isolation guards
/// it) and does what it decides: starts an attempt, sleeps until a retry, tells the state store.
///
///     idle ──attempt──► connecting ──up──► connected
///      ▲                    │                  │
///      └─────── down ───────┴────── down ──────┘
///
/// After a down, castd retries on its own while it keeps the link (``wantsLink``) or has a
/// session there to rejoin: within a second of a loss, then backing off (``ReconnectBackoff``).
/// Two attempts on one device start at least the backoff's minimum gap apart. `Link` is the
/// link's type (`CastLink`; the tests use a stand-in).
struct LinkKeeper<Link: Sendable> {
    enum Phase {
        case idle
        case connecting
        case connected(Link)
    }

    let backoff: ReconnectBackoff
    private(set) var phase: Phase = .idle
    /// castd keeps this device's link: once a link has been up, castd reconnects on its own
    /// whenever it drops, until the device leaves mDNS with no session to rejoin.
    var wantsLink = false
    /// Attempts that failed since the link was lost (the backoff's exponent).
    private(set) var failedRetries = 0
    /// When the link was last lost; nil while it is up, and before the first link.
    private(set) var lostAt: ContinuousClock.Instant?
    /// Whether a link to this device has been up in this castd's life.
    private(set) var everUp = false
    private var lastAttemptStart: ContinuousClock.Instant?
    /// Where the attempt in flight holds its place, when a read call started it
    /// (`DeviceController.link(openingWithin:)`): given back when the attempt ends.
    private var attemptPermit: LinkAttemptLimiter?
    /// Bumped whenever an attempt starts or a retry is scheduled or called off: a retry still
    /// sleeping with an older generation does nothing when it wakes.
    private var retryGeneration: UInt64 = 0
    /// Requests waiting for the link, by a number each, so a cancelled one can leave.
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<Link, any Error>)] = []
    private var lastWaiterID: UInt64 = 0

    init(backoff: ReconnectBackoff) {
        self.backoff = backoff
    }

    var isIdle: Bool {
        if case .idle = phase { return true }
        return false
    }

    var isConnected: Bool {
        if case .connected = phase { return true }
        return false
    }

    var hasWaiters: Bool { !waiters.isEmpty }

    /// How long until an attempt may start: the rest of the minimum gap since the last one.
    func remainingGap(now: ContinuousClock.Instant = .now) -> Duration {
        lastAttemptStart.map { backoff.remainingGap(sinceLastAttempt: now - $0) } ?? .zero
    }

    // MARK: requests waiting for the link

    /// A number for a request about to wait for the link.
    mutating func nextWaiterID() -> UInt64 {
        lastWaiterID += 1
        return lastWaiterID
    }

    mutating func wait(_ id: UInt64, _ continuation: CheckedContinuation<Link, any Error>) {
        waiters.append((id, continuation))
    }

    /// The request `id` stops waiting (it was cancelled): its continuation, if it still waits.
    mutating func removeWaiter(_ id: UInt64) -> CheckedContinuation<Link, any Error>? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index).continuation
    }

    /// Every request waiting, to be given the link or the reason there is none.
    mutating func takeWaiters() -> [CheckedContinuation<Link, any Error>] {
        defer { waiters.removeAll() }
        return waiters.map(\.continuation)
    }

    // MARK: attempts and retries

    /// An attempt starts (holding `permit`, if a read call's). Returns whether it retries a link
    /// castd keeps or one that failed (so the last error stays shown until it succeeds).
    mutating func startAttempt(permit: LinkAttemptLimiter? = nil, now: ContinuousClock.Instant = .now) -> Bool {
        retryGeneration += 1  // a retry still sleeping is now moot
        phase = .connecting
        attemptPermit = permit
        lastAttemptStart = now
        return failedRetries > 0 || wantsLink
    }

    /// A retry is to fire later: the generation it must still hold when it does.
    mutating func scheduleRetry() -> UInt64 {
        retryGeneration += 1
        return retryGeneration
    }

    /// Whether a retry that fired is still the one to run: nothing started or rescheduled since.
    func retryIsDue(_ generation: UInt64) -> Bool {
        generation == retryGeneration && isIdle
    }

    /// Calls off any retry and forgets the failures: castd stops trying on its own.
    mutating func callOffRetries() {
        retryGeneration += 1
        failedRetries = 0
    }

    /// How long to wait before retrying on castd's own: within a second of a loss, then backing
    /// off; never within the minimum gap of the last attempt.
    func retryDelay(now: ContinuousClock.Instant = .now) -> Duration {
        max(backoff.delay(afterFailures: failedRetries), remainingGap(now: now))
    }

    // MARK: up and down

    /// The link is up, and castd keeps it from now on. Returns how long it was down (nil for a
    /// first link) and how many retries failed before it, for the log.
    mutating func up(_ link: Link, now: ContinuousClock.Instant = .now) -> (
        downtime: Duration?, failedRetries: Int
    ) {
        phase = .connected(link)
        releasePermit()
        let report = (lostAt.map { now - $0 }, failedRetries)
        wantsLink = true
        everUp = true
        failedRetries = 0
        lostAt = nil
        return report
    }

    /// The link, or the attempt, ended. `wasUp`: the attempt got as far as a link (which may
    /// have failed before it counted as connected); `holdsSession`: castd has a session there to
    /// rejoin. An attempt that fails while castd keeps the link counts toward the backoff.
    ///
    /// - Returns: Whether a link was connected.
    mutating func down(wasUp: Bool, holdsSession: Bool, now: ContinuousClock.Instant = .now) -> Bool {
        releasePermit()
        let wasConnected = isConnected
        phase = .idle
        if wasConnected || wasUp {
            lostAt = now
            failedRetries = 0
        } else if wantsLink || holdsSession {
            failedRetries += 1
        }
        return wasConnected
    }

    private mutating func releasePermit() {
        attemptPermit?.release()
        attemptPermit = nil
    }
}
