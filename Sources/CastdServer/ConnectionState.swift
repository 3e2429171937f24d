import CastdSupport
import CastdAPI
import Foundation
import Logging
import NIOCore
import SwiftProtobuf
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A unary call's response frame, held until its status is written with it.
final class UnaryResponse: Sendable {
    private let frame = Locked<ByteBuffer?>(nil)

    func keep(_ buffer: ByteBuffer) { frame.withLock { $0 = buffer } }
    func taken() -> ByteBuffer? { frame.withLock { $0.take() } }
}

/// A connection as it is accepted: who is at the other end, and what they may do.
///
/// One that castd stops accepting before it serves it (the task serving the socket was cancelled
/// while the connection waited to be taken) is closed when it is dropped: NIO requires an async
/// channel's writer to be finished, and traps if it is not.
final class AcceptedConnection: Sendable {
    let channel: NIOAsyncChannel<ClientFrame, ByteBuffer>
    let peer: PeerCredentials
    /// `.unspecified`: a stranger.
    let access: Castd_V1_Access
    /// Why the connection is refused (a stranger, or over its uid's limit), counted already
    /// when nil; a refused connection's channel has no frame decoder.
    let refusal: CastdError?
    /// Opened once the connection's task is ready: then its event loop answers GetStatus itself.
    let inline: InlineGate
    private let served = Atomic<Bool>(false)
    /// What undoes the accepting (the uid's connection count) should the connection never be served.
    private let unserved: @Sendable () -> Void

    init(
        channel: NIOAsyncChannel<ClientFrame, ByteBuffer>, peer: PeerCredentials, access: Castd_V1_Access,
        refusal: CastdError?, inline: InlineGate, unserved: @escaping @Sendable () -> Void
    ) {
        self.channel = channel
        self.peer = peer
        self.access = access
        self.refusal = refusal
        self.inline = inline
        self.unserved = unserved
    }

    /// The connection is being served: closing it and undoing its accepting are the server's.
    func take() {
        served.store(true, ordering: .sequentiallyConsistent)
    }

    deinit {
        guard !served.load(ordering: .sequentiallyConsistent) else { return }
        // executeThenClose finishes the writer and closes the channel; the task keeps the
        // channel (and so its writer) alive until it has. (swift-nio issue 2637.)
        let channel = self.channel
        Task { try? await channel.executeThenClose { _, _ in } }
        unserved()
    }
}

/// Writes frames on one connection. NIO's outbound writer serializes concurrent writers; each
/// frame is one buffer, so frames never interleave.
struct FrameWriter: Sendable {
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    let allocator: ByteBufferAllocator

    func message(callID: UInt64, _ message: any SwiftProtobuf.Message) async throws {
        try await outbound.write(frame(callID: callID, message))
    }

    /// A message frame, encoded, to write later.
    func frame(callID: UInt64, _ message: any SwiftProtobuf.Message) throws -> ByteBuffer {
        try encode(Self.messageFrame(callID: callID, try message.serializedData()))
    }

    /// Ends a call: OK when `error` is nil. `response`, a unary call's message frame, goes in
    /// the same write, just before the status.
    func status(callID: UInt64, _ error: CastdError?, after response: ByteBuffer? = nil) async {
        guard let status = try? encode(Self.statusFrame(callID: callID, error)) else { return }
        if let response {
            try? await outbound.write(contentsOf: [response, status])
        } else {
            try? await outbound.write(status)
        }
    }

    /// Ends a unary call with its encoded response, or with why there is none.
    func answer(callID: UInt64, _ result: Result<Data, CastdError>) async {
        switch result {
        case .success(let response):
            await status(callID: callID, nil, after: try? encode(Self.messageFrame(callID: callID, response)))
        case .failure(let error):
            await status(callID: callID, error)
        }
    }

    /// The frame carrying one of a call's response messages, already encoded.
    static func messageFrame(callID: UInt64, _ message: Data) -> Castd_V1_Frame {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        frame.message = message
        return frame
    }

    /// The frame that ends a call: OK when `error` is nil.
    static func statusFrame(callID: UInt64, _ error: CastdError?) -> Castd_V1_Frame {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        frame.status = error?.status ?? Castd_V1_Status()
        return frame
    }

    private func encode(_ frame: Castd_V1_Frame) throws -> ByteBuffer {
        let bytes: [UInt8] = try frame.serializedBytes()
        var buffer = allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        return buffer
    }
}

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

/// A refused connection's reads, dropped unread: castd reads only so that the client's writes do
/// not fail before it reads why it was refused (`CastdServer.linger`).
final class DropReadsHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ClientFrame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
