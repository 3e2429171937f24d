import CastTestSupport
import CastdSupport
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// One HTTP/1.1 GET over plain TCP or TLS (no certificate checks, as senders do with devices),
/// read until the server closes. Written by hand because the test target has no HTTP client.
struct HTTPFetch {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: Data
    }

    static func get(host: String, port: Int, path: String, tls: Bool) async throws -> Response {
        try await request(method: "GET", host: host, port: port, path: path, tls: tls)
    }

    /// Any method, with an optional body (sent with its Content-Length).
    static func request(
        method: String, host: String, port: Int, path: String, body: String? = nil, tls: Bool
    ) async throws -> Response {
        let collected = LockedBox(ByteBuffer())
        let done = LockedBox<EventLoopPromise<Void>?>(nil)
        var sslContext: NIOSSLContext?
        if tls {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            sslContext = try NIOSSLContext(configuration: configuration)
        }
        let channel = try await ClientBootstrap(group: .singletonMultiThreadedEventLoopGroup)
            // A deadline of the test machine's, stretched like every other (a busy event loop
            // handles the connection's completion late: seen beside a CPU hog).
            .connectTimeout(TimeAmount(Duration.seconds(5).scaledForTests))
            .channelInitializer { [sslContext] channel in
                let promise = channel.eventLoop.makePromise(of: Void.self)
                done.withLock { $0 = promise }
                return channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: sslContext, serverHostname: nil)
                        )
                    }
                    try channel.pipeline.syncOperations.addHandler(Collector(collected: collected, done: promise))
                }
            }
            .connect(host: host, port: port)
            .get()
        var request = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nAccept: */*\r\nConnection: close\r\n"
        if let body {
            request += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } else {
            request += "\r\n"
        }
        try await channel.writeAndFlush(ByteBuffer(string: request))
        try await done.withLock { $0 }!.futureResult.get()
        let bytes = collected.withLock { Array($0.readableBytesView) }
        return try parse(bytes)
    }

    private static func parse(_ bytes: [UInt8]) throws -> Response {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let range = bytes.firstRange(of: separator) else {
            throw ParseError(text: String(decoding: bytes, as: UTF8.self))
        }
        let head = String(decoding: bytes[..<range.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw ParseError(text: head) }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: Data(bytes[range.upperBound...]))
    }

    struct ParseError: Error {
        var text: String
    }

    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let collected: LockedBox<ByteBuffer>
        let done: EventLoopPromise<Void>

        init(collected: LockedBox<ByteBuffer>, done: EventLoopPromise<Void>) {
            self.collected = collected
            self.done = done
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            _ = collected.withLock { $0.writeBuffer(&buffer) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            done.succeed()
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // An unclean TLS shutdown after the whole response is still a response.
            context.close(promise: nil)
        }
    }
}

/// A value behind a lock, shareable between the event loop and the test.
final class LockedBox<Value: Sendable>: Sendable {
    private let mutex: Locked<Value>

    init(_ value: Value) {
        mutex = Locked(value)
    }

    func withLock<R: Sendable>(_ body: (inout Value) throws -> R) rethrows -> R {
        try mutex.withLock { try body(&$0) }
    }
}
