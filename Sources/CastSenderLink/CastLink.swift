import CastdSupport
import CastProtocol
import Foundation
import LengthPrefixFraming
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// Settings of one device link. The defaults are Chromium's.
public struct CastLinkConfiguration: Sendable {
    /// TCP, TLS and device authentication must be done within this.
    public var connectTimeout: Duration = .seconds(10)
    /// Default deadline of a request that expects a reply.
    public var requestTimeout: Duration = .seconds(10)
    /// PING after this long without a message from the device.
    public var pingInterval: Duration = .seconds(5)
    /// The link is dead after this long without a message from the device.
    public var deadAfter: Duration = .seconds(10)
    /// Our endpoint id. Unique per process and link: a fixed id collides between processes.
    public var senderID: String = CastLinkConfiguration.makeSenderID()
    public var userAgent: String = "castd"
    /// The roots device certificates must chain to, and what to do with a device that fails.
    public var authentication = DeviceAuthenticationSettings()

    public init() {}

    public static func makeSenderID() -> String {
        "sender-castd-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }
}

/// A message as a link read it, with its place in the link's order: `arrival` is 1 for the
/// first message a link delivers, then 2, 3…
///
/// A reply reaches two places, the request that waits for it and ``CastLink/messages``, and
/// the two may handle it in either order; a status is the newest only if no message read after
/// it has been applied. `arrival` lets a link's user apply each status once, newest last.
public struct LinkMessage: Sendable {
    public var message: CastMessage
    /// The message's JSON payload, read once here for every reader (the request that waits for
    /// it, the link's user), or nil: a binary payload, or text that is not JSON.
    public var payload: JSONValue?
    public var arrival: UInt64

    public init(message: CastMessage, arrival: UInt64) {
        self.message = message
        self.payload = message.payloadType == .string ? try? message.jsonPayload() : nil
        self.arrival = arrival
    }
}

/// A device's reply to a request, and its place in the link's order (see ``LinkMessage``).
public struct CastReply: Sendable {
    public var payload: JSONValue
    public var arrival: UInt64

    public init(payload: JSONValue, arrival: UInt64) {
        self.payload = payload
        self.arrival = arrival
    }
}

/// One TLS link to one Cast device: device authentication, framing, heartbeat, virtual
/// connections and requestId correlation. It lives inside `withConnection`'s scope; when the scope
/// ends the link closes.
///
/// Every message that is not a heartbeat is delivered on `messages`, replies included (a reply
/// to a request is also a status update everyone needs).
public final class CastLink: Sendable {
    public let host: String
    public let port: Int
    public let senderID: String
    /// This end's IP address on the connection: the address the device reaches castd at (on
    /// a machine with several interfaces, the one its route to the device uses).
    public let localAddress: String?
    let configuration: CastLinkConfiguration
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    let allocator: ByteBufferAllocator
    let eventLoop: any EventLoop
    let logger: Logger
    /// Messages from the device, in order, but for the replies their requests took; finishes when
    /// the link closes. A reply (a message whose `requestId` a request on its namespace waits
    /// for) goes to that request and only there: it is handled once, by whoever asked. A reply
    /// nobody waits for any more (its request timed out or was cancelled) comes here. At most
    /// ``messageBufferLimit`` wait: while they do, the link reads nothing more from the device,
    /// replies included, so a link's user must keep taking them. (That time is not counted as
    /// the device's silence: the heartbeat counts only while the link reads, ``PeerSilence``.)
    public let messages: Messages
    let inbox: LinkInbox

    /// How many messages may wait for the consumer of ``messages``: a device that sends faster
    /// than its messages are handled is slowed down (TCP) rather than buffered without bound.
    public static let messageBufferLimit = 128

    struct State {
        var nextRequestID: Int64 = 1
        /// The requests waiting for their reply, by request id, with the namespace they were sent
        /// on (a reply comes back on its request's namespace).
        var pending: [Int64: (namespace: String, promise: EventLoopPromise<CastReply>)] = [:]
        /// Messages delivered so far (the last one's `arrival`).
        var arrivals: UInt64 = 0
        var connectedDestinations: Set<String> = []
        var closedReason: CastLinkError?
        /// Waits for the device's answer to the AuthChallenge.
        var authenticationReply: EventLoopPromise<CastMessage>?
        var authentication: DeviceAuthentication?
    }
    let state = Locked(State())

    private init(
        host: String, port: Int, configuration: CastLinkConfiguration,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, channel: any Channel, logger: Logger
    ) {
        self.host = host
        self.port = port
        self.senderID = configuration.senderID
        self.localAddress = channel.localAddress?.ipAddress
        self.configuration = configuration
        self.outbound = outbound
        self.allocator = channel.allocator
        self.eventLoop = channel.eventLoop
        self.logger = logger
        inbox = LinkInbox(limit: Self.messageBufferLimit)
        messages = Messages(inbox: inbox)
    }

