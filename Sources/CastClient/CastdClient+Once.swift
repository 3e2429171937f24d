import CastdAPI
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Dispatch
import LengthPrefixFraming
import NIOCore
import SwiftProtobuf

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension CastdClient {
    /// Makes one unary call on a connection of its own, and closes it: for a program that makes
    /// a single call and exits, as `castc status` or `castc pause` do.
    ///
    /// The call is the same castd.v1 call ``unary(_:_:as:timeout:)`` makes, with the same
    /// answers and errors, but on a plain blocking socket (on a Dispatch thread, not the caller's)
    /// instead of SwiftNIO's event loops: a process that makes one call does not need to start an
    /// event loop group, and starting one is a large part of what such a process does before it
    /// reaches castd (see "castc start-up" in BENCHMARKS.md).
    ///
    /// - Parameters:
    ///   - socketPath: castd's socket; `nil` resolves it as ``connect(socketPath:maximumFrameLength:)`` does.
    ///   - method: A unary method.
    /// - Throws: ``CastdError``: castd's status when it ends the call (or refuses the connection)
    ///   with an error; UNAVAILABLE when it cannot be reached or the connection ends first.
    public static func unaryOnce<Request, Response>(
        socketPath: String? = nil,
        _ method: CastdUnaryMethod<Request, Response>,
        _ request: Request,
        maximumFrameLength: Int = CastdRPC.defaultMaximumFrameLength
    ) async throws(CastdError) -> Response {
        try await unaryOnce(
            socketPath: socketPath, method.method, request, as: Response.self, maximumFrameLength: maximumFrameLength)
    }

    /// ``unaryOnce(socketPath:_:_:maximumFrameLength:)`` by the method's name: for methods newer
    /// than this library.
    public static func unaryOnce<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        socketPath: String? = nil,
        _ method: CastdMethod,
        _ request: Request,
        as: Response.Type = Response.self,
        maximumFrameLength: Int = CastdRPC.defaultMaximumFrameLength
    ) async throws(CastdError) -> Response {
        guard !method.isStreaming else {
            throw CastdError(.invalidArgument, "\(method.path) is a streaming method; unaryOnce makes unary calls")
        }
        try CastdValidation.check(request, for: method)
        let path = CastdSocketPath.resolve(explicit: socketPath)
        let requestData: Data
        do {
            requestData = try request.serializedData()
        } catch {
            throw CastdError(.invalidArgument, "cannot encode \(Request.protoMessageName): \(error)")
        }
        let frame = try CastdConnection.startFrame(
            method: method.path, request: requestData, timeout: nil, maximumFrameLength: maximumFrameLength)
        let result: Result<Data, CastdError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    returning: Result { () throws(CastdError) -> Data in
                        try OneCall(path: path, method: method, maximumFrameLength: maximumFrameLength).run(frame)
                    })
            }
        }
        let response = try result.get()
        do {
            return try Response(serializedBytes: response)
        } catch {
            throw CastdError(
                .internal, "cannot decode the \(Response.protoMessageName) castd sent for \(method.path): \(error)")
        }
    }
}

/// One call on a blocking Unix socket: connect, write the call, read frames until its status.
/// The framing and the call's states are the connection's own (`CastdRPC`,
/// `LengthPrefixedFrameDecoder`, `CastdCallTable`); only the I/O is blocking.
private struct OneCall {
    var path: String
    var method: CastdMethod
    var maximumFrameLength: Int

    func run(_ startFrame: Castd_V1_Frame) throws(CastdError) -> Data {
        var table = CastdCallTable<Void>()
        var frame = startFrame
        frame.callID = try table.open(method: method.path, kind: .unary, receiver: ())
        var outgoing = ByteBufferAllocator().buffer(capacity: 64)
        do {
            try CastdRPC.write(frame, into: &outgoing)
        } catch {
            throw CastdError(.invalidArgument, "cannot encode the \(method.path) call: \(error)")
        }

        let fd = try connect()
        defer { close(fd) }
        // A write that fails is not the end: castd may have refused the connection, sent why
        // and closed; the status is still there to read.
        let writeFailure = write(Array(outgoing.readableBytesView), to: fd)

        var incoming = ByteBufferAllocator().buffer(capacity: 4096)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            do {
                while let body = try LengthPrefixedFrameDecoder.nextFrame(
                    from: &incoming, maximumFrameLength: maximumFrameLength)
                {
                    for effect in table.receive(try CastdConnection.decode(body)) {
                        switch effect {
                        case .finish(_, _, .response(let response)): return response
                        case .finish(_, _, .failed(let error)): throw error
                        case .finish(_, _, .ended), .deliver, .sendCancel: continue
                        }
                    }
                }
            } catch let error as CastdError {
                throw error
            } catch {
                throw CastdConnection.readError(error)
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                incoming.writeBytes(chunk[..<n])
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                // The end of the connection (or a reset, after which nothing more can be read).
                let lost =
                    writeFailure.map { CastdError(.unavailable, "connection to castd lost: \($0)") }
                    ?? CastdConnection.connectionLost
                for case .finish(_, _, .failed(let error)) in table.close(with: lost) { throw error }
                throw lost
            }
        }
    }

    private func connect() throws(CastdError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let utf8 = Array(path.utf8)
        guard !utf8.isEmpty, utf8.count < capacity else {
            throw CastdConnectError.make(why: "the path is too long for a Unix socket", path: path)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: utf8)
            raw[utf8.count] = 0
        }
        #if canImport(Darwin)
            let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        #else
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #endif
        guard fd >= 0 else { throw CastdConnectError.make(errno: errno, path: path) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw CastdConnectError.make(errno: code, path: path)
        }
        return fd
    }

    /// Writes everything; returns why it could not, if it could not.
    private func write(_ bytes: [UInt8], to fd: Int32) -> String? {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            offset += n
        }
        return nil
    }
}
