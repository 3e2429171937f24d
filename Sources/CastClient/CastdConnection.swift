import CastdSupport
import CastdAPI
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import LengthPrefixFraming
import NIOCore
import SwiftProtobuf

/// The calls of one connection to castd, apart from the socket. Over a NIO channel
/// (`CastdClient`), `CastdClientHandler` hands it each frame body on the channel's event loop and
/// it writes straight to the channel; `serve(inbound:write:)` instead reads frame bodies from any
/// async sequence and writes through any function, so that tests drive it with in-memory streams.
///
/// Frames are written in the order they are queued, each whole, and a call's `start` always
/// precedes its `cancel`.
final class CastdConnection: Sendable {
    typealias Responses = AsyncThrowingStream<Data, any Error>

    /// Who is waiting for a call: a unary call's caller, suspended until its one response, or
    /// the consumer of a streaming call's messages.
    enum Receiver: Sendable {
        case unary(CheckedContinuation<Data, any Error>)
        case stream(Responses.Continuation)
    }
    typealias Table = CastdCallTable<Receiver>

    /// How many messages a streaming call's consumer may fall behind before the call is failed
    /// with RESOURCE_EXHAUSTED. The reader never waits for a slow consumer: that would stall every
    /// other call on the connection (and deadlock a consumer that makes a call from its loop).
    static let streamBufferLimit = 1024

    let maximumFrameLength: Int
    private let table = Locked(Table())
    /// Where frames go: the channel, once `attach`ed; else a queue that `serve` drains.
    private let channel = Locked<(any Channel)?>(nil)
    private let outgoing: AsyncStream<ByteBuffer>.Continuation
    /// The queue's consuming end, taken by the one `serve` call.
    private let outgoingFrames: Locked<AsyncStream<ByteBuffer>?>

    init(maximumFrameLength: Int = CastdRPC.defaultMaximumFrameLength) {
        self.maximumFrameLength = maximumFrameLength
        let (frames, outgoing) = AsyncStream.makeStream(of: ByteBuffer.self)
        self.outgoing = outgoing
        self.outgoingFrames = Locked(frames)
    }

    /// Writes every frame to `channel` from now on; its `CastdClientHandler` reads. Called
    /// before the first call.
    func attach(_ channel: any Channel) {
        self.channel.withLock { $0 = channel }
    }

    // MARK: calls

