import CastdSupport
import CAvahi
import Logging
import Synchronization

/// What an `AvahiClientLoop` tells the object that uses its client.
///
/// Both calls come from the loop's poll thread (or, during `AvahiClientLoop.connectNow`, from the
/// thread that called it, before the poll thread starts) and never while the loop holds a lock.
protocol AvahiClientLoopOwner: AnyObject, Sendable {
    /// The client is registering, running, or in a host name collision: it can be used.
    func avahiClient(_ client: AvahiHandle, didEnter clientState: AvahiClientState)
    /// The client failed, or no client could be created. The loop frees the client and everything
    /// created on it later: forget those handles, never free them.
    func avahiClientFailed(reason: String)
}

/// One avahi threaded poll with at most one `AvahiClient` on it at a time. When the client fails
/// (the daemon or D-Bus went away) or cannot be created, the owner is told and a new client is
/// tried every `retryInterval`, on the poll thread.
///
/// Lifetime: every live client holds a +1 on the loop (its callback userdata, released right after
/// `avahi_client_free`), and the loop holds its owner until `shutdown()`; so neither can go away
/// while avahi may still call into them. Browsers, resolvers and entry groups die with their
/// client, so their userdata may point at the owner unretained.
///
/// Locks: avahi calls are never made while `state` is locked (avahi calls back synchronously, and
/// `Mutex` is not recursive). Order: `lifecycle`, then the poll lock, then `state`.
final class AvahiClientLoop: Sendable {
    private enum Lifecycle {
        case idle, running, shutDown
    }

    private struct State {
        var client: AvahiHandle?
        var owner: (any AvahiClientLoopOwner)?
        var retryTimer: AvahiTimer?
        /// The owner's timers (`makeTimer`), kept alive until the poll that calls them is freed.
        var timers: [AvahiTimer] = []
        /// The current client failed, or the last attempt created none; a retry is scheduled.
        var failed = false
    }

    private let poll: AvahiHandle
    private let lifecycle = Locked(Lifecycle.idle)
    private let state = Locked(State())
    private let retryInterval: Duration
    private let logger: Logger

    init(retryInterval: Duration, logger: Logger) throws(DiscoveryError) {
        guard let poll = avahi_threaded_poll_new() else {
            throw DiscoveryError(code: .avahiUnavailable, message: "avahi_threaded_poll_new failed (out of memory?)")
        }
        self.poll = AvahiHandle(poll)
        self.retryInterval = retryInterval
        self.logger = logger
        // Unowned: the timer only fires on the poll thread, which `shutdown()` (also run by
        // deinit) stops before the loop can go away; the timer is freed with the poll.
        guard let timer = makeTimer({ [unowned(unsafe) self] in _ = self.connect() }) else {
            // deinit's shutdown() frees the poll.
            throw DiscoveryError(code: .avahiUnavailable, message: "avahi timeout_new failed (out of memory?)")
        }
        state.withLock { $0.retryTimer = timer }
    }

    deinit {
        // Normally a no-op: owners call shutdown(). Deinit cannot run on the poll thread while the
        // thread runs callbacks for a live client, because every live client retains the loop.
        shutdown()
    }

    private var pollAPI: UnsafePointer<AvahiPoll> {
        avahi_threaded_poll_get(poll.pointer)
    }

    /// Starts the poll thread; the first client is created on it at once. Failures reach the owner.
    func start(owner: any AvahiClientLoopOwner) {
        lifecycle.withLock { lifecycle in
            guard lifecycle == .idle else { return }
            state.withLock { $0.owner = owner }
            scheduleConnect(after: .zero)
            if !startPollThread(&lifecycle) {
                owner.avahiClientFailed(reason: "Could not start the avahi poll thread")
            }
        }
    }

    /// Creates the first client on the calling thread (so that its owner's first callbacks have
    /// run when this returns), then starts the poll thread. Throws if no client can be created;
    /// the caller then calls `shutdown()`.
    func connectNow(owner: any AvahiClientLoopOwner) throws(DiscoveryError) {
        try lifecycle.withLock { (lifecycle: inout Lifecycle) throws(DiscoveryError) in
            guard lifecycle == .idle else { return }
            state.withLock { $0.owner = owner }
            if let reason = connect() {
                throw DiscoveryError(code: .avahiUnavailable, message: reason)
            }
            guard startPollThread(&lifecycle) else {
                throw DiscoveryError(code: .avahiUnavailable, message: "Could not start the avahi poll thread")
            }
        }
    }

    private func startPollThread(_ lifecycle: inout Lifecycle) -> Bool {
        lifecycle = .running
        return avahi_threaded_poll_start(poll.pointer) >= 0
    }

    /// Runs `body` with the poll lock held, from a thread that is not the poll thread; nil once
    /// the loop is shut down.
    func withPollLocked<Result: Sendable>(_ body: () throws -> Result) rethrows -> Result? {
        try lifecycle.withLock { lifecycle in
            guard lifecycle != .shutDown else { return nil }
            avahi_threaded_poll_lock(poll.pointer)
            defer { avahi_threaded_poll_unlock(poll.pointer) }
            return try body()
        }
    }

    /// A timer on this loop's poll that calls `fire` on the poll thread each time it is
    /// scheduled and comes due. Make it before `start` or on the poll thread; schedule and
    /// cancel it on the poll thread. It lives as long as the poll (freed by `shutdown`).
    func makeTimer(_ fire: @escaping @Sendable () -> Void) -> AvahiTimer? {
        let timer = AvahiTimer(fire: fire)
        // Unretained: `state.timers` keeps the box until the poll (and so the timeout) is freed.
        let handle = pollAPI.pointee.timeout_new(
            pollAPI, nil,
            { _, userdata in
                guard let userdata else { return }
                Unmanaged<AvahiTimer>.fromOpaque(userdata).takeUnretainedValue().fire()
            },
            Unmanaged.passUnretained(timer).toOpaque())
        guard let handle else { return nil }
        timer.attach(AvahiHandle(handle), poll: pollAPI)
        state.withLock { $0.timers.append(timer) }
        return timer
    }

