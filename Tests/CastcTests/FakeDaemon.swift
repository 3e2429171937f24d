import CastdSupport
import CastTestSupport
import CastdAPI
import Foundation
import LengthPrefixFraming
import NIOCore
import NIOPosix
import SwiftProtobuf
import Testing

/// A stand-in for castd on a real Unix socket: it speaks castd.v1's framing, and hands every call
/// a client starts to `handler`, which answers it through a `FakeCall`. Nothing of the client is
/// mocked: tests use `CastdClient` and castc's commands as they are, over the socket.
final class FakeDaemon: Sendable {
    typealias Handler = @Sendable (FakeCall) async throws -> Void

    let socketPath: String
    private let handler: Handler
    /// Every call started, in order: its method and request.
    private let started = Locked<[(method: CastdMethod, request: Data)]>([])
    /// Call ids the client cancelled.
    private let cancelled = Locked<[UInt64]>([])

    private init(socketPath: String, handler: @escaping Handler) {
        self.socketPath = socketPath
        self.handler = handler
    }

    /// Serves on a socket in a temporary directory while `body` runs.
    static func run<T: Sendable>(
        _ handler: @escaping Handler,
        _ body: (FakeDaemon) async throws -> T
    ) async throws -> T {
        try await withTemporaryDirectory { directory in
            let daemon = FakeDaemon(socketPath: directory + "/castd.sock", handler: handler)
            let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .bind(unixDomainSocketPath: daemon.socketPath) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let sync = channel.pipeline.syncOperations
                        try sync.addHandler(
                            ByteToMessageHandler(
                                LengthPrefixedFrameDecoder(maximumFrameLength: CastdRPC.defaultMaximumFrameLength)))
                        try sync.addHandler(LengthPrefixedFrameEncoder())
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await withThrowingDiscardingTaskGroup { connections in
                        try await server.executeThenClose { inbound in
                            for try await connection in inbound {
                                connections.addTask { await daemon.serve(connection) }
                            }
                        }
                    }
                }
                defer {
                    server.channel.close(promise: nil)
                    group.cancelAll()
                }
                return try await body(daemon)
            }
        }
    }

    /// The requests of the calls to `method` so far, decoded.
    func requests<Request: SwiftProtobuf.Message>(_ method: CastdMethod, as: Request.Type) throws -> [Request] {
        try started.withLock { $0 }.filter { $0.method == method }.map { try Request(serializedBytes: $0.request) }
    }

    var methods: [CastdMethod] { started.withLock { $0.map(\.method) } }

    var cancelledCallIDs: [UInt64] { cancelled.withLock { $0 } }

    private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        try? await connection.executeThenClose { inbound, outbound in
            let (frames, queue) = AsyncStream.makeStream(of: ByteBuffer.self)
            let calls = Locked<[UInt64: FakeCall]>([:])
            await withDiscardingTaskGroup { group in
                // One writer: frames of concurrent calls never interleave.
                group.addTask {
                    for await frame in frames { try? await outbound.write(frame) }
                }
                do {
                    for try await body in inbound {
                        let frame = try CastdRPC.decodeFrame(body)
                        switch frame.kind {
                        case .start(let start):
                            guard let method = CastdMethod(path: start.method) else {
                                FakeCall(id: frame.callID, method: .getStatus, request: Data(), queue: queue)
                                    .finish(.unimplemented, "unknown method \(start.method)")
                                continue
                            }
                            started.withLock { $0.append((method, start.request)) }
                            let call = FakeCall(id: frame.callID, method: method, request: start.request, queue: queue)
                            calls.withLock { $0[frame.callID] = call }
                            group.addTask {
                                do {
                                    try await self.handler(call)
                                } catch {
                                    call.finish(.internal, "the fake daemon's handler failed: \(error)")
                                }
                            }
                        case .cancel:
                            cancelled.withLock { $0.append(frame.callID) }
                            calls.withLock { $0[frame.callID] }?.cancel()
                        default:
                            break
                        }
                    }
                } catch {
                    // The client went away mid-frame: nothing to answer.
                }
                for call in calls.withLock({ Array($0.values) }) { call.cancel() }
                queue.finish()
            }
        }
    }
}

/// One call a client started on the fake daemon.
final class FakeCall: Sendable {
    let id: UInt64
    let method: CastdMethod
    let request: Data
    private let queue: AsyncStream<ByteBuffer>.Continuation
    private let cancellation: AsyncStream<Void>
    private let cancellationContinuation: AsyncStream<Void>.Continuation
    private let ended = Locked(false)

    init(id: UInt64, method: CastdMethod, request: Data, queue: AsyncStream<ByteBuffer>.Continuation) {
        self.id = id
        self.method = method
        self.request = request
        self.queue = queue
        (cancellation, cancellationContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    func decode<Request: SwiftProtobuf.Message>(_: Request.Type) throws -> Request {
        try Request(serializedBytes: request)
    }

    /// A response message (a unary call's one, or one of a stream's).
    func send(_ message: some SwiftProtobuf.Message) throws {
        var frame = Castd_V1_Frame()
        frame.callID = id
        frame.message = try message.serializedData()
        write(frame)
    }

    /// A unary call's answer: the message, then OK.
    func reply(_ message: some SwiftProtobuf.Message) throws {
        try send(message)
        finish(.ok)
    }

    /// Ends the call with a status (once; later ends are dropped).
    func finish(_ code: CastdCode, _ message: String = "", reason: String = "", deviceError: CastdDeviceError? = nil) {
        guard
            ended.withLock({ ended in
                defer { ended = true }; return !ended
            })
        else { return }
        var frame = Castd_V1_Frame()
        frame.callID = id
        frame.status = CastdError(code, message, reason: reason, deviceError: deviceError).status
        write(frame)
    }

    /// Returns once the client cancelled the call (or went away), having answered CANCELLED.
    func waitForCancel() async {
        for await _ in cancellation { break }
        finish(.cancelled, "cancelled by the client")
    }

    fileprivate func cancel() {
        cancellationContinuation.yield()
        cancellationContinuation.finish()
    }

    private func write(_ frame: Castd_V1_Frame) {
        guard let bytes: [UInt8] = try? frame.serializedBytes() else { return }
        queue.yield(ByteBuffer(bytes: bytes))
    }
}
