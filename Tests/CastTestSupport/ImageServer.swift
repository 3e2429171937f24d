import CastdSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// An HTTP server (or HTTPS, given a TLS configuration) on 127.0.0.1, on a port of its own, that
/// answers each path as a test says:
/// an image, an error, a redirect, a body it never finishes, or nothing at all. It counts the
/// requests for each path, so a test can tell a cache hit from a fetch.
public final class ImageServer: Sendable {
    public enum Answer: Sendable {
        /// 200 with the bytes, with a Content-Length, or chunked in pieces of `chunk` bytes.
        case body([UInt8], chunked: Int? = nil)
        /// A status with a short text body.
        case status(Int)
        /// A redirect with this status and Location.
        case redirect(Int, location: String)
        /// 200 whose head says `contentLength`; then a few bytes, then nothing more.
        case promises(contentLength: Int)
        /// 200, chunked: `total` bytes of a PNG in pieces of `chunk`, as fast as the client reads.
        case stream(total: Int, chunk: Int)
        /// Reads the request and never answers.
        case silence
        /// Waits for ``release()``, then answers.
        indirect case held(Answer)
    }

    public let port: Int
    public let scheme: String
    private let channel: any Channel
    private let state = Locked(State())
    private let gate: EventLoopPromise<Void>

    struct State {
        var answers: [String: [Answer]] = [:]
        var hits: [String: Int] = [:]
        /// Bytes the server sent as bodies, by path.
        var sent: [String: Int] = [:]
        /// Paths whose `.stream` ended: all of it sent, or the client gone.
        var streamsEnded: Set<String> = []
    }

    public init(tls: TLSConfiguration? = nil) async throws {
        let gate = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
        let state = self.state
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0) }
        channel = try await ServerBootstrap(group: .singletonMultiThreadedEventLoopGroup)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        ImageServerHandler(state: state, gate: gate.futureResult))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
        scheme = tls == nil ? "http" : "https"
        self.gate = gate
    }

    /// `http://127.0.0.1:PORT/path` (`https` with TLS; `host` for another name of the address).
    public func url(_ path: String, host: String = "127.0.0.1") -> String { "\(scheme)://\(host):\(port)\(path)" }

    /// Answers requests for `path` (with its query, if any) with `answers` in turn; the last
    /// one answers every request after. Unknown paths get 404.
    public func answer(_ path: String, _ answers: Answer...) {
        state.withLock { $0.answers[path] = answers }
    }

    /// How many requests came for `path`.
    public func hits(_ path: String) -> Int { state.withLock { $0.hits[path] ?? 0 } }

    public var totalHits: Int { state.withLock { $0.hits.values.reduce(0, +) } }

    /// How many body bytes went out for `path`.
    public func bytesSent(_ path: String) -> Int { state.withLock { $0.sent[path] ?? 0 } }

    /// Whether the `.stream` answer for `path` ended: all of it sent, or the client gone.
    public func streamEnded(_ path: String) -> Bool { state.withLock { $0.streamsEnded.contains(path) } }

    /// Lets the held answers go.
    public func release() { gate.succeed() }

    public func close() async {
        gate.succeed()
        try? await channel.close()
    }

    /// `body` with a server, closed afterwards.
    public static func with<T>(tls: TLSConfiguration? = nil, _ body: (ImageServer) async throws -> T) async throws -> T
    {
        let server = try await ImageServer(tls: tls)
        do {
            let result = try await body(server)
            await server.close()
            return result
        } catch {
            await server.close()
            throw error
        }
    }

    /// A PNG's signature, the start of an IHDR chunk for a 64×64 image, and more bytes up to
    /// `count` (distinct for distinct `seed`s): what the cache takes for a PNG (its first bytes
    /// and the size its header gives), which is all these tests need. Cut at `count`.
    public static func png(count: Int, seed: UInt8 = 0) -> [UInt8] {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let header: [UInt8] = [0, 0, 0, 13] + Array("IHDR".utf8) + [0, 0, 0, 64, 0, 0, 0, 64]
        let start = signature + header
        return Array(start.prefix(count))
            + (0..<max(0, count - start.count)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }
}

