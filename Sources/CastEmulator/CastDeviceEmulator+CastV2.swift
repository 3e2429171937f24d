import CastProtocol
import Foundation
import LengthPrefixFraming
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// The CastV2 server: TLS, 4-byte length framing, CastMessages, heartbeat, then the device.
///
/// The listener can be closed and bound again while the emulator runs (a restart, a new port:
/// see `CastDeviceEmulator+Faults.swift`). Each bind has a generation; a connection that one
/// accepted while it was being replaced is closed at once, so that nothing outlives a restart.
extension CastDeviceEmulator {
    /// The CastV2 listener's state (in `Core`, under its lock).
    struct CastV2Listener {
        enum Phase {
            /// ``CastDeviceEmulator/start()`` has not bound it yet.
            case notBound
            case listening(CastServer)
            /// Closed for a while (a restart): connections are refused. The port is held
            /// meanwhile by a bound socket, if it could be.
            case down(BoundSocket?)
            case shutDown
        }

        var phase = Phase.notBound
        var context: CastV2Context?
        var endpoints: EmulatorEndpoints?
        /// The generation the next bind gets.
        var nextGeneration = 1
        /// Connections accepted by a bind older than this are closed at once.
        var oldestAccepted = 0
        var endpointWatchers: [Int: AsyncStream<EmulatorEndpoints>.Continuation] = [:]
        var nextEndpointWatcher = 1

        var isListening: Bool {
            if case .listening = phase { true } else { false }
        }

        /// The phase in words, for errors.
        var phaseName: String {
            switch phase {
            case .notBound: "not started"
            case .listening: "listening"
            case .down: "down"
            case .shutDown: "shut down"
            }
        }

        var server: CastServer? {
            if case .listening(let server) = phase { server } else { nil }
        }
    }

    /// A bound CastV2 listener, not yet serving.
    struct CastV2Binding {
        var server: CastServer
        var generation: Int
        var port: Int
    }

    /// Binds a CastV2 listener on `port`, or listens on `socket`, bound already (taking it over).
    func bindCastV2(
        port: Int, socket: BoundSocket? = nil, context: CastV2Context
    ) async throws -> CastV2Binding {
        let heartbeat = configuration.heartbeat
        let codecLogger = logger
        let tap = configuration.messageTap
        let generation = core.withLock { core in
            defer { core.listener.nextGeneration += 1 }
            return core.listener.nextGeneration
        }
        let heartbeatMode: @Sendable () -> EmulatorFaults.Heartbeat = { [weak self] in
            self?.core.withLock { $0.faults.heartbeat } ?? .normal
        }
        let bootstrap = ServerBootstrap(group: .singletonMultiThreadedEventLoopGroup)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<AcceptedConnection> = { channel in
            let (number, admission) = self.admit(channel, generation: generation)
            let remote = channel.remoteAddress.map { "\($0)" } ?? "?"
            return channel.eventLoop.makeCompletedFuture {
                let pipeline = channel.pipeline.syncOperations
                // First, below TLS: what cuts the link without a TLS goodbye.
                try pipeline.addHandler(LinkCutter(closeAtOnce: admission != .accepted))
                if admission == .accepted {
                    try pipeline.addHandler(NIOSSLServerHandler(context: context.tls))
                    // Where hostile faults write their bytes, past the codec and the framing.
                    try pipeline.addHandler(RawFrameWriter())
                    try CastV2Pipeline.addFraming(to: pipeline, badMessages: .close)
                    try pipeline.addHandler(
                        CastMessageEncoder { message, error in
                            codecLogger.warning(
                                "not sent: \(error)", metadata: ["cast.namespace": "\(message.namespace)"])
                        })
                    if let log = context.messageLog {
                        try pipeline.addHandler(CastMessageLogHandler(connection: number, log: log))
                    }
                    if let tap {
                        try pipeline.addHandler(CastMessageTapHandler(connection: number, tap: tap))
                    }
                    try pipeline.addHandler(DeviceHeartbeatHandler(heartbeat, mode: heartbeatMode))
                }
                return AcceptedConnection(
                    number: number,
                    remote: remote,
                    admission: admission,
                    channel: try NIOAsyncChannel(wrappingChannelSynchronously: channel)
                )
            }
        }
        let server: CastServer
        let bound: BoundSocket
        do {
            bound = try socket ?? BoundSocket.make(host: configuration.host, port: port)
            server = try await bootstrap.bind(bound.descriptor, childChannelInitializer: initializer)
        } catch {
            throw EmulatorError(.bind, "cannot listen on \(configuration.host):\(port)", cause: error)
        }
        return CastV2Binding(server: server, generation: generation, port: bound.port)
    }

