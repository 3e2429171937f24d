import CastdSupport
import CastdAPI
import NIOCore

/// The open calls of one connection, and its shutdown.
final class ConnectionHandle: Sendable {
    /// Whether a connection takes a call, by its id: one rule for calls answered inline and
    /// calls run as tasks. `.ok` carries the call's cancel signal when it was registered.
    enum Admission {
        case ok(AsyncStream<CastdError>?)
        /// The id is that of a call still open.
        case duplicate
        case tooMany
        case draining
    }

    private struct State {
        var calls: [UInt64: AsyncStream<CastdError>.Continuation] = [:]
        var draining = false
    }
    private let state = Locked(State())
    private let channel: any Channel
    /// What this client can make castd log at will (malformed frames, calls it may not make): a
    /// few records a minute, and a count when it goes.
    let noticeLog = LogThrottle(burst: 3)

    init(channel: any Channel) {
        self.channel = channel
    }

    private static func judge(_ state: State, callID: UInt64, limit: Int) -> Admission {
        if state.calls[callID] != nil { return .duplicate }
        if state.draining { return .draining }
        if state.calls.count >= limit { return .tooMany }
        return .ok(nil)
    }

    /// Whether the connection would take a call with this id now, without registering it (a
    /// call answered inline).
    func check(callID: UInt64, limit: Int) -> Admission {
        state.withLock { Self.judge($0, callID: callID, limit: limit) }
    }

    /// Registers a call with this id if the connection takes it.
    func admit(callID: UInt64, limit: Int) -> Admission {
        state.withLock { state in
            let admission = Self.judge(state, callID: callID, limit: limit)
            guard case .ok = admission else { return admission }
            let (stream, continuation) = AsyncStream.makeStream(
                of: CastdError.self, bufferingPolicy: .bufferingNewest(1))
            state.calls[callID] = continuation
            return .ok(stream)
        }
    }

    func finished(callID: UInt64) {
        let closeNow = state.withLock { state -> Bool in
            state.calls.removeValue(forKey: callID)?.finish()
            return state.draining && state.calls.isEmpty
        }
        if closeNow { channel.close(promise: nil) }
    }

    func cancel(callID: UInt64, reason: CastdError) {
        let continuation = state.withLock { $0.calls[callID] }
        continuation?.yield(reason)
    }

    func cancelAll(reason: CastdError) {
        let all = state.withLock { Array($0.calls.values) }
        for continuation in all { continuation.yield(reason) }
    }

    /// Refuse new calls; close once the open ones finish, cancelling them after `grace`.
    func drain(grace: Duration) {
        let idle = state.withLock { state -> Bool in
            state.draining = true
            return state.calls.isEmpty
        }
        if idle {
            channel.close(promise: nil)
            return
        }
        let (seconds, attoseconds) = grace.components
        channel.eventLoop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) {
            [self] in
            self.cancelAll(reason: CastdError(.unavailable, "castd is shutting down"))
        }
    }
}
