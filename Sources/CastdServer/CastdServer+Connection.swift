import CastdSupport
import CastdAPI
import Foundation
import LengthPrefixFraming
import Logging
import NIOCore
import SwiftProtobuf
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// One client connection: refusal, the frames, admission, the calls.
extension CastdServer {
    // MARK: one connection

    /// After a refusal: castd stops writing and reads (and drops) what the client sends until it
    /// closes, for at most `linger`. A client writes its first call as soon as it has
    /// connected, often before castd has accepted the connection; had castd closed at once, that
    /// write could meet a closed socket (EPIPE), and the client would report a lost connection
    /// instead of reading the status that says why it was refused. Nothing read is parsed.
    static func linger(
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

    func serve(_ accepted: AcceptedConnection) async {
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
        let handle = ConnectionHandle(channel: connection.channel)
        connections.withLock { $0[id] = handle }
        onClientsChanged(clientCount)
        defer {
            connections.withLock { _ = $0.removeValue(forKey: id) }
            release(peer)
            onClientsChanged(clientCount)
        }
        if shuttingDown.load(ordering: .relaxed) { handle.drain(grace: .zero) }
        let inline = InlineCalls(
            handler: handler, handle: handle, access: accepted.access,
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
                            guard await accepted.inline.sentNothing(within: idleTimeout) else { return }
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
                    defer { accepted.inline.frameArrived() }  // ends the idle timer when the client goes
                    do {
                        for try await frame in inbound {
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
                    logger.debug("client connection's input ended; stopping its calls")
                    handle.cancelAll(reason: CastdError(.cancelled, "the connection closed"))
                }
                logger.debug("client connection's calls ended")
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
    func handle(
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
    func run(
        _ method: CastdMethod, callID: UInt64, request: [UInt8], timeout: Duration?,
        cancelSignal: AsyncStream<CastdError>, access: Castd_V1_Access, peer: PeerCredentials, writer: FrameWriter,
        logger: Logger
    ) async {
        let handler = self.handler
        // The metadata of this call's log lines (given per line: a Logger per call costs more
        // than the call itself when nothing is logged).
        @Sendable func call() -> Logger.Metadata { ["rpc.method": "\(method.rawValue)", "rpc.call": "\(callID)"] }
        let response = UnaryResponse()
        let outcome = await withTaskGroup(of: Outcome.self) { group -> Outcome in
            group.addTask {
                do {
                    let context = CallContext(connectedClients: self.clientCount, access: access, peer: peer)
                    try await handler.handle(method, request: request, context: context) { message in
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
