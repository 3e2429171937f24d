import CastdSupport
import CastdAPI
import Foundation
import Logging
import NIOCore
import SwiftProtobuf
import Synchronization

/// A frame from a client, decoded and judged once, in the read that brings it
/// (`ClientFrameHandler`): what it asks for, and what of that is refused before anything runs.
enum ClientFrame: Sendable {
    case start(CallStart)
    case cancel(callID: UInt64)
    /// A frame that neither starts nor cancels a call: undecodable, a kind only castd sends, or
    /// a call on the reserved id 0. Answered on call id 0 (rpc.proto), so that no open call
    /// of the client's is mistaken for its subject.
    case invalid(CastdError, malformed: Bool)

    /// Decodes `body` and judges it for a client with `access`, of `handler`.
    init(_ body: ByteBuffer, access: Castd_V1_Access, handler: any CastdCallHandler) {
        let frame: Castd_V1_Frame
        do {
            frame = try CastdRPC.decodeFrame(body)
        } catch {
            self = .invalid(error, malformed: true)
            return
        }
        switch frame.kind {
        case .start(let start)?:
            guard frame.callID != 0 else {
                self = .invalid(CastdError(.invalidArgument, "call id 0 is reserved"), malformed: false)
                return
            }
            self = .start(CallStart(callID: frame.callID, start, access: access, handler: handler))
        case .cancel?:
            self = .cancel(callID: frame.callID)
        case .message?, .status?, nil:
            self = .invalid(
                CastdError(
                    .invalidArgument,
                    "clients may only send start and cancel frames (call id \(frame.callID) sent another kind)"),
                malformed: false)
        }
    }
}

/// A CallStart, judged: its method looked up and the client's access to it checked, once.
struct CallStart: Sendable {
    /// Why the call does not run, whatever the connection's state.
    enum Refusal: Sendable {
        case unknownMethod(String)
        case needsControl(CastdMethod)

        var error: CastdError {
            switch self {
            case .unknownMethod(let path):
                let known = CastdMethod.allCases.map(\.path).joined(separator: ", ")
                return CastdError(.unimplemented, "unknown method '\(path)'; castd serves \(known)")
            case .needsControl(let method):
                return CastdError(
                    .permissionDenied,
                    "\(method.rawValue) needs control access; this client may only read (castd's read groups)")
            }
        }
    }

    let callID: UInt64
    /// The method; nil when `refusal` is `.unknownMethod`.
    let method: CastdMethod?
    let refusal: Refusal?
    let request: [UInt8]
    let timeout: Duration?
    /// A call castd answers from its own state without waiting (`CastdRouter.answersInline`):
    /// answered in the read that brings it, or by the connection's task before its next frame.
    let answersInline: Bool

    init(callID: UInt64, _ start: Castd_V1_CallStart, access: Castd_V1_Access, handler: any CastdCallHandler) {
        self.callID = callID
        let method = CastdMethod(path: start.method)
        self.method = method
        let refusal: Refusal? =
            if let method {
                access.rawValue >= method.requiredAccess.rawValue ? nil : .needsControl(method)
            } else {
                .unknownMethod(start.method)
            }
        self.refusal = refusal
        let request = Array(start.request)
        self.request = request
        timeout = start.timeoutMs > 0 ? .milliseconds(Int64(clamping: start.timeoutMs)) : nil
        if let method, refusal == nil {
            answersInline = handler.answersInline(method, request: request)
        } else {
            answersInline = false
        }
    }
}

/// Decodes each frame of an admitted connection once, and answers the calls that read only
/// castd's own state (GetStatus, and ListDevices without criteria) on the connection's event
/// loop, in the read that brings their frame: the response and the OK status go out in one
/// write, and the call never becomes a task. Every other frame goes on, judged
/// (`ClientFrame`), to the connection's task (`CastdServer.serve`).
///
/// Calls are answered here only once the connection's task is ready (`InlineGate.open`), and
/// only while the socket can take the write. Otherwise the call goes to the task, which answers
/// it itself before it reads the next frame (so a client that does not read its answers stops
/// being read).
///
/// A call is answered here only when no frame before it is still on its way to the task:
/// answers go out in the order of the calls, and a call the task has not admitted yet counts
/// against the connection's call limit (two Watches then a GetStatus, with a limit of two,
/// must not have the GetStatus answered before the task has admitted either).
final class ClientFrameHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ClientFrame
    typealias OutboundOut = ByteBuffer

    private let gate: InlineGate
    private let access: Castd_V1_Access
    private let handler: any CastdCallHandler

    init(gate: InlineGate, access: Castd_V1_Access, handler: any CastdCallHandler) {
        self.gate = gate
        self.access = access
        self.handler = handler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        gate.frameArrived()
        let frame = ClientFrame(unwrapInboundIn(data), access: access, handler: handler)
        if case .start(let call) = frame, call.answersInline, context.channel.isWritable,
            !gate.hasForwardedFrames, let calls = gate.calls,
            let answer = calls.answer(call, allocator: context.channel.allocator)
        {
            context.writeAndFlush(wrapOutboundOut(answer), promise: nil)
            return
        }
        gate.forwarding()
        context.fireChannelRead(wrapInboundOut(frame))
    }
}

