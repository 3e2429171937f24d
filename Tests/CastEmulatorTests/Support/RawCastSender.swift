import CastdSupport
import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import LengthPrefixFraming
import NIOCore
import NIOPosix
import NIOSSL

struct TestTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

struct ConnectionClosed: Error, CustomStringConvertible {
    var cause: (any Error)?
    var description: String { "the emulator closed the connection" + (cause.map { ": \($0)" } ?? "") }
}

/// A deliberately small CastV2 sender for tests: TLS without certificate checks, 4-byte framing,
/// CastMessages as they are, nothing added behind the test's back (no automatic CONNECT).
///
/// It answers the emulator's PINGs and keeps heartbeat messages out of the inbox, unless told
/// otherwise (`heartbeats: .manual`), so that a slow machine does not turn into flaky ordering.
final class RawCastSender: Sendable {
    enum Heartbeats {
        case automatic
        case manual
    }

    let sourceID: String
    private let channel: any Channel
    private let inbox: Inbox

    private init(sourceID: String, channel: any Channel, inbox: Inbox) {
        self.sourceID = sourceID
        self.channel = channel
        self.inbox = inbox
    }

    static func connect(
        to endpoints: EmulatorEndpoints, sourceID: String = "sender-\(UInt32.random(in: 1...999_999))",
        heartbeats: Heartbeats = .automatic
    ) async throws -> RawCastSender {
        try await connect(host: endpoints.host, port: endpoints.port, sourceID: sourceID, heartbeats: heartbeats)
    }

    static func connect(
        host: String, port: Int, sourceID: String = "sender-\(UInt32.random(in: 1...999_999))",
        heartbeats: Heartbeats = .automatic
    ) async throws -> RawCastSender {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        let context = try NIOSSLContext(configuration: tls)
        let inbox = Inbox()
        let channel = try await ClientBootstrap(group: .singletonMultiThreadedEventLoopGroup)
            // A deadline of the test machine's, stretched like every other (a busy event loop
            // handles the connection's completion late: seen beside a CPU hog).
            .connectTimeout(TimeAmount(Duration.seconds(5).scaledForTests))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                    try pipeline.addHandler(
                        ByteToMessageHandler(
                            LengthPrefixedFrameDecoder(maximumFrameLength: CastWire.maximumFrameLength))
                    )
                    try pipeline.addHandler(InboxHandler(inbox: inbox, answerPings: heartbeats == .automatic))
                }
            }
            .connect(host: host, port: port)
            .get()
        return RawCastSender(sourceID: sourceID, channel: channel, inbox: inbox)
    }

    // MARK: sending

    func send(_ message: CastMessage) async throws {
        var buffer = channel.allocator.buffer(capacity: 256)
        buffer.writeLengthPrefixedFrame(try message.frameBody())
        try await channel.writeAndFlush(buffer)
    }

    /// Bytes exactly as given: for frames that break the rules.
    func sendRaw(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    func send(to destination: String, namespace: String, _ payload: JSONValue) async throws {
        try await send(.json(source: sourceID, destination: destination, namespace: namespace, payload: payload))
    }

    /// CONNECT as senders do it (no protocol versions offered, so no CONNECTED expected).
    func connect(to destination: String = CastWire.platformReceiverID) async throws {
        try await send(
            to: destination, namespace: CastNamespace.connection, ConnectionMessage.connect(userAgent: "tests"))
    }

    func receiver(_ payload: JSONValue) async throws {
        try await send(to: CastWire.platformReceiverID, namespace: CastNamespace.receiver, payload)
    }

    func media(_ transportID: String, _ payload: JSONValue) async throws {
        try await send(to: transportID, namespace: CastNamespace.media, payload)
    }

    func close() async {
        try? await channel.close()
    }

    // MARK: receiving

    /// The next message, or a `TestTimeout` / `ConnectionClosed`. Every timeout here is
    /// stretched by the test time scale (slow sanitizer builds; CastTestSupport). The default
    /// deadlines are 15 s: 5 s ran out for an emulator's reply while the whole suite ran on two
    /// busy cores (a fuzzer beside it); a reply that never comes still fails the test.
    func next(timeout: Duration = .seconds(15)) async throws -> CastMessage {
        try await next(within: timeout.scaledForTests)
    }

    private func next(within timeout: Duration) async throws -> CastMessage {
        try await withThrowingTaskGroup(of: CastMessage.self) { group in
            group.addTask { try await self.inbox.next() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TestTimeout(what: "a message on \(self.sourceID)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// Skips messages until one matches; returns it with its parsed payload.
    func next(
        timeout: Duration = .seconds(15), _ what: String = "a matching message",
        where predicate: (CastMessage, JSONValue) -> Bool
    ) async throws -> (message: CastMessage, payload: JSONValue) {
        let deadline = ContinuousClock.now + timeout.scaledForTests
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw TestTimeout(what: what) }
            let message: CastMessage
            do {
                message = try await next(within: remaining)
            } catch is TestTimeout {
                throw TestTimeout(what: what)
            }
            let payload = (try? JSONValue.parse(message.payloadUtf8)) ?? .null
            if predicate(message, payload) { return (message, payload) }
        }
    }

    /// The next message's JSON payload.
    func nextPayload(timeout: Duration = .seconds(15)) async throws -> JSONValue {
        try JSONValue.parse(try await next(timeout: timeout).payloadUtf8)
    }

    /// The next message answering `requestID` (skipping broadcasts and everything else).
    func reply(to requestID: Int, timeout: Duration = .seconds(15)) async throws -> JSONValue {
        try await next(timeout: timeout, "the reply to request \(requestID)") { _, payload in
            payload["requestId"]?.intValue == Int64(requestID)
        }.payload
    }

    /// Waits until the emulator closes the connection; returns what arrived before.
    @discardableResult
    func waitForClose(timeout: Duration = .seconds(15)) async throws -> [CastMessage] {
        var before: [CastMessage] = []
        let deadline = ContinuousClock.now + timeout.scaledForTests
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw TestTimeout(what: "the connection to close") }
            do {
                before.append(try await next(within: remaining))
            } catch is ConnectionClosed {
                return before
            } catch is TestTimeout {
                throw TestTimeout(what: "the connection to close")
            }
        }
    }

    var isActive: Bool { channel.isActive }

    /// The DER of the certificate the emulator presented in the TLS handshake.
    func peerCertificateDER() async throws -> [UInt8] {
        guard let certificate = try await channel.nioSSL_peerCertificate().get() else {
            throw ConnectionClosed(cause: nil)
        }
        return try certificate.toDERBytes()
    }
}