    /// Whether a new TCP connection may go on to TLS; if so it is a link from now on.
    private func admit(_ channel: any Channel, generation: Int) -> (Int, AcceptedConnection.Admission) {
        let (number, admission) = core.withLock { core -> (Int, AcceptedConnection.Admission) in
            let number = core.nextConnection
            core.nextConnection += 1
            if generation < core.listener.oldestAccepted { return (number, .listenerClosed) }
            if core.faults.refuseTLS { return (number, .refused) }
            core.links[number] = Link(channel: channel, generation: generation)
            return (number, .accepted)
        }
        if admission == .accepted {
            channel.closeFuture.whenComplete { [weak self] _ in
                guard let self else { return }
                _ = core.withLock { $0.links.removeValue(forKey: number) }
                linksChanged.signal()
            }
        }
        return (number, admission)
    }

    /// Makes a listener bound by ``start()`` the current one. False when the emulator was shut
    /// down meanwhile (the caller closes it).
    func installFirstListener(_ binding: CastV2Binding, servers: Servers) -> Bool {
        let installed = core.withLock { core -> Bool in
            guard case .notBound = core.listener.phase else { return false }
            core.listener.phase = .listening(binding.server)
            core.listener.context = servers.castV2
            core.listener.endpoints = servers.endpoints
            return true
        }
        if installed { castV2Servers.continuation.yield(binding.server) }
        return installed
    }

    /// Closes the CastV2 listener for good (shutdown).
    func closeCastV2Listener() async {
        let server = core.withLock { core -> CastServer? in
            defer { core.listener.phase = .shutDown }
            if case .down(let holder) = core.listener.phase { holder?.release() }
            return core.listener.server
        }
        castV2Servers.continuation.finish()
        try? await server?.channel.close()
        listenerChanged.signal()
    }

    /// Serves every CastV2 listener bound, the first and those after a restart or a move, until
    /// the emulator shuts down.
    func serveCastV2Listeners(authentication: Authentication) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            for await server in castV2Servers.stream {
                group.addTask {
                    do {
                        try await self.serveCastV2(server, authentication: authentication)
                    } catch {
                        // A listener closed on purpose may end with an error; only the current
                        // one's errors matter.
                        let isCurrent = self.core.withLock { $0.listener.server?.channel === server.channel }
                        if isCurrent { throw error }
                        self.logger.debug("a replaced CastV2 listener ended: \(error)")
                    }
                }
            }
        }
    }

    func serveCastV2(_ server: CastServer, authentication: Authentication) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { inbound in
                for try await connection in inbound {
                    group.addTask { await self.serve(connection, authentication: authentication) }
                }
            }
        }
    }

    /// One TLS connection: its own errors end it, never the server.
    private func serve(_ connection: AcceptedConnection, authentication: Authentication) async {
        let number = connection.number
        var logger = self.logger
        logger[metadataKey: "cast.connection"] = "\(number)"
        guard connection.admission == .accepted else {
            // Closed by its LinkCutter already; nothing of it reaches the device.
            let why = connection.admission == .refused ? "refusing TLS (fault injection)" : "the listener has closed"
            logger.info("connection #\(number) from \(connection.remote) closed before TLS: \(why)")
            try? await connection.channel.executeThenClose { _, _ in }
            return
        }
        let (outbound, continuation) = AsyncStream.makeStream(of: Outgoing.self)
        core.withLock { core in
            core.device.connectionOpened(number)
            core.outbound[number] = continuation
        }
        logger.info("connection #\(number) from \(connection.remote)")

        var reason: String
        do {
            try await connection.channel.executeThenClose { inbound, writer in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // The only writer of this connection: replies and broadcasts, in order, each
                    // no earlier than it is due (a reply delay).
                    group.addTask {
                        for await item in outbound {
                            if let due = item.due { try await Task.sleep(until: due, clock: .continuous) }
                            try await writer.write(item.message)
                        }
                    }
                    for try await message in inbound {
                        if self.core.withLock({ $0.faults.heartbeat == .silent }) {
                            logger.debug("silent (fault injection), ignored: \(message.summary)")
                            continue
                        }
                        self.receive(message, on: number, authentication: authentication, logger: logger)
                    }
                    group.cancelAll()
                }
            }
            reason = Task.isCancelled ? "emulator shutting down" : "closed by the sender"
        } catch let error as LengthPrefixError {
            reason = "protocol violation, \(error)"
        } catch let error as CastProtocolError {
            reason = "protocol violation, \(error)"
        } catch let error as EmulatorError where error.code == .heartbeatTimeout {
            reason = error.message
        } catch let error as NIOSSLError where error == .uncleanShutdown {
            reason = "closed by the sender (without TLS close_notify)"
        } catch is CancellationError {
            reason = "emulator shutting down"
        } catch {
            reason = "\(error)"
        }
        let (closedSenders, wasCut) = core.withLock { core -> ([String], Bool) in
            let senders = core.device.connections[number].map { Set($0.map(\.sender)) } ?? []
            core.device.connectionClosed(number)
            core.outbound.removeValue(forKey: number)?.finish()
            return (senders.sorted(), core.cutLinks.remove(number) != nil)
        }
        linksChanged.signal()
        if wasCut { reason = "cut by the emulator (fault injection)" }
        let who = closedSenders.isEmpty ? "" : " (senders: \(closedSenders.joined(separator: ", ")))"
        logger.info("connection #\(number) closed: \(reason)\(who)")
    }

    func receive(_ message: CastMessage, on connection: Int, authentication: Authentication, logger: Logger) {
        if logger.logLevel <= .debug {
            logger.debug("in #\(connection): \(message.summary)")
        }
        if message.namespace == CastNamespace.deviceAuth {
            authenticate(message, on: connection, authentication: authentication, logger: logger)
            return
        }
        let now = clock.now()
        let outcome = transition { $0.receive(message, on: connection, now: now) }
        report(outcome, logger: logger)
    }
}

