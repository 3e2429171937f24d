import CastdAPI
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The client side of castd.v1's call multiplexing, as a pure state machine: which calls are open
/// on one connection, which call each frame from the daemon belongs to, and what that frame means
/// for the call. No I/O and no locking; `CastdConnection` keeps one in a `Mutex` and carries out
/// the returned effects outside the lock.
///
/// `Receiver` is whatever the caller wants handed back when a call gets a message or ends (the
/// connection uses a stream continuation; tests use plain values).
struct CastdCallTable<Receiver> {
    enum Kind: Equatable, Sendable {
        /// Exactly one `message` then an OK `status`, or a non-OK `status` alone.
        case unary
        /// Any number of `message` frames, then a `status`.
        case streaming
    }

    /// How a call ended.
    enum Outcome {
        /// A unary call's one response.
        case response(Data)
        /// A streaming call ended with an OK status.
        case ended
        case failed(CastdError)
    }

    /// What the owner must do after a transition, in order.
    enum Effect {
        /// Hand a streaming call's message to its receiver.
        case deliver(callID: UInt64, Receiver, Data)
        /// The call is over; it is no longer in the table.
        case finish(callID: UInt64, Receiver, Outcome)
        /// Tell the daemon that we are done with a call it still considers open.
        case sendCancel(callID: UInt64)
    }

    private struct OpenCall {
        var method: String
        var kind: Kind
        var receiver: Receiver
        var response: Data?
    }

    private var calls: [UInt64: OpenCall] = [:]
    private var nextCallID: UInt64 = 1

    /// Set once the connection is over (lost, closed by us, or failed by the daemon with a
    /// connection-level status); every later call fails with it.
    private(set) var closedError: CastdError?

    init() {}

    var openCallIDs: [UInt64] { calls.keys.sorted() }

    func isOpen(_ callID: UInt64) -> Bool { calls[callID] != nil }

    /// Registers a new call and returns its id: 1, 2, 3, … on this connection, never reused.
    mutating func open(method: String, kind: Kind, receiver: Receiver) throws(CastdError) -> UInt64 {
        if let closedError { throw closedError }
        let callID = nextCallID
        nextCallID += 1
        calls[callID] = OpenCall(method: method, kind: kind, receiver: receiver, response: nil)
        return callID
    }

    /// Applies one frame from the daemon.
    mutating func receive(_ frame: Castd_V1_Frame) -> [Effect] {
        if frame.callID == 0 {
            // Connection-level status: the daemon is about to close the connection.
            guard case .status(let status) = frame.kind, status.code != .ok else { return [] }
            return close(with: CastdError(status: status))
        }
        // Frames for calls we no longer know (already ended, or cancelled by us while the daemon's
        // answer was in flight) are expected and dropped.
        guard var call = calls[frame.callID] else { return [] }
        let callID = frame.callID

        switch frame.kind {
        case .message(let data):
            switch call.kind {
            case .streaming:
                return [.deliver(callID: callID, call.receiver, data)]
            case .unary:
                if call.response == nil {
                    call.response = data
                    calls[callID] = call
                    return []
                }
                calls[callID] = nil
                let error = CastdError(.internal, "castd sent more than one response to \(call.method)")
                return [.finish(callID: callID, call.receiver, .failed(error)), .sendCancel(callID: callID)]
            }

        case .status(let status):
            calls[callID] = nil
            if status.code != .ok {
                return [.finish(callID: callID, call.receiver, .failed(CastdError(status: status)))]
            }
            switch call.kind {
            case .streaming:
                return [.finish(callID: callID, call.receiver, .ended)]
            case .unary:
                guard let response = call.response else {
                    let error = CastdError(.internal, "castd ended \(call.method) with OK but sent no response")
                    return [.finish(callID: callID, call.receiver, .failed(error))]
                }
                return [.finish(callID: callID, call.receiver, .response(response))]
            }

        case .start, .cancel, nil:
            // Client-to-daemon kinds, or a kind newer than this client: not ours to act on.
            return []
        }
    }

    /// Ends a call from our side (task cancelled, consumer gone, deadline, too slow a consumer).
    /// Returns nothing if the call had already ended.
    mutating func cancel(_ callID: UInt64, with error: CastdError) -> [Effect] {
        guard let call = calls.removeValue(forKey: callID) else { return [] }
        var effects: [Effect] = [.finish(callID: callID, call.receiver, .failed(error))]
        if closedError == nil { effects.append(.sendCancel(callID: callID)) }
        return effects
    }

    /// Fails every open call with `error` and refuses new ones. The first error wins: a
    /// connection-level status from the daemon is followed by the connection closing, and the
    /// calls should report the status, not the close. (castd also answers on call id 0 the frames
    /// it refuses without closing, rpc.proto says which; this client never sends those.)
    mutating func close(with error: CastdError) -> [Effect] {
        if closedError == nil { closedError = error }
        let ended = calls.sorted { $0.key < $1.key }
        calls.removeAll()
        return ended.map { .finish(callID: $0.key, $0.value.receiver, .failed(closedError ?? error)) }
    }
}