    /// Makes a unary call: registers it, queues its `start` frame, and waits for its one
    /// response. The waiting caller is resumed by the reader (no task or stream of its own).
    /// Throws the call's `CastdError`; cancelling the calling task cancels the call on the
    /// daemon (CANCELLED), and so does `timeout` passing (DEADLINE_EXCEEDED).
    func unary(method: String, request: Data, timeout: Duration?) async throws -> Data {
        var frame = try Self.startFrame(
            method: method, request: request, timeout: timeout, maximumFrameLength: maximumFrameLength)
        let call = UnaryCall()
        defer { call.end() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
                let opened = table.withLock { table -> Result<UInt64, CastdError> in
                    do throws(CastdError) {
                        let callID = try table.open(method: method, kind: .unary, receiver: .unary(continuation))
                        frame.callID = callID
                        // Queued under the lock so that no `cancel` for this call can be queued before it.
                        enqueue(frame)
                        return .success(callID)
                    } catch {
                        return .failure(error)
                    }
                }
                switch opened {
                case .failure(let error):
                    continuation.resume(throwing: error)
                case .success(let callID):
                    if call.opened(callID) {
                        cancel(callID, with: CastdError(.cancelled, "\(method) was cancelled"))
                    } else if let timeout {
                        call.setTimer(
                            Task { [weak self] in
                                try await Task.sleep(for: timeout)
                                self?.cancel(
                                    callID,
                                    with: CastdError(.deadlineExceeded, "\(method) did not finish within \(timeout)"))
                            })
                    }
                }
            }
        } onCancel: {
            if let callID = call.cancelled() {
                cancel(callID, with: CastdError(.cancelled, "\(method) was cancelled"))
            }
        }
    }

    /// Opens a streaming call: registers it, queues its `start` frame, and returns its id and
    /// the stream of its messages. The stream ends when the call does: normally, or by throwing
    /// the call's `CastdError`. Dropping the stream (or cancelling the task iterating it) before
    /// then cancels the call on the daemon.
    func openStream(method: String, request: Data) throws(CastdError) -> (callID: UInt64, responses: Responses) {
        var frame = try Self.startFrame(
            method: method, request: request, timeout: nil, maximumFrameLength: maximumFrameLength)
        let (responses, continuation) = Responses.makeStream(
            bufferingPolicy: .bufferingOldest(Self.streamBufferLimit))
        let callID = try table.withLock { table throws(CastdError) in
            let callID = try table.open(method: method, kind: .streaming, receiver: .stream(continuation))
            frame.callID = callID
            // Queued under the lock so that no `cancel` for this call can be queued before it.
            enqueue(frame)
            return callID
        }
        continuation.onTermination = { [weak self] termination in
            guard case .cancelled = termination else { return }
            self?.cancel(callID, with: CastdError(.cancelled, "\(method) was cancelled"))
        }
        return (callID, responses)
    }

    /// A call's `start` frame (its call id still to be set), or RESOURCE_EXHAUSTED if it would not
    /// fit in a frame of `maximumFrameLength`.
    static func startFrame(
        method: String, request: Data, timeout: Duration?, maximumFrameLength: Int
    ) throws(CastdError) -> Castd_V1_Frame {
        var start = Castd_V1_CallStart()
        start.method = method
        start.request = request
        if let timeout { start.timeoutMs = Self.milliseconds(timeout) }
        var frame = Castd_V1_Frame()
        frame.start = start
        // An upper bound of the frame's size, without encoding it: each field a tag byte, a
        // varint of at most ten bytes (call_id, timeout_ms) or a length of at most five and the
        // bytes (start, and in it method and request).
        var size = (1 + 10) + (1 + 5) + (1 + 5 + method.utf8.count) + (1 + 5 + request.count) + (1 + 10)
        if size > maximumFrameLength {
            frame.callID = .max  // the largest id encodes longest
            size = (try? frame.serializedBytes() as [UInt8])?.count ?? 0
        }
        if size > maximumFrameLength {
            throw CastdError(
                .resourceExhausted,
                "the \(method) request is \(size) bytes, over the \(maximumFrameLength)-byte frame limit"
            )
        }
        return frame
    }

    /// Ends a call from this side: fails its stream with `error` and tells the daemon.
    func cancel(_ callID: UInt64, with error: CastdError) {
        perform(table.withLock { $0.cancel(callID, with: error) })
    }

    /// Fails every open call and every later one with `error` (the first error given wins), and
    /// stops the writer.
    func shutdown(_ error: CastdError) {
        perform(table.withLock { $0.close(with: error) })
        outgoing.finish()
    }

    var openCallIDs: [UInt64] { table.withLock { $0.openCallIDs } }

    // MARK: the connection

    /// Runs the connection: writes queued frames with `write` and hands every frame body from
    /// `inbound` to its call, until `inbound` ends or fails. Then every open call fails (with
    /// UNAVAILABLE "connection to castd lost", unless the daemon said why first). Call it once.
    func serve<Inbound: AsyncSequence>(
        inbound: Inbound,
        write: @escaping @Sendable (ByteBuffer) async throws -> Void
    ) async where Inbound.Element == ByteBuffer {
        guard let frames = outgoingFrames.withLock({ $0.take() }) else {
            preconditionFailure("CastdConnection.serve called twice")
        }
        await withDiscardingTaskGroup { group in
            group.addTask {
                do {
                    for await frame in frames { try await write(frame) }
                } catch {
                    self.shutdown(CastdError(.unavailable, "connection to castd lost: \(error)"))
                }
            }
            let error = await read(inbound)
            shutdown(error)
        }
    }

    /// Reads until the stream ends; returns what every call still open should fail with.
    private func read<Inbound: AsyncSequence>(_ inbound: Inbound) async -> CastdError
    where Inbound.Element == ByteBuffer {
        do {
            for try await body in inbound {
                if let error = received(body) { return error }
            }
            return Self.connectionLost
        } catch {
            return Self.readError(error)
        }
    }

    /// Hands one frame body from castd to its call. Returns the error every open call must
    /// fail with if the body is not a castd.v1 frame (the connection is then over).
    func received(_ body: ByteBuffer) -> CastdError? {
        let frame: Castd_V1_Frame
        do {
            frame = try Self.decode(body)
        } catch {
            return error
        }
        perform(table.withLock { $0.receive(frame) })
        return nil
    }

    /// A frame body from castd, decoded; INTERNAL if it is not a castd.v1 frame.
    static func decode(_ body: ByteBuffer) throws(CastdError) -> Castd_V1_Frame {
        do {
            return try Castd_V1_Frame(serializedBytes: Array(body.readableBytesView))
        } catch {
            throw CastdError(.internal, "castd sent a malformed castd.v1 frame (\(error)); connection closed")
        }
    }

    /// What reading from castd failing with `error` (framing or I/O) means for the open calls.
    static func readError(_ error: any Error) -> CastdError {
        if case LengthPrefixError.frameTooLarge(let length, let limit)? = error as? LengthPrefixError {
            return CastdError(
                .resourceExhausted,
                "castd sent a frame of \(length) bytes, over this client's \(limit)-byte limit; connection closed"
            )
        }
        return CastdError(.unavailable, "connection to castd lost: \(error)")
    }

    static let connectionLost = CastdError(.unavailable, "connection to castd lost")

    // MARK: effects

    private func perform(_ effects: [Table.Effect]) {
        for effect in effects {
            switch effect {
            case .deliver(let callID, .stream(let receiver), let message):
                if case .dropped = receiver.yield(message) {
                    cancel(
                        callID,
                        with: CastdError(
                            .resourceExhausted,
                            "the consumer of this stream fell \(Self.streamBufferLimit) messages behind; stream ended"
                        )
                    )
                }
            case .deliver(_, .unary, _):
                break  // the table delivers a unary call's message only with its status
            case .finish(_, .unary(let caller), .response(let message)):
                caller.resume(returning: message)
            case .finish(_, .unary(let caller), .failed(let error)):
                caller.resume(throwing: error)
            case .finish(let callID, .unary(let caller), .ended):
                caller.resume(throwing: CastdError(.internal, "call \(callID) ended without a response"))
            case .finish(_, .stream(let receiver), .response(let message)):
                receiver.yield(message)
                receiver.finish()
            case .finish(_, .stream(let receiver), .ended):
                receiver.finish()
            case .finish(_, .stream(let receiver), .failed(let error)):
                receiver.finish(throwing: error)
            case .sendCancel(let callID):
                var frame = Castd_V1_Frame()
                frame.callID = callID
                frame.cancel = Castd_V1_Cancel()
                enqueue(frame)
            }
        }
    }

    private func enqueue(_ frame: Castd_V1_Frame) {
        // Serializing a frame of known fields cannot fail; the size was checked by `startFrame`.
        guard let bytes: [UInt8] = try? frame.serializedBytes() else { return }
        if let channel = channel.withLock({ $0 }) {
            // Always through the event loop's queue, even on the loop: frames keep the order in
            // which they were queued, and a write never runs inside the caller's lock.
            channel.eventLoop.execute {
                var buffer = channel.allocator.buffer(capacity: bytes.count + 4)
                buffer.writeLengthPrefixedFrame(bytes)
                channel.writeAndFlush(buffer, promise: nil)
            }
        } else {
            outgoing.yield(ByteBuffer(bytes: bytes))
        }
    }

    /// A deadline as CallStart.timeout_ms: whole milliseconds, rounded up, at least 1 (0 would
    /// mean "no deadline").
    static func milliseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, duration > .zero else { return 1 }
        let wholeMilliseconds = UInt64(seconds) &* 1000 &+ UInt64(attoseconds / 1_000_000_000_000_000)
        let remainder = attoseconds % 1_000_000_000_000_000
        return max(1, wholeMilliseconds + (remainder > 0 ? 1 : 0))
    }
}

