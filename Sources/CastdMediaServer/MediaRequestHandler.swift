import Logging
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#endif

/// One connection's requests: each answered as its head arrives (bodies are ignored, and a
/// request with one closes the connection after its answer); pipelined requests wait in NIO's
/// HTTPServerPipelineHandler, before this one, until the answer before them has ended.
final class MediaRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The file bytes queued on the socket at a time, in one FileRegion: the bound on what a
    /// response holds (none of it in memory) and the unit of a reader's progress.
    static let chunkSize = 256 * 1024
    /// How often a response being sent checks its file's size and its reader's progress.
    static let watchInterval = TimeAmount.milliseconds(250)

    let server: MediaServer
    /// A request whose head came and whose end has not.
    var requestInProgress = false
    /// An answer whose head is written and whose end is not.
    var responding = false
    var keepAlive = true
    /// HTTP/1.0 keep-alive: said in the answer, as HTTP/1.0 does not assume it.
    var saysKeepAlive = false
    /// An answer said `Connection: close`: requests pipelined behind it are not answered.
    var closing = false
    /// The file body being sent.
    var stream: BodyStream?
    var pumping = false
    var pumpAgain = false
    var timer: Scheduled<Void>?

    init(server: MediaServer) {
        self.server = server
    }

    var logger: Logger { server.logger }
    var configuration: MediaServerConfiguration { server.configuration }

    func channelActive(context: ChannelHandlerContext) {
        scheduleTimer(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if let stream {
            self.stream = nil
            stream.file.finish()
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            requestInProgress = true
            guard !closing else { return }
            respond(to: head, context: context)
        case .body:
            break
        case .end:
            requestInProgress = false
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? HTTPParserError, !responding, !requestInProgress {
            // A head too large (or not HTTP): answer, if nothing else is being answered, and close.
            let status: HTTPResponseStatus =
                error == .headerOverflow ? .requestHeaderFieldsTooLarge : .badRequest
            logger.debug("bad request", metadata: ["status": "\(status.code)", "error": "\(error)"])
            keepAlive = false
            writeHead(status, HTTPHeaders(), context: context)
            endResponse(context: context)
        } else {
            logger.debug("connection error", metadata: ["error": "\(error)"])
            context.close(promise: nil)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, stream != nil {
            stream?.lastProgress = .now()
            pump(context)
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: answers

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        keepAlive = head.isKeepAlive && !Self.hasBody(head)
        saysKeepAlive = keepAlive && head.version == .http1_0
        guard let token = Self.token(inPath: head.uri) else {
            return answer(.notFound, context: context)
        }
        switch head.method {
        case .GET, .HEAD:
            serveFile(token, head: head, context: context)
        case .OPTIONS:
            guard server.library.contains(token) else { return answer(.notFound, context: context) }
            var headers = Self.fileHeaders
            headers.add(name: "Access-Control-Allow-Methods", value: "GET, HEAD, OPTIONS")
            headers.add(name: "Access-Control-Allow-Headers", value: "Range")
            headers.add(name: "Access-Control-Max-Age", value: "86400")
            answer(.noContent, headers, context: context)
        default:
            guard server.library.contains(token) else { return answer(.notFound, context: context) }
            var headers = Self.fileHeaders
            headers.add(name: "Allow", value: "GET, HEAD")
            answer(.methodNotAllowed, headers, context: context)
        }
    }

    private func serveFile(_ token: MediaToken, head: HTTPRequestHead, context: ChannelHandlerContext) {
        let lease: MediaLibrary.Lease
        switch server.library.acquire(token, limit: configuration.maximumConnectionsPerToken) {
        case .unknown:
            return answer(.notFound, context: context)
        case .busy:
            logger.debug("busy", metadata: ["token": "\(token)"])
            var headers = Self.fileHeaders
            headers.add(name: "Retry-After", value: "1")
            return answer(.serviceUnavailable, headers, context: context)
        case .granted(let granted):
            lease = granted
        }
        guard let size = Self.fileSize(lease.descriptor) else {
            close(lease.descriptor)
            server.library.release(lease)
            return answer(.internalServerError, context: context)
        }
        var headers = Self.fileHeaders
        headers.add(name: "Content-Type", value: lease.contentType)
        let range = ByteRange(header: head.headers["Range"])
        let bytes: ClosedRange<Int>?
        let status: HTTPResponseStatus
        switch ByteRange.select(range, size: size) {
        case .whole:
            status = .ok
            bytes = size > 0 ? 0...(size - 1) : nil
        case .partial(let selected):
            status = .partialContent
            bytes = selected
            headers.add(name: "Content-Range", value: "bytes \(selected.lowerBound)-\(selected.upperBound)/\(size)")
        case .unsatisfiable:
            close(lease.descriptor)
            server.library.release(lease)
            headers.add(name: "Content-Range", value: "bytes */\(size)")
            return answer(.rangeNotSatisfiable, headers, context: context)
        }
        headers.add(name: "Content-Length", value: "\(bytes?.count ?? 0)")
        logger.debug(
            "\(head.method)", metadata: ["token": "\(token)", "status": "\(status.code)", "size": "\(size)"])
        writeHead(status, headers, context: context)
        guard head.method == .GET, let bytes else {
            close(lease.descriptor)
            server.library.release(lease)
            return endResponse(context: context)
        }
        let file = OpenFile(lease: lease, library: server.library)
        stream = BodyStream(file: file, next: bytes.lowerBound, end: bytes.upperBound + 1, lastProgress: .now())
        pump(context)
        scheduleTimer(context)
    }

    /// An answer without a body.
    private func answer(
        _ status: HTTPResponseStatus, _ headers: HTTPHeaders = HTTPHeaders(), context: ChannelHandlerContext
    ) {
        var headers = headers
        if status != .noContent { headers.add(name: "Content-Length", value: "0") }
        writeHead(status, headers, context: context)
        endResponse(context: context)
    }

    func writeHead(_ status: HTTPResponseStatus, _ headers: HTTPHeaders, context: ChannelHandlerContext) {
        var headers = headers
        if !keepAlive {
            headers.add(name: "Connection", value: "close")
        } else if saysKeepAlive {
            headers.add(name: "Connection", value: "keep-alive")
        }
        responding = true
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
            promise: nil)
    }

    /// Ends the answer being written: then closes the connection, or waits for the next request.
    func endResponse(context: ChannelHandlerContext) {
        responding = false
        if keepAlive {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            scheduleTimer(context)
        } else {
            closing = true
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// What every answer about a published file says.
    static let fileHeaders = HTTPHeaders([
        ("Accept-Ranges", "bytes"),
        ("Access-Control-Allow-Origin", "*"),
        ("Access-Control-Expose-Headers", "Content-Length, Content-Range"),
    ])

    /// The token a request's path names: "/<32 hex digits>", then an optional ".ext" and query.
    static func token(inPath uri: String) -> MediaToken? {
        var path = uri.utf8[...]
        if let query = path.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            path = path[..<query]
        }
        guard path.first == UInt8(ascii: "/") else { return nil }
        path = path.dropFirst()
        if let dot = path.firstIndex(of: UInt8(ascii: ".")) { path = path[..<dot] }
        return MediaToken(hexDigits: path)
    }

    private static func hasBody(_ head: HTTPRequestHead) -> Bool {
        head.headers.contains(name: "Transfer-Encoding")
            || head.headers["Content-Length"].contains { $0.trimmingWhitespace != "0" }
    }

    /// The size of the regular file `descriptor` reads now; nil if fstat fails or it is no regular file.
    static func fileSize(_ descriptor: Int32) -> Int? {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(status.st_size)
    }
}
