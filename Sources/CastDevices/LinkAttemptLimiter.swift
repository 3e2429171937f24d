import CastdSupport

/// How many device links castd may be opening at once on behalf of read calls
/// (`GetAppAvailability`, `ListDevices` with app ids): any read-only client can make those ask
/// every device castd knows, and each link castd opens is a TCP connection, a TLS handshake and
/// a device authentication. An attempt holds its permit until it ends (up, or failed), not just
/// while the call that started it waits: a call that gives up early does not free a place while
/// its attempt still runs. Links that are up, or being opened for another reason, need none.
/// Waiters are let in first come, first served.
public final class LinkAttemptLimiter: Sendable {
    public let limit: Int

    private struct State {
        var inUse = 0
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextWaiter: UInt64 = 0
    }
    private let state = Locked(State())

    public init(limit: Int) {
        precondition(limit > 0)
        self.limit = limit
    }

    /// Waits for a permit. Throws `CancellationError` if the task is cancelled first.
    package func acquire() async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.inUse < limit {
                        state.inUse += 1
                        return .success(())
                    }
                    state.waiters.append((id, continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Gives a permit back: to the longest waiter, if any.
    package func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiters.isEmpty else {
                state.inUse -= 1
                return nil
            }
            return state.waiters.removeFirst().continuation  // the permit passes on
        }
        next?.resume()
    }

    /// Permits held now.
    package var inUse: Int { state.withLock { $0.inUse } }
    /// Calls waiting for one.
    package var waiting: Int { state.withLock { $0.waiters.count } }
}
