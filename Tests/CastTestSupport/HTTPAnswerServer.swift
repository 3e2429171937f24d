import CastdSupport
import NIOCore
import NIOHTTP1
import NIOPosix

/// An HTTP server on 127.0.0.1 that answers every request with one fixed answer, then closes:
/// a device's eureka_info, or a device that answers it badly. With `held`, it answers nothing
/// until `release()` (a device slow to answer, to order what a test races). `answer(_:)`
/// changes the answer (a device renamed).
public final class HTTPAnswerServer: Sendable {
    public let port: Int
    private let channel: any Channel
    private let gate: EventLoopPromise<Void>
    private let body: Locked<String>

    public init(
        body: String, status: HTTPResponseStatus = .ok, sayingItsLength: Bool = true, held: Bool = false
    ) async throws {
        let gate = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
        if !held { gate.succeed() }
        let answer = Locked(body)
        channel = try await ServerBootstrap(group: .singletonMultiThreadedEventLoopGroup)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        FixedAnswer(
                            body: answer, status: status, sayingItsLength: sayingItsLength, gate: gate.futureResult))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
        self.gate = gate
        self.body = answer
    }

    /// Answers `body` from now on.
    public func answer(_ body: String) { self.body.withLock { $0 = body } }

    /// Lets a held server answer (the requests waiting, and every one after).
    public func release() { gate.succeed() }

    public func close() async {
        gate.succeed()
        try? await channel.close()
    }
}

/// `body` served by an ``HTTPAnswerServer`` while `run` runs.
public func withHTTPServer<T>(
    body: String, status: HTTPResponseStatus = .ok, sayingItsLength: Bool = true, _ run: (Int) async throws -> T
) async throws -> T {
    let server = try await HTTPAnswerServer(body: body, status: status, sayingItsLength: sayingItsLength)
    do {
        let result = try await run(server.port)
        await server.close()
        return result
    } catch {
        await server.close()
        throw error
    }
}

private final class FixedAnswer: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    let body: Locked<String>
    let status: HTTPResponseStatus
    let sayingItsLength: Bool
    let gate: EventLoopFuture<Void>

    init(body: Locked<String>, status: HTTPResponseStatus, sayingItsLength: Bool, gate: EventLoopFuture<Void>) {
        self.body = body
        self.status = status
        self.sayingItsLength = sayingItsLength
        self.gate = gate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        let channel = context.channel
        let (status, sayingItsLength, answer) = (self.status, self.sayingItsLength, self.body)
        gate.hop(to: channel.eventLoop).whenComplete { _ in
            let text = answer.withLock { $0 }
            var headers = HTTPHeaders()
            headers.add(name: "Connection", value: "close")
            if sayingItsLength { headers.add(name: "Content-Length", value: "\(text.utf8.count)") }
            let head = HTTPResponseHead(version: .http1_1, status: status, headers: headers)
            let body = ByteBuffer(string: text)
            channel.write(HTTPServerResponsePart.head(head), promise: nil)
            channel.write(HTTPServerResponsePart.body(.byteBuffer(body)), promise: nil)
            channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
