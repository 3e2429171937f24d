import CastdAPI
import Foundation
import LengthPrefixFraming
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SwiftProtobuf
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where the server listens.
public enum CastdListenTarget: Sendable {
    /// Bind this path (its directory is created; a stale socket file is replaced).
    case path(String)
    /// A socket already bound and listening, from systemd socket activation (`LISTEN_FDS`).
    case activated(fd: Int32, path: String)

    public var path: String {
        switch self {
        case .path(let p), .activated(_, let p): return p
        }
    }
}

public struct CastdServerConfiguration: Sendable {
    public var target: CastdListenTarget
    public var maximumFrameLength = CastdRPC.defaultMaximumFrameLength
    public var maximumConcurrentCalls = 128
    /// How long in-flight calls get to finish on shutdown before they are cancelled.
    public var shutdownGracePeriod: Duration = .seconds(5)

    public init(target: CastdListenTarget) {
        self.target = target
    }
}

/// Serves castd.v1 on a Unix socket: many clients, many calls per connection, one writer per
/// connection. A `Service`: graceful shutdown stops accepting, lets in-flight calls finish
/// within the grace period, cancels the rest with a status, and closes every connection.
public final class CastdServer: Service, Sendable {
    private let configuration: CastdServerConfiguration
    private let service: CastdService
    private let logger: Logger
    private let onListening: @Sendable () -> Void
    private let connections = Mutex<[Int: ConnectionHandle]>([:])
    private let nextConnectionID = Atomic<Int>(0)
    private let shuttingDown = Atomic<Bool>(false)

    public init(
        configuration: CastdServerConfiguration,
        service: CastdService,
        logger: Logger,
        onListening: @escaping @Sendable () -> Void = {}
    ) {
        self.configuration = configuration
        self.service = service
        self.logger = logger
        self.onListening = onListening
    }

    public var clientCount: Int { connections.withLock { $0.count } }