    /// Connects (TCP, TLS and device authentication within `connectTimeout`), runs `body` with the
    /// link, and closes the link when `body` returns or throws. `body` should consume `messages`;
    /// it ends when the device goes away. Connection failures throw
    /// `CastLinkError(.connectFailed)`; a device that fails authentication under
    /// ``DeviceAuthenticationPolicy/require`` throws `CastLinkError(.authenticationFailed)`
    /// before `body` runs. Under `.warn` the link goes on, and ``authentication`` says why it is
    /// unverified.
    public static func withConnection<Result: Sendable>(
        host: String,
        port: Int,
        configuration: CastLinkConfiguration = .init(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger,
        _ body: (CastLink) async throws -> Result
    ) async throws -> Result {
        var logger = logger.subsystem("CastChannel")
        logger[metadataKey: "device.address"] = "\(host):\(port)"
        let deadline = NIODeadline.now() + TimeAmount(configuration.connectTimeout)
        let (channel, tlsCertificate) = try await connect(
            host: host, port: port, configuration: configuration, deadline: deadline, eventLoopGroup: eventLoopGroup,
            logger: logger)
        return try await channel.executeThenClose { inbound, outbound in
            let link = CastLink(
                host: host, port: port, configuration: configuration, outbound: outbound,
                channel: channel.channel, logger: logger)
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    var reason = CastLinkError(.closed, "the device closed the connection")
                    do {
                        for try await message in inbound {
                            await link.deliver(message)
                        }
                    } catch let error as CastLinkError {
                        reason = error
                    } catch let error as LengthPrefixError {
                        reason = CastLinkError(.closed, Self.describe(error))
                    } catch {
                        reason = CastLinkError(.closed, "link failed: \(error)")
                    }
                    link.finish(reason)
                }
                defer { group.cancelAll() }
                do {
                    try await link.authenticate(tlsCertificateDER: tlsCertificate, deadline: deadline)
                    let result = try await body(link)
                    link.finish(CastLinkError(.closed, "link closed by castd"))
                    return result
                } catch {
                    link.finish(CastLinkError(.closed, "link closed by castd"))
                    throw error
                }
            }
        }
    }

    /// The TLS context of every link, made once: the configuration is the same for all, and a
    /// context per link cost each device's link its own BoringSSL SSL_CTX (BENCHMARKS.md,
    /// figure 5). Cast devices present self-issued certificates: TLS does not check them; device
    /// authentication does, once connected.
    static let tlsContext = Result<NIOSSLContext, any Error> {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        return try NIOSSLContext(configuration: tls)
    }

