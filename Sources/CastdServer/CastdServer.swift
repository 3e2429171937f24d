import CastdSupport
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
    let configuration: CastdServerConfiguration
    let handler: any CastdCallHandler
    let logger: Logger
    let onListening: @Sendable () -> Void
    let onClientsChanged: @Sendable (Int) -> Void
    let accessLogger: Logger
    /// Refusals are logged a few a minute: anyone who can reach the socket can cause them.
    let strangerLog = LogThrottle()
    let overLimitLog = LogThrottle()
    /// Connections closed for a frame that did not arrive in time: any admitted client can
    /// cause these, one per connection.
    let stalledFrameLog = LogThrottle()
    /// Refused connections open now, lingering or about to.
    let refusedOpen = Atomic<Int>(0)
    let connections = Locked<[Int: ConnectionHandle]>([:])
    let connectionsPerUID = Locked<[UInt32: Int]>([:])
    let nextConnectionID = Atomic<Int>(0)
    let shuttingDown = Atomic<Bool>(false)

    public init(
        configuration: CastdServerConfiguration,
        handler: any CastdCallHandler,
        logger: Logger,
        onListening: @escaping @Sendable () -> Void = {},
        onClientsChanged: @escaping @Sendable (_ clients: Int) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        self.accessLogger = logger.subsystem(CastdSubsystem.access)
        self.onListening = onListening
        self.onClientsChanged = onClientsChanged
    }

    /// Connections admitted and not yet closed, counted as they are accepted (on the event loop,
    /// `admit`): a connection castd reads from is counted even before its task has started, so
    /// that a client that connects after it never sees a count without it.
    public var clientCount: Int { connectionsPerUID.withLock { $0.values.reduce(0, +) } }

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
            self.handler.endStreams()  // watchers and listeners end now, with a status
            self.drainAll()
        }
        if case .path(let path) = configuration.target {
            SelfBoundSocket.remove(path)
        }
    }

    /// Lets a peer in, counting its connection; or says why not (and logs it).
    func admit(_ peer: PeerCredentials, access: Castd_V1_Access) -> CastdError? {
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

    func release(_ peer: PeerCredentials) {
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

    func drainAll() {
        let handles = connections.withLock { Array($0.values) }
        for handle in handles { handle.drain(grace: configuration.shutdownGracePeriod) }
    }

    /// Connections the kernel queues for castd to accept on a socket it binds itself.
    static let backlog: Int32 = 256

    func bind() async throws -> NIOAsyncChannel<AcceptedConnection, Never> {
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
                        try sync.addHandler(ClientFrameHandler(gate: gate, access: access, handler: self.handler))
                    } else {
                        try sync.addHandler(DropReadsHandler())
                    }
                    // No frame encoder: every frame castd writes has its length already
                    // (`CastdRPC.write`), whether the connection's task or `ClientFrameHandler`
                    // writes it.
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
    func frameDeadline(_ timeout: Duration, peer: PeerCredentials, allocator: ByteBufferAllocator)
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
}
