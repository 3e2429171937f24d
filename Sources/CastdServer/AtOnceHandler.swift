import CastSync
import CastdAPI
import Foundation
import Logging
import NIOCore
import SwiftProtobuf
import Synchronization

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
/// while the socket can take the write. Otherwise the frame goes to the connection's task, which
/// answers such a call itself before it reads the next frame (so a client that does not read its
/// answers stops being read), and refuses what must be refused: a call id in use, too many open
/// calls, a draining connection.
///
/// A frame is answered here only when no frame before it is still on its way to the
/// connection's task: answers go out in the order of the calls, and a call the task has not
/// admitted yet counts against the connection's call limit (two Watches then a GetStatus, with
/// a limit of two, once had the GetStatus answered here before the task had admitted either).
final class AtOnceHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let gate: AtOnceGate

    init(gate: AtOnceGate) {
        self.gate = gate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard context.channel.isWritable, !gate.hasForwardedFrames, let calls = gate.calls,
            let answer = calls.answer(unwrapInboundIn(data), allocator: context.channel.allocator)
        else {
            gate.forwarding()
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
    /// Frames handed to the connection's task and not yet handled there.
    private let forwarded = Atomic<Int>(0)

    /// A frame goes on to the connection's task.
    func forwarding() { forwarded.add(1, ordering: .sequentiallyConsistent) }

    /// The connection's task has handled (answered, started or refused) a frame it was given.
    func handledForwarded() { forwarded.subtract(1, ordering: .sequentiallyConsistent) }

    var hasForwardedFrames: Bool { forwarded.load(ordering: .sequentiallyConsistent) > 0 }

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

    /// A call to answer at once, as its frame arrives.
    struct Call {
        let callID: UInt64
        let method: CastdMethod
        let request: [UInt8]
    }

    /// The call `frame` starts, if it is one to answer at once on this connection now: a method
    /// that `answersAtOnce`, which this client may call, with a call id not in use, while the
    /// connection takes calls. Anything else is for `CastdServer.dispatch` (which refuses what
    /// must be refused).
    func call(in frame: Castd_V1_Frame) -> Call? {
        guard case .start(let start)? = frame.kind, frame.callID != 0,
            let method = CastdMethod(path: start.method),
            CastdService.answersAtOnce(method, request: start.request),
            access.rawValue >= method.requiredAccess.rawValue,
            handle.mayAnswerAtOnce(callID: frame.callID, limit: maximumConcurrentCalls)
        else { return nil }
        return Call(callID: frame.callID, method: method, request: Array(start.request))
    }

    /// The call's response message, encoded, or why there is none.
    func respond(to call: Call) -> Result<Data, CastdError> {
        let result: Result<Data, CastdError>
        do {
            let context = CallContext(connectedClients: clientCount(), access: access)
            let message = try service.answerAtOnce(call.method, request: call.request, context: context)
            result = .success(try message.serializedData())
        } catch let error as CastdError {
            result = .failure(error)
        } catch {
            logger.error(
                "call failed unexpectedly",
                metadata: ["rpc.method": "\(call.method.rawValue)", "rpc.call": "\(call.callID)", "error": "\(error)"])
            result = .failure(CastdError(.internal, "\(error)"))
        }
        if logger.logLevel <= .debug {
            var code = "OK"
            if case .failure(let error) = result { code = error.code.name }
            logger.debug(
                code == "OK" ? "call ok" : "call ended",
                metadata: ["rpc.method": "\(call.method.rawValue)", "rpc.call": "\(call.callID)", "rpc.code": "\(code)"])
        }
        return result
    }

    /// The answer to `body`, framed (the response and the status, each with its length), or nil
    /// if `body` is not a call to answer here.
    func answer(_ body: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer? {
        guard let frame = try? CastdRPC.decodeFrame(body), let call = call(in: frame) else { return nil }
        handle.frameArrived()
        let result = respond(to: call)
        var out = allocator.buffer(capacity: ((try? result.get())?.count ?? 0) + 64)
        do {
            switch result {
            case .success(let response):
                try CastdRPC.write(FrameWriter.messageFrame(callID: call.callID, response), into: &out)
                try CastdRPC.write(FrameWriter.statusFrame(callID: call.callID, nil), into: &out)
            case .failure(let error):
                try CastdRPC.write(FrameWriter.statusFrame(callID: call.callID, error), into: &out)
            }
        } catch {
            // Frames of known fields always encode; should one not, the connection's task
            // answers the call.
            return nil
        }
        return out
    }
}