    public func run() async throws {
        let server = try await bind()
        logger.info("listening", metadata: ["socket": "\(configuration.target.path)"])
        onListening()
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { inbound in
                    for try await connection in inbound {
                        group.addTask { await self.serve(connection) }
                    }
                }
                // No longer accepting: drain every connection.
                self.drainAll()
            }
        } onGracefulShutdown: {
            self.logger.info("shutting down: no new connections, finishing calls")
            self.shuttingDown.store(true, ordering: .relaxed)
            server.channel.close(promise: nil)
            self.service.hub.finishAll()  // watchers and listeners end now, with a status
            self.service.registry.finishChannels()
            self.drainAll()
        }
        if case .path(let path) = configuration.target {
            unlink(path)
        }
    }

    private func drainAll() {
        let handles = connections.withLock { Array($0.values) }
        for handle in handles { handle.drain(grace: configuration.shutdownGracePeriod) }
    }

    private func bind() async throws -> NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never> {
        let maximumFrameLength = configuration.maximumFrameLength
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<NIOAsyncChannel<ByteBuffer, ByteBuffer>> = {
            channel in
            channel.eventLoop.makeCompletedFuture {
                let sync = channel.pipeline.syncOperations
                try sync.addHandler(ByteToMessageHandler(LengthPrefixedFrameDecoder(maximumFrameLength: maximumFrameLength)))
                try sync.addHandler(LengthPrefixedFrameEncoder())
                return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
        switch configuration.target {
        case .activated(let fd, _):
            return try await bootstrap.bind(fd, childChannelInitializer: initializer)
        case .path(let path):
            try Self.prepare(socketPath: path)
            do {
                return try await bootstrap.bind(
                    unixDomainSocketPath: path, cleanupExistingSocketFile: true, childChannelInitializer: initializer)
            } catch {
                throw CastdError(.unavailable, "cannot listen on \(path): \(error)")
            }
        }
    }

    /// Creates the socket's directory, and refuses to take over a socket someone still serves.
    static func prepare(socketPath path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw CastdError(.unavailable, "cannot create \(directory) for the socket: \(error.localizedDescription)")
            }
        }
        guard FileManager.default.fileExists(atPath: path) else { return }
        if isServed(path) {
            throw CastdError(.alreadyExists, "another castd is already serving \(path)")
        }
    }

    /// True if something accepts connections at `path`.
    static func isServed(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }

    // MARK: one connection

    private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        let id = nextConnectionID.add(1, ordering: .relaxed).newValue
        var logger = self.logger
        logger[metadataKey: "rpc.connection"] = "\(id)"
        let handle = ConnectionHandle(channel: connection.channel)
        connections.withLock { $0[id] = handle }
        defer { _ = connections.withLock { $0.removeValue(forKey: id) } }
        if shuttingDown.load(ordering: .relaxed) { handle.drain(grace: .zero) }
        logger.debug("client connected")
        do {
            try await connection.executeThenClose { inbound, outbound in
                let writer = FrameWriter(outbound: outbound, allocator: connection.channel.allocator)
                await withDiscardingTaskGroup { calls in
                    do {
                        for try await body in inbound {
                            let frame: Castd_V1_Frame
                            do {
                                frame = try CastdRPC.decodeFrame(body)
                            } catch let error as CastdError {
                                logger.notice("malformed frame from a client", metadata: ["error": "\(error.message)"])
                                await writer.status(callID: 0, error)
                                continue
                            }
                            self.dispatch(frame, handle: handle, writer: writer, calls: &calls, logger: logger)
                        }
                    } catch let error as LengthPrefixError {
                        let status: CastdError
                        switch error {
                        case .frameTooLarge:
                            status = CastdError(.resourceExhausted, "\(error); closing this connection")
                        default:
                            status = CastdError(.invalidArgument, "\(error); closing this connection")
                        }
                        logger.notice("closing a client connection", metadata: ["error": "\(error)"])
                        await writer.status(callID: 0, status)
                    } catch {
                        logger.debug("client connection ended", metadata: ["error": "\(error)"])
                    }
                    // The client is gone or must go: stop its calls.
                    handle.cancelAll(reason: CastdError(.cancelled, "the connection closed"))
                }
            }
        } catch {
            logger.debug("client connection closed", metadata: ["error": "\(error)"])
        }
        logger.debug("client disconnected")
    }

    private func dispatch(
        _ frame: Castd_V1_Frame, handle: ConnectionHandle, writer: FrameWriter,
        calls: inout DiscardingTaskGroup, logger: Logger
    ) {
        let callID = frame.callID
        switch frame.kind {
        case .start(let start)?:
            guard callID != 0 else {
                calls.addTask { await writer.status(callID: 0, CastdError(.invalidArgument, "call id 0 is reserved")) }
                return
            }
            guard let method = CastdMethod(path: start.method) else {
                let known = CastdMethod.allCases.map(\.path).joined(separator: ", ")
                calls.addTask {
                    await writer.status(callID: callID, CastdError(.unimplemented, "unknown method '\(start.method)'; castd serves \(known)"))
                }
                return
            }
            let admitted = handle.admit(callID: callID, limit: configuration.maximumConcurrentCalls)
            guard case .ok(let cancelSignal) = admitted else {
                let error: CastdError
                switch admitted {
                case .duplicate: error = CastdError(.alreadyExists, "call id \(callID) is already open on this connection")
                case .tooMany:
                    error = CastdError(
                        .resourceExhausted,
                        "more than \(configuration.maximumConcurrentCalls) calls open on one connection; wait for some to finish")
                case .draining: error = CastdError(.unavailable, "castd is shutting down")
                case .ok: fatalError("unreachable")
                }
                calls.addTask { await writer.status(callID: callID, error) }
                return
            }
            var callLogger = logger
            callLogger[metadataKey: "rpc.method"] = "\(method.rawValue)"
            callLogger[metadataKey: "rpc.call"] = "\(callID)"
            let timeout = start.timeoutMs > 0 ? Duration.milliseconds(Int64(clamping: start.timeoutMs)) : nil
            let request = Array(start.request)
            calls.addTask {
                await self.run(
                    method, callID: callID, request: request, timeout: timeout, cancelSignal: cancelSignal,
                    writer: writer, logger: callLogger)
                handle.finished(callID: callID)
            }
        case .cancel?:
            handle.cancel(callID: callID, reason: CastdError(.cancelled, "cancelled by the client"))
        case .message?, .status?, nil:
            calls.addTask {
                await writer.status(callID: callID, CastdError(.invalidArgument, "clients may only send start and cancel frames"))
            }
        }
    }

    private enum Outcome: Sendable {
        case finished(CastdError?)
        case interrupted(CastdError)
    }

    /// Runs one call, racing it against its deadline and its cancel signal.
    private func run(
        _ method: CastdMethod, callID: UInt64, request: [UInt8], timeout: Duration?,
        cancelSignal: AsyncStream<CastdError>, writer: FrameWriter, logger: Logger
    ) async {
        let service = self.service
        let outcome = await withTaskGroup(of: Outcome.self) { group -> Outcome in
            group.addTask {
                do {
                    let context = CallContext(connectedClients: self.clientCount)
                    try await service.handle(method, request: request, context: context) { message in
                        try await writer.message(callID: callID, message)
                    }
                    return .finished(nil)
                } catch let error as CastdError {
                    return .finished(error)
                } catch is CancellationError {
                    return .finished(CastdError(.cancelled, "cancelled"))
                } catch {
                    logger.error("call failed unexpectedly", metadata: ["error": "\(error)"])
                    return .finished(CastdError(.internal, "\(error)"))
                }
            }
            group.addTask {
                for await reason in cancelSignal { return .interrupted(reason) }
                return .interrupted(CastdError(.cancelled, "cancelled"))
            }
            if let timeout {
                group.addTask {
                    do {
                        try await Task.sleep(for: timeout)
                    } catch {
                        return .interrupted(CastdError(.cancelled, "cancelled"))
                    }
                    return .interrupted(CastdError(.deadlineExceeded, "deadline of \(timeout) exceeded"))
                }
            }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
        switch outcome {
        case .finished(nil):
            logger.debug("call ok")
            await writer.status(callID: callID, nil)
        case .finished(let error?), .interrupted(let error):
            logger.debug("call ended", metadata: ["rpc.code": "\(error.code.name)", "rpc.message": "\(error.message)"])
            await writer.status(callID: callID, error)
        }
    }
}

