import CastProtocol
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The device description over HTTP (real devices: port 8008) and HTTPS (8443, same certificate
/// as CastV2): `GET /setup/eureka_info` and `/setup/icon.png`; and the emulator's own control
/// interface under `/emulator/` (see `CastDeviceEmulator+Control.swift`).
extension CastDeviceEmulator {
    func bindHTTP(port: Int, tls: NIOSSLContext?) async throws -> HTTPServer {
        do {
            return try await ServerBootstrap(group: .singletonMultiThreadedEventLoopGroup)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: configuration.host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                        }
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        return try HTTPConnection(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            let scheme = tls == nil ? "HTTP" : "HTTPS"
            throw EmulatorError(.bind, "cannot listen for \(scheme) on \(configuration.host):\(port)", cause: error)
        }
    }

    func serveHTTP(_ server: HTTPServer, scheme: String) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { inbound in
                for try await connection in inbound {
                    group.addTask { await self.serveHTTP(connection, scheme: scheme) }
                }
            }
        }
    }

    /// Request bodies larger than this are refused (413) and the connection closed.
    static let maximumRequestBody = 64 * 1024

    private func serveHTTP(_ connection: HTTPConnection, scheme: String) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                var request: HTTPRequestHead?
                var body: [UInt8] = []
                var tooLarge = false
                for try await part in inbound {
                    switch part {
                    case .head(let head):
                        request = head
                        body = []
                        tooLarge = false
                    case .body(let chunk):
                        if body.count + chunk.readableBytes > Self.maximumRequestBody {
                            tooLarge = true
                        } else {
                            body.append(contentsOf: chunk.readableBytesView)
                        }
                    case .end:
                        guard let head = request else { continue }
                        request = nil
                        let response =
                            tooLarge
                            ? HTTPResponse(
                                .payloadTooLarge, text: "request body over \(Self.maximumRequestBody) bytes\n")
                            : await respond(to: head, body: body)
                        logger.debug("\(scheme) \(head.method) \(head.uri) → \(response.status.code)")
                        let keepAlive = head.isKeepAlive && !tooLarge
                        var headers = HTTPHeaders()
                        headers.add(name: "Content-Type", value: response.contentType)
                        headers.add(name: "Content-Length", value: "\(response.body.count)")
                        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
                        for (name, value) in response.headers { headers.add(name: name, value: value) }
                        try await outbound.write(
                            .head(HTTPResponseHead(version: head.version, status: response.status, headers: headers))
                        )
                        if head.method != .HEAD {
                            try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body))))
                        }
                        try await outbound.write(.end(nil))
                        if !keepAlive { return }
                    }
                }
            }
        } catch {
            logger.debug("\(scheme) connection ended: \(error)")
        }
    }

    struct HTTPResponse {
        var status: HTTPResponseStatus
        var contentType: String
        var body: [UInt8]
        var headers: [(String, String)] = []

        init(status: HTTPResponseStatus, contentType: String, body: [UInt8], headers: [(String, String)] = []) {
            self.status = status
            self.contentType = contentType
            self.body = body
            self.headers = headers
        }

        init(_ status: HTTPResponseStatus, text: String) {
            self.init(status: status, contentType: "text/plain", body: Array(text.utf8))
        }

        init(_ status: HTTPResponseStatus, json: JSONValue, headers: [(String, String)] = []) {
            self.init(
                status: status, contentType: "application/json", body: Array((json.jsonString + "\n").utf8),
                headers: headers)
        }
    }

    func respond(to head: HTTPRequestHead, body: [UInt8] = []) async -> HTTPResponse {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        if let response = await respondToControl(method: head.method, path: path, body: body) {
            return response
        }
        guard head.method == .GET || head.method == .HEAD else {
            return HTTPResponse(.methodNotAllowed, text: "method not allowed\n")
        }
        switch path {
        case "/setup/eureka_info":
            let uptime = (ContinuousClock.now - startTime).seconds
            let json = deviceDescription.eurekaInfo(uptime: (uptime * 1000).rounded() / 1000).jsonString
            return HTTPResponse(status: .ok, contentType: "application/json", body: Array(json.utf8))
        case "/setup/icon.png":
            return HTTPResponse(status: .ok, contentType: "image/png", body: Self.icon)
        default:
            return HTTPResponse(.notFound, text: "not found\n")
        }
    }

    /// A 1×1 PNG: enough for senders that fetch `ic`.
    static let icon: [UInt8] = Array(
        Data(
            base64Encoded:
                "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYPj/HwADAgH/eL9GtQAAAABJRU5ErkJggg=="
        ) ?? Data()
    )
}
