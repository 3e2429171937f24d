import CastSync
import CastdAPI
import Foundation
import Logging
import NIOCore
import SwiftProtobuf

/// Answers the calls that read only castd's own state (GetStatus, and ListDevices without
/// criteria: `CastdService.answersAtOnce`) on the connection's event loop, in the read that
/// brings their frame: the response and the OK status go out in one write, and the call never
/// becomes a task. Every other frame goes on, unread, to the connection's task (`CastdServer.serve`).
///
/// A warm GetStatus cost castd two thread hand-offs (event loop → the connection's task → event
/// loop) and an async sequence, a writer and a task group: about 96 µs of castd's CPU per call
/// (BENCHMARKS.md, figure 3). Here it is a decode, the answer and a write.
///
/// Frames are answered here only once the connection is admitted (`AtOnceGate.open`), and only
/// while the socket can take the write: a client that does not read its answers makes the
/// connection's writer wait, and with it the reading, as for any call. Before that, and for a
/// call id in use, too many open calls or a draining connection, the frame goes to the task,
/// which answers it (or refuses it) as it does any call.
final class AtOnceHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let gate: AtOnceGate

    init(gate: AtOnceGate) {
        self.gate = gate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard context.channel.isWritable, let calls = gate.calls,
            let answer = calls.answer(unwrapInboundIn(data), allocator: context.channel.allocator)
        else {
            context.fireChannelRead(data)
            return
        }
        context.writeAndFlush(wrapOutboundOut(answer), promise: nil)
    }
}

/// What a connection's `AtOnceHandler` needs from its `CastdServer.serve`, handed over once
/// the connection is admitted.
final class AtOnceGate: Sendable {
    private let state = Locked<AtOnceCalls?>(nil)

    init() {}

    var calls: AtOnceCalls? { state.withLock { $0 } }

    func open(_ calls: AtOnceCalls) {
        state.withLock { $0 = calls }
    }
}

/// The at-once calls of one admitted connection.
struct AtOnceCalls: Sendable {
    let service: CastdService
    let handle: ConnectionHandle
    let access: Castd_V1_Access
    let maximumConcurrentCalls: Int
    let clientCount: @Sendable () -> Int
    let logger: Logger

    /// The answer to `body`, framed (the response and the status), or nil if `body` is not a
    /// call to answer here.
    func answer(_ body: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer? {
        guard let frame = try? CastdRPC.decodeFrame(body), case .start(let start)? = frame.kind,
            frame.callID != 0, let method = CastdMethod(path: start.method),
            CastdService.answersAtOnce(method, request: start.request),
            access.rawValue >= method.requiredAccess.rawValue,
            handle.mayAnswerAtOnce(callID: frame.callID, limit: maximumConcurrentCalls)
        else { return nil }
        handle.frameArrived()
        let callID = frame.callID

        var response: [UInt8]?
        var failure: CastdError?
        do {
            let context = CallContext(connectedClients: clientCount(), access: access)
            let message = try service.answerAtOnce(method, request: Array(start.request), context: context)
            response = try message.serializedBytes()
        } catch let error as CastdError {
            failure = error
        } catch {
            logger.error(
                "call failed unexpectedly",
                metadata: ["rpc.method": "\(method.rawValue)", "rpc.call": "\(callID)", "error": "\(error)"])
            failure = CastdError(.internal, "\(error)")
        }
        if logger.logLevel <= .debug {
            logger.debug(
                failure == nil ? "call ok" : "call ended",
                metadata: [
                    "rpc.method": "\(method.rawValue)", "rpc.call": "\(callID)",
                    "rpc.code": "\(failure?.code.name ?? "OK")",
                ])
        }

        var out = allocator.buffer(capacity: (response?.count ?? 0) + 64)
        do {
            if let response {
                var message = Castd_V1_Frame()
                message.callID = callID
                message.message = Data(response)
                try CastdRPC.write(message, into: &out)
            }
            var status = Castd_V1_Frame()
            status.callID = callID
            status.status = failure?.status ?? Castd_V1_Status()
            try CastdRPC.write(status, into: &out)
        } catch {
            // Frames of known fields always encode; should one not, the task answers the call.
            return nil
        }
        return out
    }
}