/// What a connection's `ClientFrameHandler` needs from its `CastdServer.serve`, handed over
/// once the task is ready.
final class InlineGate: Sendable {
    private let state = Locked<InlineCalls?>(nil)
    /// Frames handed to the connection's task and not yet handled there.
    private let forwarded = Atomic<Int>(0)
    /// Whether a whole frame has been read, and its signal for the idle timer.
    private let sawFrame = Atomic<Bool>(false)
    private let firstFrame = AsyncStream<Void>.makeStream()

    /// A whole frame was read (or the connection ended): the idle timer stops. Called in the
    /// read that brings the frame, on the event loop, so that a client that spoke in time is
    /// never judged silent because the connection's task was slow to run (as on a loaded
    /// machine, where the task once took seconds to take a Watch sent at once).
    func frameArrived() {
        if !sawFrame.exchange(true, ordering: .sequentiallyConsistent) { firstFrame.continuation.finish() }
    }

    /// True if `timeout` passed with no whole frame read from the client. Only one caller per
    /// connection.
    func sentNothing(within timeout: Duration) async -> Bool {
        let arrived = firstFrame.stream
        let expired = await withTaskGroup(of: Bool.self) { group in
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
        // The timer may run late, after a frame was read but before its signal was seen.
        return expired && !sawFrame.load(ordering: .sequentiallyConsistent)
    }

    /// A frame goes on to the connection's task.
    func forwarding() { forwarded.add(1, ordering: .sequentiallyConsistent) }

    /// The connection's task has handled (answered, started or refused) a frame it was given.
    func handledForwarded() { forwarded.subtract(1, ordering: .sequentiallyConsistent) }

    var hasForwardedFrames: Bool { forwarded.load(ordering: .sequentiallyConsistent) > 0 }

    init() {}

    var calls: InlineCalls? { state.withLock { $0 } }

    func open(_ calls: InlineCalls) {
        state.withLock { $0 = calls }
    }
}

/// The inline calls of one admitted connection.
struct InlineCalls: Sendable {
    let handler: any CastdCallHandler
    let handle: ConnectionHandle
    let access: Castd_V1_Access
    let maximumConcurrentCalls: Int
    let clientCount: @Sendable () -> Int
    let logger: Logger

    /// The call's response message, encoded, or why there is none.
    func respond(to call: CallStart) -> Result<Data, CastdError> {
        guard let method = call.method else { return .failure(CastdError(.internal, "no method")) }
        let result: Result<Data, CastdError>
        do {
            let context = CallContext(connectedClients: clientCount(), access: access)
            let message = try handler.answerInline(method, request: call.request, context: context)
            result = .success(try message.serializedData())
        } catch let error as CastdError {
            result = .failure(error)
        } catch {
            logger.error(
                "call failed unexpectedly",
                metadata: ["rpc.method": "\(method.rawValue)", "rpc.call": "\(call.callID)", "error": "\(error)"])
            result = .failure(CastdError(.internal, "\(error)"))
        }
        if logger.logLevel <= .debug {
            var code = "OK"
            if case .failure(let error) = result { code = error.code.name }
            logger.debug(
                code == "OK" ? "call ok" : "call ended",
                metadata: [
                    "rpc.method": "\(method.rawValue)", "rpc.call": "\(call.callID)", "rpc.code": "\(code)",
                ])
        }
        return result
    }

    /// The answer to `call`, framed (the response and the status, each with its length), or nil
    /// if the connection cannot take it now (its id is open, too many calls are, or it drains):
    /// the connection's task then refuses it with the reason.
    func answer(_ call: CallStart, allocator: ByteBufferAllocator) -> ByteBuffer? {
        guard case .ok = handle.check(callID: call.callID, limit: maximumConcurrentCalls) else { return nil }
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
