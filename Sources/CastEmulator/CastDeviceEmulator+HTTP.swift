import CastProtocol
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The device description over HTTP (real devices: port 8008) and HTTPS (8443, same certificate
/// as CastV2): `GET /setup/eureka_info` and `/setup/icon.png`.
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

    private func serveHTTP(_ connection: HTTPConnection, scheme: String) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                var request: HTTPRequestHead?
                for try await part in inbound {
                    switch part {
                    case .head(let head):
                        request = head
                    case .body:
                        break
                    case .end:
                        guard let head = request else { continue }
                        request = nil
                        let response = respond(to: head)
                        logger.debug("\(scheme) \(head.method) \(head.uri) → \(response.status.code)")
                        var headers = HTTPHeaders()
                        headers.add(name: "Content-Type", value: response.contentType)
                        headers.add(name: "Content-Length", value: "\(response.body.count)")
                        headers.add(name: "Connection", value: head.isKeepAlive ? "keep-alive" : "close")
                        try await outbound.write(
                            .head(HTTPResponseHead(version: head.version, status: response.status, headers: headers))
                        )
                        if head.method != .HEAD {
                            try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body))))
                        }
                        try await outbound.write(.end(nil))
                        if !head.isKeepAlive { return }
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
    }

    func respond(to head: HTTPRequestHead) -> HTTPResponse {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        guard head.method == .GET || head.method == .HEAD else {
            return HTTPResponse(status: .methodNotAllowed, contentType: "text/plain", body: Array("method not allowed\n".utf8))
        }
        switch path {
        case "/setup/eureka_info":
            let uptime = (ContinuousClock.now - startTime).seconds
            let json = deviceDescription.eurekaInfo(uptime: (uptime * 1000).rounded() / 1000).jsonString
            return HTTPResponse(status: .ok, contentType: "application/json", body: Array(json.utf8))
        case "/setup/icon.png":
            return HTTPResponse(status: .ok, contentType: "image/png", body: Self.icon)
        default:
            return HTTPResponse(status: .notFound, contentType: "text/plain", body: Array("not found\n".utf8))
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