extension CastDeviceEmulator {
    /// `tp.deviceauth`: answers an AuthChallenge like a real device (no virtual connection needed).
    func authenticate(_ message: CastMessage, on connection: Int, authentication: Authentication, logger: Logger) {
        guard message.payloadType == .binary else {
            logger.info("ignored a text message on tp.deviceauth")
            return
        }
        let impostor = authentication.credentials.impostor.map { " as an impostor (\($0.rawValue))" } ?? ""
        guard
            let bytes = authentication.credentials.reply(
                to: message.payloadBinary, tlsCertificateDER: authentication.tlsCertificateDER
            )
        else {
            logger.info("device authentication: left a challenge from \(message.sourceID) unanswered\(impostor)")
            return
        }
        if let reply = try? DeviceAuthMessage(serializedBytes: bytes), reply.hasError {
            logger.info(
                "device authentication: refused a challenge from \(message.sourceID) (\(reply.error.errorType))\(impostor)"
            )
        } else {
            logger.info("device authentication: answered \(message.sourceID)\(impostor)")
        }
        let answer = CastMessage.binary(
            source: message.destinationID, destination: message.sourceID, namespace: CastNamespace.deviceAuth,
            bytes: Data(bytes)
        )
        core.withLock { core in core.enqueue(answer, on: connection) }
    }
}

/// The first handler of every accepted connection, below TLS. Closing through it closes the
/// socket without a TLS close_notify, like a device that lost its network or rebooted;
/// `closeAtOnce` closes a connection as soon as it is accepted (TLS refused, listener closed).
///
/// It shuts the socket down for writing before closing it: the FIN goes out even when a process
/// spawned meanwhile inherited the socket (NIO's sockets are not close-on-exec), which a close
/// alone would not do.
final class LinkCutter: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    private let closeAtOnce: Bool

    init(closeAtOnce: Bool) {
        self.closeAtOnce = closeAtOnce
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if closeAtOnce, context.channel.isActive { Self.close(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if closeAtOnce {
            Self.close(context)
            return
        }
        context.fireChannelActive()
    }

    private static func close(_ context: ChannelHandlerContext) {
        context.close(mode: .output, promise: nil)
        context.close(promise: nil)
    }

    /// Closes `channel`'s socket from below TLS; returns once it is closed.
    static func cut(_ channel: any Channel) async {
        channel.eventLoop.execute {
            guard let context = try? channel.pipeline.syncOperations.context(handlerType: LinkCutter.self) else {
                channel.close(promise: nil)
                return
            }
            close(context)
        }
        try? await channel.closeFuture.get()
    }
}
