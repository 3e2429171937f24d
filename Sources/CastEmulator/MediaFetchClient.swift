import CastdSupport
import NIOCore
import NIOHTTP1
import NIOPosix

/// The device's player fetching media: one GET (ranged, or whole up to a limit) over plain TCP
/// to an IP address, within a deadline, on a connection of its own that is closed afterwards.
///
/// Only the answer is awaited, not the connect: a cancelled fetch returns at once, and a connect
/// that completes afterwards is closed without a request.
enum MediaFetchClient {
    struct Response: Sendable {
        var status: Int
        /// Body bytes read (at most the limit).
        var bytes: Int
        /// The content's size: Content-Range's total, else a 200's Content-Length.
        var size: Int64?
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// What a Chromecast's player says it is.
    static let userAgent =
        "Mozilla/5.0 (X11; Linux aarch64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36 CrKey/1.56.500000 (cast-emulator)"

    static func get(
        _ target: MediaFetchTarget, range: ClosedRange<Int64>?, limit: Int, timeout: Duration
    ) async throws -> Response {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let answer = loop.makePromise(of: Response.self)
        let deadline = loop.scheduleTask(in: TimeAmount(timeout)) {
            answer.fail(Failure(description: "no answer within \(timeout)"))
        }
        answer.futureResult.whenComplete { _ in deadline.cancel() }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: target.hostHeader)
        headers.add(name: "User-Agent", value: userAgent)
        headers.add(name: "Accept", value: "*/*")
        if let range { headers.add(name: "Range", value: "bytes=\(range.lowerBound)-\(range.upperBound)") }
        headers.add(name: "Connection", value: "close")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path, headers: headers)

        return try await withTaskCancellationHandler {
            ClientBootstrap(group: loop)
                .connectTimeout(TimeAmount(timeout))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ResponseReader(answer: answer, limit: limit))
                    }
                }
                .connect(to: target.address)
                .whenComplete { result in
                    switch result {
                    case .success(let channel):
                        // Closed once the answer is in, or failed (deadline, cancellation).
                        answer.futureResult.whenComplete { _ in channel.close(promise: nil) }
                        channel.write(HTTPClientRequestPart.head(head), promise: nil)
                        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
                    case .failure(let error):
                        answer.fail(Failure(description: "cannot connect: \(error)"))
                    }
                }
            return try await answer.futureResult.get()
        } onCancel: {
            answer.fail(CancellationError())
        }
    }

    /// The content's size from a response's headers.
    static func size(of head: HTTPResponseHead) -> Int64? {
        if let contentRange = head.headers.first(name: "Content-Range"),
            let slash = contentRange.lastIndex(of: "/")
        {
            return Int64(contentRange[contentRange.index(after: slash)...].filter { !$0.isWhitespace })
        }
        guard head.status == .ok else { return nil }
        return head.headers.first(name: "Content-Length").flatMap { Int64($0) }
    }

    /// Reads the status and counts body bytes up to the limit; answers at the end, at the limit
    /// (the rest is not read: the connection is closed), or when the server closes a body that
    /// has no length.
    private final class ResponseReader: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart

        private let answer: EventLoopPromise<Response>
        private let limit: Int
        private var response: Response?

        init(answer: EventLoopPromise<Response>, limit: Int) {
            self.answer = answer
            self.limit = limit
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                response = Response(status: Int(head.status.code), bytes: 0, size: MediaFetchClient.size(of: head))
            case .body(let chunk):
                response?.bytes += chunk.readableBytes
                if let response, response.bytes >= limit {
                    self.response?.bytes = limit
                    finish(context)
                }
            case .end:
                finish(context)
            }
        }

        private func finish(_ context: ChannelHandlerContext) {
            if let response { answer.succeed(response) }
            context.close(promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            answer.fail(Failure(description: "\(error)"))
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            if let response {
                answer.succeed(response)
            } else {
                answer.fail(Failure(description: "the connection closed without an answer"))
            }
            context.fireChannelInactive()
        }
    }
}
