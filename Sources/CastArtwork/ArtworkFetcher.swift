import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Fetches one image by HTTP/1.1 GET, on SwiftNIO, bounded in every way a server could stretch
/// it: one deadline for the whole fetch (connecting, every redirect, the body), at most
/// ``maximumRedirects`` redirects, at most ``maximumBytes`` of body (refused at once when
/// Content-Length says more, abandoned the moment the bytes that arrive pass it), status 200
/// only, and an image's first bytes (``ArtworkFormat``), whatever the server calls it.
///
/// Where it connects is judged before it connects (``ArtworkAddressPolicy``: never this
/// machine's loopback, a link-local address, or a private network after a public server's
/// redirect), and a redirect from https to plain http is refused.
///
/// https uses NIOSSL's default client configuration: the system's trust roots, the host name
/// checked against the certificate and sent as SNI (an IP address is checked against the
/// certificate's addresses, and sent as no name).
///
/// Written on NIO rather than AsyncHTTPClient, which would bring Foundation into castc and eight
/// more packages into every build; a fetch here needs GET, redirects and limits only.
public struct ArtworkFetcher: Sendable {
    /// The whole fetch, from the first connection to the body's last byte.
    public var timeout: Duration
    public var maximumRedirects: Int
    /// The largest body taken.
    public var maximumBytes: Int
    /// Where connections run; nil: NIO's shared group, started at the first fetch (a program
    /// that finds its image in the cache never starts it).
    public var eventLoopGroup: (any EventLoopGroup)?
    /// Certificates trusted besides the system's: for tests (a private server's authority).
    package var additionalTrustRoots: [NIOSSLCertificate] = []
    /// Whether images may be fetched from this machine's loopback: never, but in tests, whose
    /// image servers listen on 127.0.0.1. Its default is ``loopbackAllowedForTests``.
    package var allowsLoopback = ArtworkFetcher.loopbackAllowedForTests

    /// The one test-only setting of artwork fetches: `CASTD_ARTWORK_ALLOW_LOOPBACK=1` in the
    /// environment lets every fetcher of the process fetch from loopback (SECURITY.md, G3.5).
    /// The test suite gives it to every process it starts (CastTestSupport's `childEnvironment`);
    /// its in-process fetchers set ``allowsLoopback``, which this is the default of. Read here
    /// only, once. Nothing else in castd reads it, and no one outside tests should set it.
    package static let loopbackAllowedForTests: Bool = {
        guard let value = getenv("CASTD_ARTWORK_ALLOW_LOOPBACK") else { return false }
        return String(cString: value) == "1"
    }()

    public init(
        timeout: Duration = .seconds(10),
        maximumRedirects: Int = 5,
        maximumBytes: Int = 10 << 20,
        eventLoopGroup: (any EventLoopGroup)? = nil
    ) {
        self.timeout = timeout
        self.maximumRedirects = maximumRedirects
        self.maximumBytes = maximumBytes
        self.eventLoopGroup = eventLoopGroup
    }

    /// An image's bytes, as the last server of the redirects sent them.
    public struct Download: Sendable {
        public var bytes: [UInt8]
        public var format: ArtworkFormat
        /// The URL the image came from, after redirects.
        public var url: ArtworkURL
        public var redirects: Int
    }

    /// Fetches the image at `text`, following redirects.
    public func fetch(_ text: String) async throws(ArtworkError) -> Download {
        var url = try ArtworkURL(parsing: text)
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        var redirects = 0
        // The server whose redirect led to `url`: a public one may not send the fetch into a
        // private network.
        var redirectedBy: SocketAddress?
        while true {
            switch try await exchange(url, deadline: deadline, redirectedBy: redirectedBy) {
            case .image(let bytes, let format):
                return Download(bytes: bytes, format: format, url: url, redirects: redirects)
            case .redirect(let location, let server):
                redirects += 1
                guard redirects <= maximumRedirects else {
                    throw .tooManyRedirects(url: ArtworkURL.redacted(text), count: redirects, limit: maximumRedirects)
                }
                let next: ArtworkURL
                do throws(ArtworkError) {
                    next = try url.resolving(location)
                } catch {
                    let reason: String
                    if case .invalidURL(_, let why) = error { reason = why } else { reason = "\(error)" }
                    throw .badRedirect(url: url.redacted, location: ArtworkURL.redacted(location), reason: reason)
                }
                if url.scheme == .https && next.scheme == .http {
                    throw .badRedirect(
                        url: url.redacted, location: next.redacted,
                        reason: "it goes from https to plain http, where anyone on the way could read or change "
                            + "the request and the image")
                }
                url = next
                redirectedBy = server
            }
        }
    }

