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
        while true {
            switch try await exchange(url, deadline: deadline) {
            case .image(let bytes, let format):
                return Download(bytes: bytes, format: format, url: url, redirects: redirects)
            case .redirect(let location):
                redirects += 1
                guard redirects <= maximumRedirects else {
                    throw .tooManyRedirects(url: ArtworkURL.redacted(text), count: redirects, limit: maximumRedirects)
                }
                do throws(ArtworkError) {
                    url = try url.resolving(location)
                } catch {
                    let reason: String
                    if case .invalidURL(_, let why) = error { reason = why } else { reason = "\(error)" }
                    throw .badRedirect(url: url.redacted, location: ArtworkURL.redacted(location), reason: reason)
                }
            }
        }
    }

    /// One request and its answer, on a connection of its own.
    private func exchange(_ url: ArtworkURL, deadline: NIODeadline) async throws(ArtworkError) -> ArtworkAnswer {
        let remaining = deadline - .now()
        guard remaining > .zero else { throw .timedOut(url: url.redacted, timeout: timeout) }
        let sslContext = url.scheme == .https ? try tlsContext(for: url) : nil
        let eventLoop = (eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton).any()
        let answer = eventLoop.makePromise(of: ArtworkAnswer.self)
        let (limit, timeout) = (maximumBytes, self.timeout)
        let timer = eventLoop.scheduleTask(deadline: deadline) {
            answer.fail(ArtworkError.timedOut(url: url.redacted, timeout: timeout))
        }
        let connected = ClientBootstrap(group: eventLoop)
            .connectTimeout(remaining)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
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
            if case ChannelError.connectTimeout = error {
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

/// What one request got: an image, or where a redirect points.
enum ArtworkAnswer: Sendable {
    case image([UInt8], ArtworkFormat)
    case redirect(location: String)
}
