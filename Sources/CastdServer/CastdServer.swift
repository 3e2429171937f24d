import CastChannel
import CastSync
import CastdAPI
import CastdLogging
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
    /// Bind this path (its directory is created; a stale socket file is replaced; see
    /// `SelfBoundSocket` for what is refused).
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
    /// Who may call, decided from each connection's peer credentials.
    public var accessPolicy = CastdAccessPolicy()
    /// The largest frame a client may send; a larger one closes its connection.
    public var maximumFrameLength = CastdRPC.defaultMaximumFrameLength
    /// Calls open at once on one connection; more are refused with RESOURCE_EXHAUSTED.
    public var maximumConcurrentCalls = 128
    /// Connections open at once from one uid; more are refused with RESOURCE_EXHAUSTED.
    public var maximumConnectionsPerUID = 256
    /// A connection that sends no complete frame this long after connecting is closed; nil:
    /// never.
    public var idleTimeout: Duration? = .seconds(30)
    /// Once a frame's first byte has arrived, the whole frame must arrive within this (time
    /// castd spends not reading, because the client does not read its answers, does not
    /// count), else the connection is closed: a client cannot hold a partial frame, and the
    /// buffer for it, for ever. nil: no limit.
    public var frameTimeout: Duration? = .seconds(30)
    /// How long in-flight calls get to finish on shutdown before they are cancelled.
    public var shutdownGracePeriod: Duration = .seconds(5)
    /// How long a refused connection stays open for reading after its status was written
    /// (see `CastdServer.linger`).
    public var refusalLinger: Duration = .seconds(2)
    /// Refused connections kept open at once, each for up to `refusalLinger`, so that their
    /// clients read why; past this many, a refused connection is closed as soon as its status
    /// is written. A flood of refused connections holds at most this many descriptors.
    public var maximumLingeringRefusals = 64

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
    private let onClientsChanged: @Sendable (Int) -> Void
    private let accessLogger: Logger
    /// Refusals are logged a few a minute: anyone who can reach the socket can cause them.
    private let strangerLog = LogThrottle()
    private let overLimitLog = LogThrottle()
    /// Connections closed for a frame that did not arrive in time: any admitted client can
    /// cause these, one per connection.
    private let stalledFrameLog = LogThrottle()
    /// Refused connections open now, lingering or about to.
    private let refusedOpen = Atomic<Int>(0)
    private let connections = Locked<[Int: ConnectionHandle]>([:])
    private let connectionsPerUID = Locked<[UInt32: Int]>([:])
    private let nextConnectionID = Atomic<Int>(0)
    private let shuttingDown = Atomic<Bool>(false)

    public init(
        configuration: CastdServerConfiguration,
        service: CastdService,
        logger: Logger,
        onListening: @escaping @Sendable () -> Void = {},
        onClientsChanged: @escaping @Sendable (_ clients: Int) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.service = service
        self.logger = logger
        self.accessLogger = logger.subsystem(CastdSubsystem.access)
        self.onListening = onListening
        self.onClientsChanged = onClientsChanged
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
            self.service.endStreams()  // watchers and listeners end now, with a status
            self.drainAll()
        }
        if case .path(let path) = configuration.target {
            SelfBoundSocket.remove(path)
        }
    }

    /// Lets a peer in, counting its connection; or says why not (and logs it).
    private func admit(_ peer: PeerCredentials, access: Castd_V1_Access) -> CastdError? {
        let path = configuration.target.path
        if access == .unspecified {
            let policy = configuration.accessPolicy
            if let metadata = strangerLog.metadata([
                "peer.uid": "\(peer.uid)", "peer.pid": "\(peer.pid)", "peer.groups": "\(peer.allGroups.sorted())",
            ]) {
                accessLogger.warning(
                    "refused a client: not castd's user, root, or a member of a permitted group", metadata: metadata)
            }
            var allowed = ["its own user", "root"]
            if !policy.controlGroups.isEmpty {
                allowed.append("members of \(Self.groupNames(policy.controlGroups)) (control)")
            }
            if !policy.readGroups.isEmpty {
                allowed.append("members of \(Self.groupNames(policy.readGroups)) (read only)")
            }
            return CastdError(
                .permissionDenied,
                "castd at \(path) does not let \(peer) in: only \(allowed.joined(separator: ", ")) may use it")
        }
        let limit = configuration.maximumConnectionsPerUID
        let admitted = connectionsPerUID.withLock { counts -> Bool in
            guard counts[peer.uid, default: 0] < limit else { return false }
            counts[peer.uid, default: 0] += 1
            return true
        }
        guard admitted else {
            if let metadata = overLimitLog.metadata([
                "peer.uid": "\(peer.uid)", "peer.pid": "\(peer.pid)", "limit": "\(limit)",
            ]) {
                accessLogger.notice("refused a connection: too many from one uid", metadata: metadata)
            }
            return CastdError(
                .resourceExhausted,
                "uid \(peer.uid) already has \(limit) connections open to castd (limits.max_connections_per_uid); close some"
            )
        }
        return nil
    }

    private func release(_ peer: PeerCredentials) {
        connectionsPerUID.withLock { counts in
            let left = counts[peer.uid, default: 1] - 1
            counts[peer.uid] = left > 0 ? left : nil
        }
    }

    /// "castd (101)", or "101" for a group without a name; several joined with "or".
    static func groupNames(_ gids: Set<UInt32>) -> String {
        gids.sorted().map { gid in
            var entry = group()
            var result: UnsafeMutablePointer<group>?
            var buffer = [CChar](repeating: 0, count: 4096)
            if getgrgid_r(gid, &entry, &buffer, buffer.count, &result) == 0, let found = result {
                return String(cString: found.pointee.gr_name)
            }
            return "group \(gid)"
        }.joined(separator: " or ")
    }

    private func drainAll() {
        let handles = connections.withLock { Array($0.values) }
        for handle in handles { handle.drain(grace: configuration.shutdownGracePeriod) }
    }

    /// Connections the kernel queues for castd to accept on a socket it binds itself.
    static let backlog: Int32 = 256

    private func bind() async throws -> NIOAsyncChannel<AcceptedConnection, Never> {
        let maximumFrameLength = configuration.maximumFrameLength
        let policy = configuration.accessPolicy
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: Self.backlog)
        // The peer's credentials are read, its access decided and its connection counted as the
        // connection is set up: a refused connection (a stranger, or one over its uid's limit)
        // never gets a frame decoder, so nothing it sends is parsed or buffered.
        let initializer: @Sendable (any Channel) -> EventLoopFuture<AcceptedConnection> = { [self] channel in
            PeerCredentials.of(channel).flatMapThrowing { peer in
                let access = policy.access(for: peer)
                let refusal = self.admit(peer, access: access)
                do {
                    let sync = channel.pipeline.syncOperations
                    let gate = InlineGate()
                    if refusal == nil {
                        if let frameTimeout = self.configuration.frameTimeout {
                            try sync.addHandler(
                                self.frameDeadline(frameTimeout, peer: peer, allocator: channel.allocator))
                        }
                        try sync.addHandler(
                            ByteToMessageHandler(LengthPrefixedFrameDecoder(maximumFrameLength: maximumFrameLength)))
                        // Before the encoder: it writes its answers framed already.
                        try sync.addHandler(ClientFrameHandler(gate: gate, access: access))
                    } else {
                        try sync.addHandler(DropReadsHandler())
                    }
                    try sync.addHandler(LengthPrefixedFrameEncoder())
                    let wrapped = try NIOAsyncChannel<ClientFrame, ByteBuffer>(wrappingChannelSynchronously: channel)
                    return AcceptedConnection(
                        channel: wrapped, peer: peer, access: access, refusal: refusal, inline: gate,
                        unserved: { [self] in if refusal == nil { self.release(peer) } })
                } catch {
                    if refusal == nil { self.release(peer) }
                    throw error
                }
            }
        }
        switch configuration.target {
        case .activated(let fd, _):
            return try await bootstrap.bind(fd, childChannelInitializer: initializer)
        case .path(let path):
            let fd = try SelfBoundSocket.listen(at: path, permissions: policy.socketPermissions, backlog: Self.backlog)
            do {
                let server = try await bootstrap.bind(fd, childChannelInitializer: initializer)
                // NIO listens again on a socket it is given, with its default backlog (128).
                Glibc.listen(fd, Self.backlog)
                return server
            } catch {
                // The descriptor is left alone: NIO may have closed it with the channel, and
                // castd stops on this error anyway.
                SelfBoundSocket.remove(path)
                throw CastdError(.unavailable, "cannot listen on \(path): \(error)")
            }
        }
    }

    /// The handler that closes an admitted connection whose frame does not arrive within
    /// `timeout` of its first byte, with DEADLINE_EXCEEDED and a notice (a few a minute).
    private func frameDeadline(_ timeout: Duration, peer: PeerCredentials, allocator: ByteBufferAllocator)
        -> FrameReadDeadlineHandler
    {
        FrameReadDeadlineHandler(
            deadline: TimeAmount(timeout),
            farewell: { expiry in
                let status = CastdError(
                    .deadlineExceeded,
                    "a frame did not arrive whole within \(timeout) of its first byte (\(expiry.received) of \(expiry.expected.map(String.init) ?? "at least 5") bytes); castd closed the connection"
                )
                var buffer = allocator.buffer(capacity: 256)
                guard (try? CastdRPC.write(FrameWriter.statusFrame(callID: 0, status), into: &buffer)) != nil else {
                    return nil
                }
                return buffer
            },
            expired: { [self] expiry in
                if let metadata = stalledFrameLog.metadata([
                    "peer.uid": "\(peer.uid)", "peer.pid": "\(peer.pid)", "frame.received": "\(expiry.received)",
                    "frame.expected": "\(expiry.expected.map(String.init) ?? "?")", "after": "\(timeout)",
                ]) {
                    logger.notice("closing a client connection: a frame did not arrive in time", metadata: metadata)
                }
            })
    }

    // MARK: one connection

    /// After a refusal: castd stops writing and reads (and drops) what the client sends until it
    /// closes, for at most `linger`. A client writes its first call as soon as it has
    /// connected, often before castd has accepted the connection; had castd closed at once, that
    /// write could meet a closed socket (EPIPE), and the client would report a lost connection
    /// instead of reading the status that says why it was refused. Nothing read is parsed.
    private static func linger(
        _ channel: any Channel, inbound: NIOAsyncChannelInboundStream<ClientFrame>, for linger: Duration
    ) async {
        try? await channel.close(mode: .output)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await _ in inbound {}
                } catch {}
            }
            group.addTask { try? await Task.sleep(for: linger) }
            await group.next()
            group.cancelAll()
        }
    }

    private func serve(_ accepted: AcceptedConnection) async {
        accepted.take()
        let connection = accepted.channel
        let peer = accepted.peer
        let id = nextConnectionID.add(1, ordering: .relaxed).newValue
        var logger = self.logger
        logger[metadataKey: "rpc.connection"] = "\(id)"
        logger[metadataKey: "peer.uid"] = "\(peer.uid)"
        logger[metadataKey: "peer.pid"] = "\(peer.pid)"

        if let refusal = accepted.refusal {
            // Lingers only while few refused connections are open; past that, a flood of them
            // would hold a descriptor and a task each for the whole linger.
            let lingers = refusedOpen.add(1, ordering: .relaxed).newValue <= configuration.maximumLingeringRefusals
            defer { refusedOpen.subtract(1, ordering: .relaxed) }
            try? await connection.executeThenClose { inbound, outbound in
                await FrameWriter(outbound: outbound, allocator: connection.channel.allocator).status(
                    callID: 0, refusal)
                if lingers {
                    await Self.linger(connection.channel, inbound: inbound, for: self.configuration.refusalLinger)
                }
            }
            return
        }
        defer { release(peer) }

        let handle = ConnectionHandle(channel: connection.channel)
        onClientsChanged(
            connections.withLock {
                $0[id] = handle; return $0.count
            })
        defer {
            onClientsChanged(
                connections.withLock {
                    $0.removeValue(forKey: id); return $0.count
                })
        }
        if shuttingDown.load(ordering: .relaxed) { handle.drain(grace: .zero) }
        let inline = InlineCalls(
            service: service, handle: handle, access: accepted.access,
            maximumConcurrentCalls: configuration.maximumConcurrentCalls,
            clientCount: { [weak self] in self?.clientCount ?? 0 },
            logger: logger)
        accepted.inline.open(inline)
        logger.debug("client connected", metadata: ["peer.access": "\(accepted.access.name)"])
        let idleTimeout = configuration.idleTimeout
        let channel = connection.channel
        let idleLogger = logger
        do {
            try await connection.executeThenClose { inbound, outbound in
                let writer = FrameWriter(outbound: outbound, allocator: connection.channel.allocator)
                await withDiscardingTaskGroup { calls in
                    if let idleTimeout {
                        calls.addTask {
                            guard await handle.sentNothing(within: idleTimeout) else { return }
                            idleLogger.notice(
                                "closing a client connection that sent nothing", metadata: ["after": "\(idleTimeout)"])
                            await writer.status(
                                callID: 0,
                                CastdError(
                                    .deadlineExceeded,
                                    "no request within \(idleTimeout) of connecting; castd closed the connection"))
                            channel.close(promise: nil)
                        }
                    }
                    defer { handle.frameArrived() }  // ends the idle timer when the client goes
                    do {
                        for try await frame in inbound {
                            handle.frameArrived()
                            await self.handle(
                                frame, inline: inline, peer: peer, handle: handle, writer: writer, calls: &calls,
                                logger: logger)
                            // Handled (answered, started or refused): the event loop may answer
                            // inline calls again.
                            accepted.inline.handledForwarded()
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
        let unlogged = handle.noticeLog.takeUnlogged()
        if unlogged > 0 {
            logger.notice(
                "client disconnected; \(unlogged) more malformed frames or refused calls from it were not logged")
        }
        logger.debug("client disconnected")
    }

    /// Handles a frame the event loop did not: starts the call it opens, answers it if it is an
    /// inline call, cancels a call, or refuses it. A refusal or an inline answer is written
    /// before it returns, so that a client sending calls and not reading stops being read.
    private func handle(
        _ frame: ClientFrame, inline: InlineCalls, peer: PeerCredentials, handle: ConnectionHandle,
        writer: FrameWriter, calls: inout DiscardingTaskGroup, logger: Logger
    ) async {
        let start: CallStart
        switch frame {
        case .invalid(let error, let malformed):
            if malformed, let metadata = handle.noticeLog.metadata(["error": "\(error.message)"]) {
                logger.notice("malformed frame from a client", metadata: metadata)
            }
            await writer.status(callID: 0, error)
            return
        case .cancel(let callID):
            handle.cancel(callID: callID, reason: CastdError(.cancelled, "cancelled by the client"))
            return
        case .start(let call):
            start = call
        }
        let callID = start.callID
        let limit = configuration.maximumConcurrentCalls
        // A call to run as a task is registered; one answered inline, or refused, is only judged.
        let admission =
            start.answersInline || start.refusal != nil
            ? handle.check(callID: callID, limit: limit) : handle.admit(callID: callID, limit: limit)
        if case .duplicate = admission {
            // On call id 0: a status on the id would end the call still open there (rpc.proto).
            await writer.status(
                callID: 0,
                CastdError(
                    .alreadyExists, "call id \(callID) is already open on this connection; this start was ignored"))
            return
        }
        if let refusal = start.refusal {
            if case .needsControl(let method) = refusal,
                let metadata = handle.noticeLog.metadata([
                    "rpc.method": "\(method.rawValue)", "peer.uid": logger[metadataKey: "peer.uid"] ?? "",
                ])
            {
                accessLogger.notice("refused a call that needs control access", metadata: metadata)
            }
            await writer.status(callID: callID, refusal.error)
            return
        }
        switch admission {
        case .ok(nil):
            await writer.answer(callID: callID, inline.respond(to: start))
        case .ok(let cancelSignal?):
            guard let method = start.method else { return }
            let access = inline.access
            calls.addTask {
                await self.run(
                    method, callID: callID, request: start.request, timeout: start.timeout,
                    cancelSignal: cancelSignal, access: access, peer: peer, writer: writer, logger: logger)
                handle.finished(callID: callID)
            }
        case .tooMany:
            await writer.status(
                callID: callID,
                CastdError(
                    .resourceExhausted,
                    "more than \(limit) calls open on one connection; wait for some to finish"))
        case .draining:
            await writer.status(callID: callID, CastdError(.unavailable, "castd is shutting down"))
        case .duplicate:
            break  // answered above
        }
    }

    private enum Outcome: Sendable {
        case finished(CastdError?)
        case interrupted(CastdError)
    }

    /// Runs one call, racing it against its deadline and its cancel signal. A unary call's
    /// response is written with its status, in one write.
    private func run(
        _ method: CastdMethod, callID: UInt64, request: [UInt8], timeout: Duration?,
        cancelSignal: AsyncStream<CastdError>, access: Castd_V1_Access, peer: PeerCredentials, writer: FrameWriter,
        logger: Logger
    ) async {
        let service = self.service
        // The metadata of this call's log lines (given per line: a Logger per call costs more
        // than the call itself when nothing is logged).
        @Sendable func call() -> Logger.Metadata { ["rpc.method": "\(method.rawValue)", "rpc.call": "\(callID)"] }
        let response = UnaryResponse()
        let outcome = await withTaskGroup(of: Outcome.self) { group -> Outcome in
            group.addTask {
                do {
                    let context = CallContext(connectedClients: self.clientCount, access: access, peer: peer)
                    try await service.handle(method, request: request, context: context) { message in
                        if method.isStreaming {
                            try await writer.message(callID: callID, message)
                        } else {
                            try response.keep(writer.frame(callID: callID, message))
                        }
                    }
                    return .finished(nil)
                } catch let error as CastdError {
                    return .finished(error)
                } catch is CancellationError {
                    return .finished(CastdError(.cancelled, "cancelled"))
                } catch {
                    logger.error("call failed unexpectedly", metadata: call().merging(["error": "\(error)"]) { $1 })
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
            logger.debug("call ok", metadata: call())
            await writer.status(callID: callID, nil, after: response.taken())
        case .finished(let error?), .interrupted(let error):
            logger.debug(
                "call ended",
                metadata: call().merging(["rpc.code": "\(error.code.name)", "rpc.message": "\(error.message)"]) { $1 })
            await writer.status(callID: callID, error, after: response.taken())
        }
    }
}

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
    private let firstFrame = AsyncStream<Void>.makeStream()
    /// What this client can make castd log at will (malformed frames, calls it may not make): a
    /// few records a minute, and a count when it goes.
    let noticeLog = LogThrottle(burst: 3)

    init(channel: any Channel) {
        self.channel = channel
    }

    /// A frame arrived (or the connection ended): the idle timer stops.
    func frameArrived() {
        firstFrame.continuation.finish()
    }

    /// True if `timeout` passed with no frame from the client and the connection still open.
    /// Only one caller per connection.
    func sentNothing(within timeout: Duration) async -> Bool {
        let arrived = firstFrame.stream
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in arrived {}
                return false
            }
            group.addTask {
                do { try await Task.sleep(for: timeout) } catch { return false }
                return true
            }
            let expired = await group.next() ?? false
            group.cancelAll()
            return expired
        }
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
