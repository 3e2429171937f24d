import CastProtocol
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Just enough HTTP/1.1 for one emulator to drive another's control interface: one POST of a
/// JSON body, over plain TCP or TLS (the emulator's self-signed certificate is not checked),
/// with a deadline.
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
        let body = Array(json.jsonString.utf8)
        return try await withThrowingTaskGroup(of: Response.self) { group in
            group.addTask {
                try await exchange(host: host, port: port, tls: tls, path: path, body: body)
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw EmulatorError(.transferFailed, "no answer from \(base) within \(timeout)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    private static func exchange(
        host: String, port: Int, tls: NIOSSLContext?, path: String, body: [UInt8]
    ) async throws -> Response {
        let channel = try await ClientBootstrap(group: .singletonMultiThreadedEventLoopGroup)
            .connectTimeout(.seconds(5))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: tls, serverHostname: nil))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: "\(host):\(port)")
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: "\(body.count)")
            headers.add(name: "Connection", value: "close")
            try await outbound.write(
                .head(HTTPRequestHead(version: .http1_1, method: .POST, uri: path, headers: headers)))
            try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body))))
            try await outbound.write(.end(nil))
            var status: HTTPResponseStatus?
            var received: [UInt8] = []
            reading: for try await part in inbound {
                switch part {
                case .head(let head): status = head.status
                case .body(let chunk): received.append(contentsOf: chunk.readableBytesView)
                case .end: break reading
                }
            }
            guard let status else {
                throw EmulatorError(.transferFailed, "\(host):\(port) closed the connection without an answer")
            }
            return Response(status: status, json: (try? JSONValue.parse(Data(received))) ?? .null)
        }
    }
}