private final class ImageServerHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: used on its channel's event loop only (`path` is set and read there).
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: Locked<ImageServer.State>
    private let gate: EventLoopFuture<Void>
    private var path = ""

    init(state: Locked<ImageServer.State>, gate: EventLoopFuture<Void>) {
        self.state = state
        self.gate = gate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            path = head.uri
        case .body:
            break
        case .end:
            let path = self.path
            let answer = state.withLock { state -> ImageServer.Answer in
                let hit = state.hits[path, default: 0]
                state.hits[path] = hit + 1
                guard let answers = state.answers[path], !answers.isEmpty else { return .status(404) }
                return answers[min(hit, answers.count - 1)]
            }
            respond(answer, on: context.channel)
        }
    }

    private func respond(_ answer: ImageServer.Answer, on channel: any Channel) {
        var headers = HTTPHeaders()
        headers.add(name: "Connection", value: "close")
        switch answer {
        case .held(let answer):
            gate.hop(to: channel.eventLoop).whenComplete { _ in
                self.respond(answer, on: channel)
            }
        case .silence:
            break
        case .status(let code):
            let text = ByteBuffer(string: "<!DOCTYPE html><p>\(code)</p>")
            headers.add(name: "Content-Type", value: "text/html")
            headers.add(name: "Content-Length", value: "\(text.readableBytes)")
            send(.init(statusCode: code), headers, [text], on: channel)
        case .redirect(let code, let location):
            headers.add(name: "Location", value: location)
            headers.add(name: "Content-Length", value: "0")
            send(.init(statusCode: code), headers, [], on: channel)
        case .body(let bytes, let chunk?):
            headers.add(name: "Content-Type", value: "image/png")
            let pieces = stride(from: 0, to: bytes.count, by: chunk).map {
                ByteBuffer(bytes: bytes[$0..<min($0 + chunk, bytes.count)])
            }
            send(.ok, headers, pieces, on: channel)
        case .body(let bytes, nil):
            headers.add(name: "Content-Type", value: "image/png")
            headers.add(name: "Content-Length", value: "\(bytes.count)")
            send(.ok, headers, [ByteBuffer(bytes: bytes)], on: channel)
        case .promises(let length):
            headers.add(name: "Content-Type", value: "image/png")
            headers.add(name: "Content-Length", value: "\(length)")
            channel.write(
                HTTPServerResponsePart.head(.init(version: .http1_1, status: .ok, headers: headers)), promise: nil)
            record(8)
            channel.writeAndFlush(
                HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: ImageServer.png(count: 8)))), promise: nil)
        case .stream(let total, let chunk):
            headers.add(name: "Content-Type", value: "image/png")
            channel.write(
                HTTPServerResponsePart.head(.init(version: .http1_1, status: .ok, headers: headers)), promise: nil)
            let bytes = ImageServer.png(count: chunk)
            stream(remaining: total, piece: bytes, on: channel)
        }
    }

    /// Writes `piece` until `remaining` bytes went out or the client is gone, one write after
    /// the other (as fast as the client reads).
    private func stream(remaining: Int, piece: [UInt8], on channel: any Channel) {
        guard remaining > 0 else {
            endStream()
            channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
            return
        }
        let count = min(remaining, piece.count)
        record(count)
        channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: piece[..<count]))))
            .whenComplete { result in
                guard case .success = result else { return self.endStream() }
                self.stream(remaining: remaining - count, piece: piece, on: channel)
            }
    }

    private func send(
        _ status: HTTPResponseStatus, _ headers: HTTPHeaders, _ body: [ByteBuffer], on channel: any Channel
    ) {
        channel.write(
            HTTPServerResponsePart.head(.init(version: .http1_1, status: status, headers: headers)), promise: nil)
        for piece in body {
            record(piece.readableBytes)
            channel.write(HTTPServerResponsePart.body(.byteBuffer(piece)), promise: nil)
        }
        channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
    }

    private func endStream() {
        let path = self.path
        state.withLock { _ = $0.streamsEnded.insert(path) }
    }

    private func record(_ bytes: Int) {
        let path = self.path
        state.withLock { $0.sent[path, default: 0] += bytes }
    }
}
