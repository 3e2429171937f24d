import CastdAPI
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import LengthPrefixFraming
import NIOCore
import NIOPosix
import SwiftProtobuf

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A connection to castd, the Google Cast daemon, over its Unix socket.
///
/// One client carries any number of concurrent calls, multiplexed on one connection:
///
/// ```swift
/// let client = try await CastdClient.connect()
/// for device in try await client.listDevices() { print(device.friendlyName) }
/// try await client.load(CastdMediaInformation(url: "https://example.com/movie.mp4"))
/// await client.close()
/// ```
///
/// or, scoped, with the connection closed when the closure returns:
///
/// ```swift
/// try await CastdClient.withConnection { client in
///     for try await event in client.watch() { print(event) }
/// }
/// ```
///
/// castd closes a connection that opens no call within 30 s of connecting (its
/// `limits.idle_timeout_seconds`): connect when there is something to ask.
///
/// Every call fails with a ``CastdError``: the daemon's status (NOT_FOUND for an unknown
/// device, …), UNAVAILABLE when the connection is lost, CANCELLED when the calling task is
/// cancelled. Devices are named by a selector (an id, a friendly name, a host or host:port);
/// `""` lets the daemon choose: the one device with a session, else the only device.
public final class CastdClient: Sendable {
    /// The socket this client is connected to.
    public let socketPath: String

    let connection: CastdConnection
    private let channel: (any Channel)?

    init(socketPath: String, connection: CastdConnection, channel: (any Channel)?) {
        self.socketPath = socketPath
        self.connection = connection
        self.channel = channel
    }

    deinit {
        // A client nobody holds any more cannot be closed by anybody: close its connection.
        connection.shutdown(CastdError(.cancelled, "the CastdClient was released"))
        channel?.close(promise: nil)
    }

    // MARK: connecting

    /// Connects to castd.
    ///
    /// - Parameters:
    ///   - socketPath: The daemon's socket; `nil` finds it by the rules of ``CastdSocketPath``:
    ///     `$CASTD_SOCKET`, else `$XDG_RUNTIME_DIR/castd/castd.sock` if it is there, else
    ///     `/run/castd/castd.sock` if that is there.
    ///   - maximumFrameLength: The largest frame accepted from the daemon, and sent to it.
    /// - Returns: A connected client. Call ``close()`` when done with it (releasing the last
    ///   reference to it closes the connection too).
    /// - Throws: ``CastdError`` UNAVAILABLE "cannot connect to castd at PATH: <why> — is castd
    ///   running? …" when nobody listens there, PERMISSION_DENIED when the socket is not ours to
    ///   use.
    public static func connect(
        socketPath: String? = nil,
        maximumFrameLength: Int = CastdRPC.defaultMaximumFrameLength
    ) async throws -> CastdClient {
        try await open(socketPath: socketPath, maximumFrameLength: maximumFrameLength)
    }