/// Frames in, CastMessages out to the inbox. Undecodable frames go in as errors.
private final class InboxHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let inbox: Inbox
    private let answerPings: Bool

    init(inbox: Inbox, answerPings: Bool) {
        self.inbox = inbox
        self.answerPings = answerPings
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let body = unwrapInboundIn(data)
        let message: CastMessage
        do {
            message = try CastMessage(serializedBytes: Array(body.readableBytesView))
        } catch {
            inbox.close(error)
            context.close(promise: nil)
            return
        }
        if answerPings, message.namespace == CastNamespace.heartbeat {
            if message.payloadUtf8.contains("PING"),
                let pong = try? CastMessage.json(
                    source: message.destinationID, destination: message.sourceID, namespace: CastNamespace.heartbeat,
                    payload: ConnectionMessage.pong
                ).frameBody()
            {
                var buffer = context.channel.allocator.buffer(capacity: pong.count + 4)
                buffer.writeLengthPrefixedFrame(pong)
                context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
            }
            return
        }
        inbox.append(message)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        inbox.close(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbox.close(nil)
        context.fireChannelInactive()
    }
}

/// Messages waiting to be read, and at most one reader waiting for them.
private final class Inbox: Sendable {
    private struct State {
        var messages: [CastMessage] = []
        var closed = false
        var closeError: (any Error)?
        var waiter: (id: Int, continuation: CheckedContinuation<CastMessage, any Error>)?
        var nextID = 0
    }

    private let state = Locked(State())

    func append(_ message: CastMessage) {
        let waiter = state.withLock { state -> CheckedContinuation<CastMessage, any Error>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter.continuation
            }
            state.messages.append(message)
            return nil
        }
        waiter?.resume(returning: message)
    }

    func close(_ error: (any Error)?) {
        let waiter = state.withLock { state -> CheckedContinuation<CastMessage, any Error>? in
            if !state.closed {
                state.closed = true
                state.closeError = error
            }
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }
        waiter?.resume(throwing: ConnectionClosed(cause: error))
    }

    func next() async throws -> CastMessage {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<CastMessage, any Error>) in
                let immediate: Result<CastMessage, any Error>? = state.withLock { state in
                    if !state.messages.isEmpty { return .success(state.messages.removeFirst()) }
                    if state.closed { return .failure(ConnectionClosed(cause: state.closeError)) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiter = (id, continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<CastMessage, any Error>? in
                guard let waiter = state.waiter, waiter.id == id else { return nil }
                state.waiter = nil
                return waiter.continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
