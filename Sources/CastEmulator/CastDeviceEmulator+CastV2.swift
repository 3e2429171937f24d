import CastProtocol
import Foundation
import LengthPrefixFraming
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// The CastV2 server: TLS, 4-byte length framing, CastMessages, heartbeat, then the device.
extension CastDeviceEmulator {
    func bindCastV2(tls: NIOSSLContext, log: EmulatorMessageLog?) async throws -> CastServer {
        let heartbeat = configuration.heartbeat
        let codecLogger = logger
        do {
            return try await ServerBootstrap(group: .singletonMultiThreadedEventLoopGroup)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .bind(host: configuration.host, port: configuration.port) { channel in
                    let number = self.core.withLock { core in
                        defer { core.nextConnection += 1 }
                        return core.nextConnection
                    }
                    let remote = channel.remoteAddress.map { "\($0)" } ?? "?"
                    return channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(NIOSSLServerHandler(context: tls))
                        try pipeline.addHandler(
                            ByteToMessageHandler(
                                LengthPrefixedFrameDecoder(maximumFrameLength: CastWire.maximumFrameLength)
                            )
                        )
                        try pipeline.addHandler(LengthPrefixedFrameEncoder())
                        try pipeline.addHandler(CastMessageCodec(logger: codecLogger))
                        if let log {
                            try pipeline.addHandler(CastMessageLogHandler(connection: number, log: log))
                        }
                        try pipeline.addHandler(CastHeartbeatHandler(heartbeat))
                        return AcceptedConnection(
                            number: number,
                            remote: remote,
                            channel: try NIOAsyncChannel(wrappingChannelSynchronously: channel)
                        )
                    }
                }
        } catch {
            throw EmulatorError(.bind, "cannot listen on \(configuration.host):\(configuration.port)", cause: error)
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
        let (outbound, continuation) = AsyncStream.makeStream(of: CastMessage.self)
        core.withLock { core in
            core.device.connectionOpened(number)
            core.outbound[number] = continuation
        }
        logger.info("connection #\(number) from \(connection.remote)")

        var reason: String
        do {
            try await connection.channel.executeThenClose { inbound, writer in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // The only writer of this connection: replies and broadcasts, in order.
                    group.addTask { [configuration] in
                        for await message in outbound {
                            // A slow device (fault injection): every app and receiver message
                            // leaves late; tp.* (auth, connection) stays prompt.
                            if configuration.replyDelay > .zero, !CastNamespace.isTransport(message.namespace) {
                                try await Task.sleep(for: configuration.replyDelay)
                            }
                            try await writer.write(message)
                        }
                    }
                    for try await message in inbound {
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
        let closedSenders = core.withLock { core -> [String] in
            let senders = core.device.connections[number].map { Set($0.map(\.sender)) } ?? []
            core.device.connectionClosed(number)
            core.outbound.removeValue(forKey: number)?.finish()
            return senders.sorted()
        }
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
                "device authentication: refused a challenge from \(message.sourceID) (\(reply.error.errorType))\(impostor)")
        } else {
            logger.info("device authentication: answered \(message.sourceID)\(impostor)")
        }
        let answer = CastMessage.binary(
            source: message.destinationID, destination: message.sourceID, namespace: CastNamespace.deviceAuth,
            bytes: Data(bytes)
        )
        core.withLock { core in _ = core.outbound[connection]?.yield(answer) }
    }
}