    /// Connects to castd, runs `body` with the client, and closes the connection when `body`
    /// returns or throws.
    ///
    /// - Parameters:
    ///   - socketPath: As for ``connect(socketPath:maximumFrameLength:)``.
    ///   - maximumFrameLength: As for ``connect(socketPath:maximumFrameLength:)``.
    ///   - body: What to do with the connected client.
    public static func withConnection<Result>(
        socketPath: String? = nil,
        maximumFrameLength: Int = CastdRPC.defaultMaximumFrameLength,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (CastdClient) async throws -> Result
    ) async throws -> Result {
        let client = try await open(socketPath: socketPath, maximumFrameLength: maximumFrameLength)
        do {
            let result = try await body(client)
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }

    /// Ends the connection. Calls still open fail with CANCELLED; later calls fail at once.
    /// Returns once the connection is closed and SwiftNIO has let go of it.
    public func close() async {
        connection.shutdown(CastdError(.cancelled, "the connection to castd was closed by this client"))
        await channel?.closeAndLetGo()
    }

    private static func open(socketPath: String?, maximumFrameLength: Int) async throws(CastdError) -> CastdClient {
        guard maximumFrameLength > 0, maximumFrameLength <= Int(UInt32.max) else {
            throw CastdError(.invalidArgument, "maximumFrameLength \(maximumFrameLength) is not in 1…\(UInt32.max)")
        }
        let path = CastdSocketPath.resolve(explicit: socketPath)
        let connection = CastdConnection(maximumFrameLength: maximumFrameLength)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(LengthPrefixedFrameDecoder(maximumFrameLength: maximumFrameLength))
                        )
                        try channel.pipeline.syncOperations.addHandler(CastdClientHandler(connection: connection))
                    }
                }
                .connect(unixDomainSocketPath: path).get()
        } catch {
            throw CastdConnectError.make(error, path: path)
        }
        connection.attach(channel)
        return CastdClient(socketPath: path, connection: connection, channel: channel)
    }

    // MARK: calls

    /// Makes one unary call of castd.v1: sends `request` to `method` (a descriptor,
    /// `CastdMethods.pause`, which fixes the request's and the response's types) and returns the
    /// daemon's one response.
    ///
    /// The typed methods (``pause(device:)``, ``load(_:)``, …) are built on this.
    ///
    /// - Parameters:
    ///   - timeout: A deadline for the call, sent to the daemon and enforced here as well;
    ///     on expiry the call fails with DEADLINE_EXCEEDED. `nil`: none.
    /// - Throws: ``CastdError``: the daemon's status, or CANCELLED if the task is cancelled
    ///   (the daemon is told), or UNAVAILABLE if the connection is lost.
    public func unary<Request, Response>(
        _ method: CastdUnaryMethod<Request, Response>,
        _ request: Request,
        timeout: Duration? = nil
    ) async throws -> Response {
        try await unary(method.method, request, as: Response.self, timeout: timeout)
    }

    /// Opens a server-streaming call of castd.v1 (`CastdMethods.watch`): each iteration of the
    /// returned sequence sends `request` and yields the daemon's messages (see
    /// ``serverStream(_:_:as:)``).
    public func serverStream<Request, Response>(
        _ method: CastdServerStreamingMethod<Request, Response>,
        _ request: Request
    ) -> CastdServerStream<Response> {
        serverStream(method.method, request, as: Response.self)
    }

    /// Makes one unary call by the method's name: for methods newer than this library, which
    /// have no descriptor in `CastdMethods` yet.
    ///
    /// The typed methods (``listDevices()``, ``load(_:device:autoplay:startTime:)``, …) are
    /// built on this; use it for methods newer than this library.
    ///
    /// - Parameters:
    ///   - method: The method, e.g. `.load`. Streaming methods are refused (use ``watch()``).
    ///   - request: The method's request message.
    ///   - as: The method's response message type.
    ///   - timeout: A deadline for the call, sent to the daemon and enforced here as well;
    ///     on expiry the call fails with DEADLINE_EXCEEDED. `nil`: none.
    /// - Throws: ``CastdError``: the daemon's status, or CANCELLED if the task is cancelled
    ///   (the daemon is told), or UNAVAILABLE if the connection is lost.
    public func unary<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ method: CastdMethod,
        _ request: Request,
        as: Response.Type = Response.self,
        timeout: Duration? = nil
    ) async throws -> Response {
        guard !method.isStreaming else {
            let alternative =
                switch method {
                case .listen: "listen(device:namespace:)"
                case .streamLogs: "logs(recent:follow:)"
                default: "watch()"
                }
            throw CastdError(.invalidArgument, "\(method.path) is a streaming method; use \(alternative)")
        }
        try CastdValidation.check(request, for: method)
        let requestData: Data
        do {
            requestData = try request.serializedData()
        } catch {
            throw CastdError(.invalidArgument, "cannot encode \(Request.protoMessageName): \(error)")
        }
        if let timeout, timeout <= .zero {
            throw CastdError(.deadlineExceeded, "\(method.path): the deadline had passed before the call started")
        }
        let response = try await connection.unary(method: method.path, request: requestData, timeout: timeout)

        do {
            return try Response(serializedBytes: response)
        } catch {
            throw CastdError(
                .internal, "cannot decode the \(Response.protoMessageName) castd sent for \(method.path): \(error)")
        }
    }

    /// Watches the daemon: devices, sessions and media as they change.
    ///
    /// The sequence yields a `snapshot` event first, then every change (and `lagged` followed by
    /// a fresh snapshot if this watcher fell behind), until it is cancelled. Each iteration of it
    /// opens its own Watch call; ending the iteration (breaking out of the loop, or cancelling the
    /// task) cancels that call on the daemon. It ends by throwing ``CastdError`` if the daemon
    /// ends the stream with an error or the connection is lost.
    public func watch() -> CastdEventStream {
        serverStream(CastdMethods.watch, Castd_V1_WatchRequest())
    }

    /// Opens a server-streaming call: each iteration of the returned sequence sends `request` to
    /// `method` and yields the daemon's messages, decoded as `Response`, until the daemon ends the
    /// call (normally: the iteration ends; with an error: it throws ``CastdError``) or the
    /// iteration is abandoned, which cancels the call on the daemon.
    ///
    /// ``watch()`` and ``listen(device:namespace:)`` are built on this; use it for streaming
    /// methods newer than this library. Problems with the request itself (a unary method, a
    /// request that cannot be encoded) are thrown by the first `next()`.
    public func serverStream<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ method: CastdMethod,
        _ request: Request,
        as: Response.Type = Response.self
    ) -> CastdServerStream<Response> {
        guard method.isStreaming else {
            let error = CastdError(.invalidArgument, "\(method.path) is a unary method; use unary(_:_:as:timeout:)")
            return CastdServerStream(client: self, method: method, request: .failure(error))
        }
        do throws(CastdError) {
            try CastdValidation.check(request, for: method)
        } catch {
            return CastdServerStream(client: self, method: method, request: .failure(error))
        }
        do {
            return CastdServerStream(client: self, method: method, request: .success(try request.serializedData()))
        } catch {
            let error = CastdError(.invalidArgument, "cannot encode \(Request.protoMessageName): \(error)")
            return CastdServerStream(client: self, method: method, request: .failure(error))
        }
    }
}