/// Where a unary call stands for its cancellation handler and its deadline.
private final class UnaryCall: Sendable {
    private enum Phase {
        case opening
        case open(UInt64)
        case cancelled
        case ended
    }

    private let state = Locked<(phase: Phase, timer: Task<Void, any Error>?)>((.opening, nil))

    /// The call is open as `callID`; true if its task was cancelled first (cancel it now).
    func opened(_ callID: UInt64) -> Bool {
        state.withLock { state in
            if case .cancelled = state.phase { return true }
            state.phase = .open(callID)
            return false
        }
    }

    /// The task was cancelled: the call to cancel, if it is open.
    func cancelled() -> UInt64? {
        state.withLock { state in
            guard case .open(let callID) = state.phase else {
                if case .opening = state.phase { state.phase = .cancelled }
                return nil
            }
            state.phase = .cancelled
            return callID
        }
    }

    func setTimer(_ timer: Task<Void, any Error>) {
        let late = state.withLock { state -> Bool in
            if case .ended = state.phase { return true }
            state.timer = timer
            return false
        }
        if late { timer.cancel() }
    }

    /// The call is over: its deadline no longer matters.
    func end() {
        let timer = state.withLock { state in
            state.phase = .ended
            return state.timer.take()
        }
        timer?.cancel()
    }
}
