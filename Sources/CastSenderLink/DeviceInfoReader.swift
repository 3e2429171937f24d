import CastProtocol
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Reads what a device says of itself (``CastDeviceInfo``, `/setup/eureka_info`) as other
/// senders do: HTTPS on 8443 first, then HTTP on 8008 for older firmware. The device's
/// certificate is self-signed and not checked here, as on the Cast link: device authentication
/// proves the device once castd connects.
///
/// Bounded like everything a device sends: the answer's body is at most ``maximumBytes``, and
/// the whole read (both attempts) ends by ``timeout``.
public struct DeviceInfoReader: Sendable {
    public var httpsPort = 8443
    public var httpPort = 8008
    public var maximumBytes = 64 * 1024
    public var timeout: Duration = .seconds(5)

    public init() {}

    /// Why a read failed: what each attempt met, for a log line.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var attempts: [String]
        public var description: String { attempts.joined(separator: "; ") }
    }

    /// The device's answer, from the first of HTTPS and HTTP that gives one.
    public func read(host: String, eventLoopGroup: any EventLoopGroup = .singletonMultiThreadedEventLoopGroup)
        async throws(Failure) -> CastDeviceInfo
    {
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        var attempts: [String] = []
        for (scheme, port) in [("https", httpsPort), ("http", httpPort)] {
            let url = "\(scheme)://\(Self.authority(host, port))\(CastDeviceInfo.path)"
            do {
                let body = try await fetch(
                    host: host, port: port, tls: scheme == "https", deadline: deadline, group: eventLoopGroup)
                guard let info = CastDeviceInfo(bytes: body) else {
                    attempts.append("\(url): the answer is not a JSON object")
                    continue
                }
                return info
            } catch {
                attempts.append("\(url): \(error)")
            }
            if NIODeadline.now() >= deadline || Task.isCancelled { break }
        }
        throw Failure(attempts: attempts)
    }

    static func authority(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private func fetch(host: String, port: Int, tls: Bool, deadline: NIODeadline, group: any EventLoopGroup)
        async throws -> [UInt8]
    {
        let remaining = deadline - .now()
        guard remaining > .zero else { throw ReadError("no time left") }
        let sslContext = tls ? try CastLink.tlsContext.get() : nil
        let eventLoop = group.any()
        let answer = eventLoop.makePromise(of: [UInt8].self)
        let limit = maximumBytes
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(remaining)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let sync = channel.pipeline.syncOperations
                        if let sslContext {
                            try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: nil))
                        }
                        try sync.addHTTPClientHandlers()
                        try sync.addHandler(DeviceInfoResponseHandler(answer: answer, limit: limit))
                    }
                }
                .connect(host: host, port: port).get()
        } catch {
            answer.fail(error)
            throw ReadError("cannot connect: \(error)")
        }
        let timer = channel.eventLoop.scheduleTask(deadline: deadline) {
            answer.fail(ReadError("no answer within \(timeout)"))
        }
        answer.futureResult.whenComplete { _ in
            timer.cancel()
            channel.close(promise: nil)
        }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: Self.authority(host, port))
        headers.add(name: "Accept", value: "application/json")
        headers.add(name: "Connection", value: "close")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: CastDeviceInfo.path, headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        return try await withTaskCancellationHandler {
            try await answer.futureResult.get()
        } onCancel: {
            answer.fail(CancellationError())
        }
    }

    struct ReadError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// Collects one HTTP response's body, up to a limit; anything but 200 is a failure.
private final class DeviceInfoResponseHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let answer: EventLoopPromise<[UInt8]>
    private let limit: Int
    private var body: [UInt8] = []

    init(answer: EventLoopPromise<[UInt8]>, limit: Int) {
        self.answer = answer
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            guard head.status == .ok else {
                answer.fail(DeviceInfoReader.ReadError("HTTP \(head.status.code)"))
                return
            }
            if let length = head.headers.first(name: "Content-Length").flatMap(Int.init), length > limit {
                answer.fail(DeviceInfoReader.ReadError("the answer is over \(limit) bytes"))
            }
        case .body(let buffer):
            guard body.count + buffer.readableBytes <= limit else {
                answer.fail(DeviceInfoReader.ReadError("the answer is over \(limit) bytes"))
                return
            }
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            answer.succeed(body)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        answer.fail(DeviceInfoReader.ReadError("\(error)"))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        answer.fail(DeviceInfoReader.ReadError("the device closed the connection before the answer's end"))
        context.fireChannelInactive()
    }
}