    /// TCP and TLS before `deadline`. Returns the channel and the certificate the device presented
    /// (DER; nil if it could not be had), which device authentication needs.
    static func connect(
        host: String, port: Int, configuration: CastLinkConfiguration, deadline: NIODeadline,
        eventLoopGroup: any EventLoopGroup, logger: Logger
    ) async throws -> (NIOAsyncChannel<CastMessage, ByteBuffer>, [UInt8]?) {
        let sslContext: NIOSSLContext
        do {
            sslContext = try Self.tlsContext.get()
        } catch {
            throw CastLinkError(.connectFailed, "cannot set up TLS: \(error)")
        }
        let timeout = TimeAmount(configuration.connectTimeout)
        let handshake = eventLoopGroup.any().makePromise(of: Void.self)
        let what = "\(host):\(port)"
        do {
            let channel = try await ClientBootstrap(group: eventLoopGroup)
                .connectTimeout(timeout)
                .channelOption(.socketOption(.so_keepalive), value: 1)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        // The TLS handshake must also finish before the deadline: timed on the
                        // event loop from the start, so a busy concurrency pool cannot delay it.
                        let timer = channel.eventLoop.scheduleTask(deadline: deadline) {
                            handshake.fail(CastLinkError(.connectFailed, "TLS handshake with \(what) timed out"))
                        }
                        handshake.futureResult.whenComplete { _ in timer.cancel() }
                        let sync = channel.pipeline.syncOperations
                        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: nil))
                        try sync.addHandler(TLSHandshakeWaiter(promise: handshake))
                        try CastV2Pipeline.addFraming(to: sync, badMessages: .skip(BadMessageLog(logger: logger)))
                        try sync.addHandler(
                            SenderHeartbeatHandler(
                                senderID: configuration.senderID, pingInterval: TimeAmount(configuration.pingInterval),
                                deadAfter: TimeAmount(configuration.deadAfter), logger: logger))
                        return try NIOAsyncChannel<CastMessage, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            do {
                try await withTaskCancellationHandler {
                    try await handshake.futureResult.get()
                } onCancel: {
                    handshake.fail(CancellationError())
                }
            } catch {
                // The async wrapper exists already: close through it, which finishes its writer
                // (dropping an unfinished NIOAsyncWriter traps).
                try? await channel.executeThenClose { _, _ in }
                throw error
            }
            let certificate = try? await channel.channel.nioSSL_peerCertificate().get()?.toDERBytes()
            logger.debug("TLS connected")
            return (channel, certificate)
        } catch let error as CastLinkError {
            throw error
        } catch {
            handshake.fail(error)
            throw CastLinkError(.connectFailed, "cannot connect to \(what): \(Self.describe(error))")
        }
    }

    /// Why a device's stream was refused, for the link's reason: framing the device broke.
    static func describe(_ error: LengthPrefixError) -> String {
        switch error {
        case .frameTooLarge(let length, let limit):
            "the device broke CastV2 framing: a frame of \(length) bytes, over the \(limit)-byte limit"
        case .emptyFrame:
            "the device broke CastV2 framing: a frame of length 0"
        case .truncatedFrame(let received, let expected):
            "the device closed the connection inside a CastV2 frame (\(received) of \(expected) bytes)"
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return describe(first.error) }
            if error.dnsAAAAError != nil || error.dnsAError != nil { return "cannot resolve host" }
        }
        if let error = error as? IOError { return error.description }
        if case .connectTimeout? = error as? ChannelError { return "timed out" }
        return "\(error)"
    }

    // MARK: sending
    //
    // The async methods run on their caller's executor (`nonisolated(nonsending)`): a device's
    // actor builds, sends and awaits a request and resumes with the reply without a hop through
    // the global pool and back.

    /// Sends a JSON message. Virtual connections are the caller's business (`connect(to:)`).
    public nonisolated(nonsending) func send(namespace: String, destination: String, payload: JSONValue) async throws {
        try await send(
            CastMessage.json(source: senderID, destination: destination, namespace: namespace, payload: payload))
    }

    /// Sends a message as is (custom channels may send any string).
    public nonisolated(nonsending) func send(_ message: CastMessage) async throws {
        let buffer: ByteBuffer
        do {
            buffer = try message.frameBuffer(allocator: allocator)
        } catch {
            throw CastLinkError(.invalidRequest, "\(error)")
        }
        if let reason = state.withLock({ $0.closedReason }) { throw reason }
        logger.trace("sent", metadata: Self.traceMetadata(message, peer: "cast.destination", id: message.destinationID))
        do {
            try await outbound.write(buffer)
        } catch {
            throw state.withLock { $0.closedReason } ?? CastLinkError(.closed, "link closed: \(error)")
        }
    }

    /// Opens the virtual connection to `destination` (receiver-0 or an app's transportId), once.
    public nonisolated(nonsending) func connect(to destination: String) async throws {
        let isNew = state.withLock { $0.connectedDestinations.insert(destination).inserted }
        guard isNew else { return }
        do {
            try await send(
                namespace: CastNamespace.connection, destination: destination,
                payload: ConnectionMessage.connect(userAgent: configuration.userAgent))
        } catch {
            _ = state.withLock { $0.connectedDestinations.remove(destination) }
            throw error
        }
    }

    /// Closes the virtual connection to `destination`.
    public nonisolated(nonsending) func disconnect(from destination: String) async {
        let wasConnected = state.withLock { $0.connectedDestinations.remove(destination) != nil }
        guard wasConnected else { return }
        try? await send(namespace: CastNamespace.connection, destination: destination, payload: ConnectionMessage.close)
    }

    public func isConnected(to destination: String) -> Bool {
        state.withLock { $0.connectedDestinations.contains(destination) }
    }

    /// Sends `payload` with a fresh `requestId` (the `make` closure receives it) and waits for the
    /// reply carrying the same id. A device error reply throws `CastLinkError(.deviceError)`.
    public nonisolated(nonsending) func request(
        namespace: String,
        destination: String,
        timeout: Duration? = nil,
        _ make: (Int64) -> JSONValue
    ) async throws -> JSONValue {
        try await requestReply(namespace: namespace, destination: destination, timeout: timeout, make).payload
    }

    /// ``request(namespace:destination:timeout:_:)``, with the reply's place in the link's order.
    public nonisolated(nonsending) func requestReply(
        namespace: String,
        destination: String,
        timeout: Duration? = nil,
        _ make: (Int64) -> JSONValue
    ) async throws -> CastReply {
        let requestID = state.withLock { state -> Int64 in
            defer { state.nextRequestID += 1 }
            return state.nextRequestID
        }
        let message = CastMessage.json(
            source: senderID, destination: destination, namespace: namespace, payload: make(requestID))
        let timeout = timeout ?? configuration.requestTimeout
        // Register before sending, so that a fast reply is never missed.
        let promise = eventLoop.makePromise(of: CastReply.self)
        if let reason = state.withLock({ state -> CastLinkError? in
            if let reason = state.closedReason { return reason }
            state.pending[requestID] = (namespace, promise)
            return nil
        }) {
            promise.fail(reason)
            throw reason
        }
        let timer = eventLoop.scheduleTask(in: TimeAmount(timeout)) { [self] in
            self.fail(requestID, CastLinkError(.timedOut, "no reply from the device within \(timeout)"))
        }
        defer { timer.cancel() }
        do {
            try await send(message)
        } catch {
            fail(requestID, error)
        }
        let reply: CastReply = try await withTaskCancellationHandler {
            // Resumed straight onto the caller's executor (`futureResult.get()` would resume on
            // the global pool, and the caller hop back).
            try await withCheckedThrowingContinuation { continuation in
                promise.futureResult.whenComplete { continuation.resume(with: $0) }
            }
        } onCancel: {
            fail(requestID, CancellationError())
        }
        if let error = CastDeviceError(payload: reply.payload) {
            throw CastLinkError(.deviceError, "the device answered \(error)", deviceError: error)
        }
        return reply
    }

    /// Ends the request `requestID` with `error`, if it still waits.
    func fail(_ requestID: Int64, _ error: any Error) {
        let waiter = state.withLock { $0.pending.removeValue(forKey: requestID) }
        waiter?.promise.fail(error)
    }

    /// Gives `reply` to the request waiting for it: the one with its request id, sent on the
    /// namespace it came on (an app cannot answer castd's media or receiver requests on a
    /// namespace of its own). True if a request took it.
    func take(_ reply: CastReply, requestID: Int64, namespace: String) -> Bool {
        let waiter = state.withLock { state -> EventLoopPromise<CastReply>? in
            guard let waiter = state.pending[requestID], waiter.namespace == namespace else { return nil }
            state.pending[requestID] = nil
            return waiter.promise
        }
        waiter?.succeed(reply)
        return waiter != nil
    }

    // MARK: receiving

    func deliver(_ message: CastMessage) async {
        logger.trace("received", metadata: Self.traceMetadata(message, peer: "cast.source", id: message.sourceID))
        if message.namespace == CastNamespace.deviceAuth {
            // The answer to our challenge; nothing else is expected, nor delivered.
            resolveAuthentication(.success(message))
            return
        }
        let arrival = state.withLock { state in
            state.arrivals += 1
            return state.arrivals
        }
        let received = LinkMessage(message: message, arrival: arrival)
        if let payload = received.payload {
            let envelope = CastEnvelope(payload)
            if message.namespace == CastNamespace.connection, envelope.type == CastMessageType.close {
                // The device closed a virtual connection (e.g. the app stopped).
                _ = state.withLock { $0.connectedDestinations.remove(message.sourceID) }
            }
            if envelope.requestID != 0,
                take(
                    CastReply(payload: payload, arrival: arrival), requestID: envelope.requestID,
                    namespace: message.namespace)
            {
                return  // handled by the request that asked
            }
        }
        await inbox.push(received)
    }

    /// What a verbose record says of a message: namespace, the other end, and the JSON `type`.
    static func traceMetadata(_ message: CastMessage, peer: String, id: String) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["cast.namespace": "\(message.namespace)", "\(peer)": "\(id)"]
        if message.payloadType == .string {
            if let type = try? CastEnvelope(message.jsonPayload()).type, !type.isEmpty {
                metadata["cast.type"] = "\(type)"
            }
        } else {
            metadata["cast.bytes"] = "\(message.payloadBinary.count)"
        }
        return metadata
    }

    func finish(_ reason: CastLinkError) {
        let (pending, authenticationReply) = state.withLock { state in
            if state.closedReason == nil { state.closedReason = reason }
            defer {
                state.pending.removeAll()
                state.authenticationReply = nil
            }
            return (state.pending.values.map(\.promise), state.authenticationReply)
        }
        for promise in pending { promise.fail(reason) }
        authenticationReply?.fail(reason)
        inbox.finish()
    }

    /// Messages read and not yet taken from ``messages``, and the most there have been at once.
    var bufferedMessages: (now: Int, highest: Int) { (inbox.count, inbox.highWater) }

    /// Why the link closed, once it has.
    public var closedReason: CastLinkError? { state.withLock { $0.closedReason } }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