    /// One request and its answer, on a connection of its own.
    /// - Parameter redirectedBy: The server whose redirect led to `url`, if one did.
    private func exchange(
        _ url: ArtworkURL, deadline: NIODeadline, redirectedBy: SocketAddress?
    ) async throws(ArtworkError) -> ArtworkAnswer {
        let remaining = deadline - .now()
        guard remaining > .zero else { throw .timedOut(url: url.redacted, timeout: timeout) }
        let sslContext = url.scheme == .https ? try tlsContext(for: url) : nil
        let eventLoop = (eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton).any()
        let answer = eventLoop.makePromise(of: ArtworkAnswer.self)
        let (limit, timeout) = (maximumBytes, self.timeout)
        let policy = ArtworkAddressPolicy(allowsLoopback: allowsLoopback)
        let timer = eventLoop.scheduleTask(deadline: deadline) {
            answer.fail(ArtworkError.timedOut(url: url.redacted, timeout: timeout))
        }
        let connected = ClientBootstrap(group: eventLoop)
            .connectTimeout(remaining)
            // Every address is judged before NIO connects to any.
            .resolver(ArtworkResolver(loop: eventLoop, url: url, policy: policy, previous: redirectedBy))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    // First: the peer is judged again once connected, before TLS or HTTP sends a byte.
                    try sync.addHandler(
                        ArtworkPeerCheck(url: url, policy: policy, redirectedBy: redirectedBy, answer: answer))
                    if let sslContext {
                        let name = url.isIPAddress ? nil : url.host
                        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: name))
                    }
                    try sync.addHTTPClientHandlers()
                    try sync.addHandler(ArtworkResponseHandler(url: url, limit: limit, answer: answer))
                }
            }
            .connect(host: url.host, port: url.port)
        connected.whenFailure { error in
            if let error = error as? NIOConnectionError,
                let refusal = (error.dnsAError ?? error.dnsAAAAError) as? ArtworkError
            {
                answer.fail(refusal)
            } else if case ChannelError.connectTimeout = error {
                answer.fail(ArtworkError.timedOut(url: url.redacted, timeout: timeout))
            } else {
                answer.fail(
                    ArtworkError.connectionFailed(url: url.redacted, reason: Self.describe(connectError: error)))
            }
        }
        connected.whenSuccess { channel in
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: url.authority)
            headers.add(name: "User-Agent", value: "castd-artwork")
            headers.add(name: "Accept", value: "image/png, image/jpeg, image/gif, image/webp, image/*;q=0.5")
            headers.add(name: "Accept-Encoding", value: "identity")
            headers.add(name: "Connection", value: "close")
            let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: url.requestTarget, headers: headers)
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        }
        // Whatever ends the exchange (the answer, an error, the deadline, cancellation) closes
        // the connection, also one that connects only afterwards.
        answer.futureResult.whenComplete { _ in
            timer.cancel()
            connected.whenSuccess { $0.close(promise: nil) }
        }
        do {
            return try await withTaskCancellationHandler {
                try await answer.futureResult.get()
            } onCancel: {
                answer.fail(ArtworkError.cancelled(url: url.redacted))
            }
        } catch let error as ArtworkError {
            throw error
        } catch {
            throw .incomplete(url: url.redacted, reason: "\(error)")
        }
    }

    private func tlsContext(for url: ArtworkURL) throws(ArtworkError) -> NIOSSLContext {
        do {
            if additionalTrustRoots.isEmpty { return try Self.defaultTLSContext.get() }
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = .default
            configuration.additionalTrustRoots = [.certificates(additionalTrustRoots)]
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw .tlsFailed(url: url.redacted, reason: "cannot set up TLS: \(error)")
        }
    }

    /// One context for every https fetch of the process: loading the system's trust roots is
    /// the expensive part, and it is done at the first https fetch.
    private static let defaultTLSContext = Result { try NIOSSLContext(configuration: .makeClientConfiguration()) }

    /// "Connection refused", "cannot resolve example.invalid".
    static func describe(connectError error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return "cannot resolve \(error.host)"
            }
            if let first = error.connectionErrors.first { return describe(connectError: first.error) }
        }
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return "\(error)"
    }
}

/// What one request got: an image, or where a redirect points (and the server that said so).
enum ArtworkAnswer: Sendable {
    case image([UInt8], ArtworkFormat)
    case redirect(location: String, server: SocketAddress?)
}

/// The first handler of an artwork connection: judges the address the channel is connected to
/// (``ArtworkAddressPolicy``) when it becomes active, before any other handler can send a
/// byte; a refused peer fails the answer and closes the channel, and the handlers after never
/// learn it was active. The resolver refused such an address already; this judges the
/// connection itself, whatever led to it.
final class ArtworkPeerCheck: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    private let url: ArtworkURL
    private let policy: ArtworkAddressPolicy
    private let redirectedBy: SocketAddress?
    private let answer: EventLoopPromise<ArtworkAnswer>

    init(
        url: ArtworkURL, policy: ArtworkAddressPolicy, redirectedBy: SocketAddress?,
        answer: EventLoopPromise<ArtworkAnswer>
    ) {
        self.url = url
        self.policy = policy
        self.redirectedBy = redirectedBy
        self.answer = answer
    }

    func channelActive(context: ChannelHandlerContext) {
        guard let peer = context.channel.remoteAddress else {
            answer.fail(ArtworkError.connectionFailed(url: url.redacted, reason: "the connection has no peer address"))
            context.close(promise: nil)
            return
        }
        if let reason = policy.refusal(of: peer, after: redirectedBy) {
            answer.fail(
                ArtworkError.refusedAddress(url: url.redacted, address: ArtworkAddressPolicy.text(peer), reason: reason)
            )
            context.close(promise: nil)
            return
        }
        context.fireChannelActive()
    }
}
