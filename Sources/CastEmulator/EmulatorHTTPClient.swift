import CastProtocol
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Just enough HTTP/1.1 for one emulator to drive another's control interface: one POST of a
/// JSON body, over plain TCP or TLS (the emulator's self-signed certificate is not checked),
/// with a deadline.
///
/// A plain channel with a handler that collects the answer, not an `NIOAsyncChannel`: one made
/// in a connect's initializer is dropped unfinished when the connect then fails (a timeout), which
/// traps.
enum EmulatorHTTPClient {
    struct Response: Sendable {
        var status: HTTPResponseStatus
        /// The body as JSON; `.null` when it is not JSON.
        var json: JSONValue
    }

    /// POSTs `json` to `path` under `base` (`http://HOST:PORT` or `https://HOST:PORT`).
    static func post(
        _ json: JSONValue, to path: String, at base: URL, timeout: Duration = .seconds(10)
    ) async throws -> Response {
        guard let scheme = base.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = base.host, !host.isEmpty
        else {
            throw EmulatorError(.invalidArgument, "\(base) is not an http:// or https:// address")
        }
        let port = base.port ?? (scheme == "https" ? 443 : 80)
        let tls: NIOSSLContext?
        if scheme == "https" {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            tls = try NIOSSLContext(configuration: configuration)
        } else {
            tls = nil
        }
        let group = MultiThreadedEventLoopGroup.singleton
        let answer = group.any().makePromise(of: Response.self)
        let deadline = group.any().scheduleTask(in: TimeAmount(timeout)) {
            answer.fail(EmulatorError(.transferFailed, "no answer from \(base) within \(timeout)"))
        }
        defer { deadline.cancel() }
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(TimeAmount(timeout))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls {
                            try channel.pipeline.syncOperations.addHandler(
                                NIOSSLClientHandler(context: tls, serverHostname: nil))
                        }
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ResponseCollector(answer: answer))
                    }
                }
                .connect(host: host, port: port)
                .get()
        } catch {
            answer.fail(error)
            throw EmulatorError(.transferFailed, "cannot reach \(base)", cause: error)
        }
        let body = Array(json.jsonString.utf8)
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "\(host):\(port)")
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: "\(body.count)")
        headers.add(name: "Connection", value: "close")
        let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path, headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        defer { channel.close(promise: nil) }
        return try await answer.futureResult.get()
    }

    /// Collects one response; fails the answer if the connection ends first.
    private final class ResponseCollector: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart

        private let answer: EventLoopPromise<Response>
        private var status: HTTPResponseStatus?
        private var body: [UInt8] = []

        init(answer: EventLoopPromise<Response>) {
            self.answer = answer
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                status = head.status
            case .body(let chunk):
                body.append(contentsOf: chunk.readableBytesView)
            case .end:
                if let status {
                    answer.succeed(Response(status: status, json: (try? JSONValue.parse(Data(body))) ?? .null))
                }
                context.close(promise: nil)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            answer.fail(error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            answer.fail(EmulatorError(.transferFailed, "the connection closed without an answer"))
            context.fireChannelInactive()
        }
    }
}