/// Writes frames on one connection. NIO's outbound writer serializes concurrent writers; each
/// frame is one buffer, so frames never interleave.
struct FrameWriter: Sendable {
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    let allocator: ByteBufferAllocator

    func message(callID: UInt64, _ message: any SwiftProtobuf.Message) async throws {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        frame.message = try message.serializedData()
        try await write(frame)
    }

    /// Ends a call: OK when `error` is nil.
    func status(callID: UInt64, _ error: CastdError?) async {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        frame.status = error?.status ?? Castd_V1_Status()
        try? await write(frame)
    }

    private func write(_ frame: Castd_V1_Frame) async throws {
        let bytes: [UInt8] = try frame.serializedBytes()
        var buffer = allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        try await outbound.write(buffer)
    }
}

/// The open calls of one connection, and its shutdown.
final class ConnectionHandle: Sendable {
    enum Admission {
        case ok(AsyncStream<CastdError>)
        case duplicate
        case tooMany
        case draining
    }

    private struct State {
        var calls: [UInt64: AsyncStream<CastdError>.Continuation] = [:]
        var draining = false
    }
    private let state = Mutex(State())
    private let channel: any Channel

    init(channel: any Channel) {
        self.channel = channel
    }

    func admit(callID: UInt64, limit: Int) -> Admission {
        state.withLock { state in
            if state.draining { return .draining }
            if state.calls[callID] != nil { return .duplicate }
            if state.calls.count >= limit { return .tooMany }
            let (stream, continuation) = AsyncStream.makeStream(of: CastdError.self, bufferingPolicy: .bufferingNewest(1))
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
        channel.eventLoop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) { [self] in
            self.cancelAll(reason: CastdError(.unavailable, "castd is shutting down"))
        }
    }
}