    /// Poll thread: drop the current client (e.g. its browser failed) and connect again later.
    func reconnect(reason: String) {
        failed(reason)
    }

    /// Stops the poll thread, frees the client (withdrawing what it published) and the poll, and
    /// lets go of the owner. Idempotent. Never call it from the poll thread.
    func shutdown() {
        lifecycle.withLock { lifecycle in
            guard lifecycle != .shutDown else { return }
            lifecycle = .shutDown
            avahi_threaded_poll_stop(poll.pointer)  // joins the thread; -1 if it never ran
            let (client, owner) = state.withLock { state in
                defer {
                    state.client = nil
                    state.owner = nil
                    state.retryTimer = nil
                }
                return (state.client, state.owner)
            }
            if let client {
                free(client)
            }
            avahi_threaded_poll_free(poll.pointer)  // frees the retry timer and the owner's timers too
            let timers = state.withLock { state in
                defer { state.timers = [] }
                return state.timers
            }
            withExtendedLifetime((owner, timers)) {}
        }
    }

    // MARK: poll thread (or the connectNow caller before the thread starts)

    /// Replaces the current client with a new one; returns why that failed, or nil.
    @discardableResult
    private func connect() -> String? {
        let old = state.withLock { state in
            defer {
                state.client = nil
                state.failed = false
            }
            return state.client
        }
        if let old {
            free(old)
        }
        var error: Int32 = 0
        let userdata = Unmanaged.passRetained(self).toOpaque()  // released after avahi_client_free
        let client = avahi_client_new(
            pollAPI, AvahiClientFlags(rawValue: 0),
            { client, clientState, userdata in
                guard let client, let userdata else { return }
                let loop = Unmanaged<AvahiClientLoop>.fromOpaque(userdata).takeUnretainedValue()
                loop.client(AvahiHandle(client), didChangeTo: clientState)
            },
            userdata, &error)
        guard let client else {
            Unmanaged<AvahiClientLoop>.fromOpaque(userdata).release()
            let what = Int(error) == AVAHI_ERR_NO_DAEMON ? "not running" : "not reachable"
            let reason = "Avahi is \(what) (avahi_client_new: \(Avahi.errorString(error)))"
            failed(reason)
            return reason
        }
        let failedWhileCreating = state.withLock { state in
            state.client = AvahiHandle(client)
            return state.failed
        }
        return failedWhileCreating ? "Avahi failed while connecting" : nil
    }

    private func client(_ client: AvahiHandle, didChangeTo clientState: AvahiClientState) {
        switch clientState {
        case AVAHI_CLIENT_S_REGISTERING, AVAHI_CLIENT_S_RUNNING, AVAHI_CLIENT_S_COLLISION:
            let owner = state.withLock { $0.failed ? nil : $0.owner }
            owner?.avahiClient(client, didEnter: clientState)
        case AVAHI_CLIENT_FAILURE:
            let error = avahi_client_errno(client.pointer)
            failed("Lost the connection to Avahi (\(Avahi.errorString(error)))")
        default:
            break  // AVAHI_CLIENT_CONNECTING only happens with AVAHI_CLIENT_NO_FAIL, not used
        }
    }

    private func failed(_ reason: String) {
        let (owner, alreadyFailed) = state.withLock { state in
            defer { state.failed = true }
            return (state.owner, state.failed)
        }
        guard !alreadyFailed else { return }
        logger.debug(
            "Avahi client failed; retrying", metadata: ["avahi.reason": "\(reason)", "avahi.retry": "\(retryInterval)"])
        owner?.avahiClientFailed(reason: reason)
        scheduleConnect(after: retryInterval)
    }

    private func scheduleConnect(after interval: Duration) {
        state.withLock({ $0.retryTimer })?.schedule(after: interval)
    }

    private func free(_ client: AvahiHandle) {
        avahi_client_free(client.pointer)
        Unmanaged.passUnretained(self).release()  // the +1 taken in connect()
    }
}

/// A timeout on an `AvahiClientLoop`'s poll (see `AvahiClientLoop.makeTimer`).
final class AvahiTimer: Sendable {
    let fire: @Sendable () -> Void
    private let target = Locked<(handle: AvahiHandle, poll: AvahiPollPointer)?>(nil)

    fileprivate init(fire: @escaping @Sendable () -> Void) {
        self.fire = fire
    }

    fileprivate func attach(_ handle: AvahiHandle, poll: UnsafePointer<AvahiPoll>) {
        target.withLock { $0 = (handle, AvahiPollPointer(pointer: poll)) }
    }

    /// Poll thread: fire once, `interval` from now (replacing any earlier schedule).
    func schedule(after interval: Duration) {
        guard let (handle, poll) = target.withLock({ $0 }) else { return }
        var when = Avahi.time(after: interval)
        poll.pointer.pointee.timeout_update(handle.pointer, &when)
    }

    /// Poll thread: do not fire.
    func cancel() {
        guard let (handle, poll) = target.withLock({ $0 }) else { return }
        poll.pointer.pointee.timeout_update(handle.pointer, nil)
    }
}

/// avahi's poll vtable, which lives as long as its poll (see `AvahiHandle` for the threading).
struct AvahiPollPointer: @unchecked Sendable {
    let pointer: UnsafePointer<AvahiPoll>
}
