/// CastdMediaServer: castd's HTTP server for a user's local files, played by Cast devices.
///
/// A client hands castd an open descriptor; castd publishes it here and gives the device an
/// unguessable URL (`http://HOST:PORT/<128-bit token>[.ext]`). GET and HEAD, single byte ranges,
/// CORS for the Cast receiver's player, bodies by sendfile (NIO's FileRegion) with memory
/// bounded for any reader.
///
/// Built on SwiftNIO's NIOHTTP1 rather than Hummingbird (or another framework): castd already
/// links NIOCore, NIOPosix and NIOHTTP1 through CastSenderLink, so this adds no package
/// dependency and no code to the daemon beyond its own; nothing starts until the first `listen`
/// (no service group, no router, no middleware); and each connection is one NIO pipeline whose
/// buffers and limits (head size, connections, stalls) are all set here, in a privileged daemon
/// that must bound what a stranger on the LAN can make it hold.
import CastdSupport
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

public struct MediaServerConfiguration: Sendable {
    /// The port on every address; nil: one ephemeral port, chosen at the first listen and reused
    /// for every later address.
    public var port: Int?
    /// Connections in all; more are answered 503 and closed at once.
    public var maximumConnections = 256
    /// Concurrent requests for one token; more get 503.
    public var maximumConnectionsPerToken = 16
    /// The most a request's line and header fields may take; a larger head gets 431 and the
    /// connection is closed.
    public var maximumHeaderBytes = 16 * 1024
    /// How long a connection may wait for a request (and a response for its reader) before it is closed.
    public var idleTimeout: Duration = .seconds(60)
    public init() {}
}

/// Serves published files over HTTP/1.1 (see the module's comment above and ``MediaServerConfiguration``).
public final class MediaServer: Sendable {
    let configuration: MediaServerConfiguration
    let logger: Logger
    let library = MediaLibrary()
    private let group: any EventLoopGroup
    private let listeners = Listeners()
    private let state = Locked(State())
    /// File bytes handed to connections so far (sent, or queued to be sent).
    private let queued = Locked(0)

    private struct State {
        var connections: [ObjectIdentifier: any Channel] = [:]
        var port: Int?
        var shutDown = false
    }

    public init(configuration: MediaServerConfiguration = .init(), logger: Logger) {
        self.configuration = configuration
        self.logger = logger.subsystem("MediaServer")
        self.group = MultiThreadedEventLoopGroup.singleton
    }

    /// Listens on `address` (an IPv4 or IPv6 literal; "127.0.0.1" in tests) unless it already
    /// does; returns the port. All addresses share one port.
    public func listen(on address: String) async throws -> Int {
        let port = try await listeners.listen(on: address, port: configuration.port) { address, port in
            try await self.bind(address, port: port)
        }
        state.withLock { $0.port = port }
        return port
    }

    /// Registers a file to serve. The server takes ownership of `descriptor` (a regular file open
    /// for reading) and closes it when the token is revoked (or the server shut down); each
    /// response works on a dup() of it, closed when the response ends.
    /// Without `contentType`, the type is sniffed from the file's first bytes, then from `name`'s
    /// extension, else application/octet-stream. After ``shutdown()`` the descriptor is closed at
    /// once and the token serves nothing. `closed` is called once the server has closed the
    /// descriptor.
    public func publish(
        descriptor: Int32, name: String, contentType: String?, closed: (@Sendable () -> Void)? = nil
    ) -> MediaToken {
        let type = contentType ?? Self.sniff(descriptor: descriptor, name: name) ?? "application/octet-stream"
        let token = library.publish(
            descriptor: descriptor, contentType: type, fileExtension: MediaContentType.fileExtension(of: name),
            closed: closed)
        logger.debug("published", metadata: ["token": "\(token)", "type": "\(type)"])
        return token
    }

    /// Stops serving the token: new requests get 404. Its descriptor is closed now; responses in
    /// flight finish on their own duplicates.
    public func revoke(_ token: MediaToken) {
        if library.revoke(token) { logger.debug("revoked", metadata: ["token": "\(token)"]) }
    }

    /// The URL a device on `host` uses: http://HOST:PORT/<token>[.ext], an IPv6 host bracketed
    /// (a zone's % escaped); nil before the first listen or for a token not published. Of the
    /// file's name it shows the extension alone.
    public func url(for token: MediaToken, host: String) -> String? {
        guard let port, let ext = library.fileExtension(of: token) else { return nil }
        return "http://\(Self.authority(host: host, port: port))/\(token.hex)" + (ext.map { "." + $0 } ?? "")
    }

    /// The port the server listens on; nil before the first listen.
    public var port: Int? { state.withLock { $0.port } }

    /// HOST:PORT as a URL writes it: an IPv6 host bracketed, a zone's % escaped (RFC 6874).
    public static func authority(host: String, port: Int) -> String {
        guard host.contains(":"), !host.hasPrefix("[") else { return "\(host):\(port)" }
        return "[" + host.replacingPercent() + "]:\(port)"
    }

    /// Stops listening, closes every connection (responses in flight end) and revokes every token.
    public func shutdown() async {
        let connections = state.withLock { state in
            state.shutDown = true
            return Array(state.connections.values)
        }
        await listeners.closeAll()
        for connection in connections { connection.close(promise: nil) }
        for connection in connections { try? await connection.closeFuture.get() }
        library.revokeAll()
    }

    /// For tests and benchmarks: connections open now.
    public var connectionCount: Int { state.withLock { $0.connections.count } }

    /// For tests and benchmarks: the file bytes every response has handed its connection so far,
    /// sent or queued: a reader that takes nothing holds it at what the socket buffers and the
    /// write-buffer high-water mark take, whatever the file's size.
    public var bytesQueued: Int { queued.withLock { $0 } }

    func noteQueued(_ count: Int) { queued.withLock { $0 += count } }

    /// For tests and benchmarks: tokens published and not revoked.
    public var publishedCount: Int { library.count }

    private func bind(_ address: String, port: Int) async throws -> any Channel {
        let socketAddress = try SocketAddress(ipAddress: address, port: port)
        var bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            // FileRegions, not bytes in memory: keep a few chunks queued so the socket never waits for one.
            .childChannelOption(
                .writeBufferWaterMark,
                value: .init(low: 2 * MediaRequestHandler.chunkSize, high: 4 * MediaRequestHandler.chunkSize)
            )
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try self.configure(channel) }
            }
        if case .v6 = socketAddress {
            // "::" takes this port on IPv6 alone: "0.0.0.0" may take it too.
            bootstrap = bootstrap.serverChannelOption(
                ChannelOptions.Types.SocketOption(level: .ipv6, name: .ipv6_v6only), value: 1)
        }
        return try await bootstrap.bind(to: socketAddress).get()
    }

    /// Sets up an accepted connection's pipeline, or refuses it (503) when the server is full.
    private func configure(_ channel: any Channel) throws {
        let id = ObjectIdentifier(channel)
        let admitted = state.withLock { state in
            guard !state.shutDown, state.connections.count < configuration.maximumConnections else { return false }
            state.connections[id] = channel
            return true
        }
        guard admitted else {
            logger.debug("connection refused: at the limit", metadata: ["limit": "\(configuration.maximumConnections)"])
            try channel.pipeline.syncOperations.addHandler(RefusingHandler())
            return
        }
        channel.closeFuture.whenComplete { [state] _ in
            state.withLock { _ = $0.connections.removeValue(forKey: id) }
        }
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = configuration.maximumHeaderBytes
        limits.maxHeaderListSize = configuration.maximumHeaderBytes
        limits.maxHeaderFieldCount = 256
        let operations = channel.pipeline.syncOperations
        try operations.configureHTTPServerPipeline(
            withPipeliningAssistance: true, withErrorHandling: false, withEncoderConfiguration: .init(),
            withDecoderLimitConfiguration: limits)
        try operations.addHandler(MediaRequestHandler(server: self))
    }

    /// The Content-Type of the file `descriptor` reads, from its first bytes or `name`.
    /// The content type of the open file `descriptor` from its first bytes, then `name`'s
    /// extension; nil if neither says.
    public static func sniff(descriptor: Int32, name: String) -> String? {
        var head = [UInt8](repeating: 0, count: MediaContentType.headLength)
        let count = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        return MediaContentType.sniff(head: Array(head.prefix(max(0, count))), name: name)
    }
}

extension String {
    /// With each "%" written "%25" (an IPv6 zone in a URL, RFC 6874).
    fileprivate func replacingPercent() -> String {
        split(separator: "%", omittingEmptySubsequences: false).joined(separator: "%25")
    }
}

/// The listening sockets, bound one at a time so that every address gets the port the first took.
private actor Listeners {
    private var channels: [String: any Channel] = [:]
    private var port: Int?
    private var closed = false
    private var tail: Task<Void, Never>?

    func listen(
        on address: String, port configured: Int?,
        bind: @escaping @Sendable (String, Int) async throws -> any Channel
    ) async throws -> Int {
        let previous = tail
        let attempt = Task { () async throws -> Int in
            await previous?.value
            return try await self.bindOnce(address, configured: configured, bind: bind)
        }
        tail = Task { _ = try? await attempt.value }
        return try await attempt.value
    }

    private func bindOnce(
        _ address: String, configured: Int?, bind: @Sendable (String, Int) async throws -> any Channel
    ) async throws -> Int {
        guard !closed else { throw MediaServerError.shutDown }
        if channels[address] != nil, let port { return port }
        let channel = try await bind(address, port ?? configured ?? 0)
        guard !closed else {
            try? await channel.close()
            throw MediaServerError.shutDown
        }
        let bound = channel.localAddress?.port ?? 0
        port = bound
        channels[address] = channel
        return bound
    }

    func closeAll() async {
        closed = true
        await tail?.value
        for channel in channels.values { try? await channel.close() }
        channels.removeAll()
    }
}

public enum MediaServerError: Error, CustomStringConvertible {
    case shutDown
    public var description: String { "the media server is shut down" }
}

/// A connection over ``MediaServerConfiguration/maximumConnections``: a 503 and closed.
private final class RefusingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private var refused = false

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { refuse(context) }
    }

    func channelActive(context: ChannelHandlerContext) { refuse(context) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    private func refuse(_ context: ChannelHandlerContext) {
        guard !refused else { return }
        refused = true
        let answer =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: answer))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}
