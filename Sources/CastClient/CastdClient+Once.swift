import CastdAPI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
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
        let path = CastdSocketPath.resolve(explicit: socketPath)
        var start = Castd_V1_CallStart()
        start.method = method.path
        var frame = Castd_V1_Frame()
        frame.callID = 1
        let body: [UInt8]
        do {
            start.request = try request.serializedData()
            frame.start = start
            body = try frame.serializedBytes()
        } catch {
            throw CastdError(.invalidArgument, "cannot encode \(Request.protoMessageName): \(error)")
        }
        let result: Result<Data, CastdError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    returning: Result { () throws(CastdError) -> Data in
                        try OneCall(path: path, method: method, maximumFrameLength: maximumFrameLength).run(body)
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
private struct OneCall {
    var path: String
    var method: CastdMethod
    var maximumFrameLength: Int

    func run(_ callFrame: [UInt8]) throws(CastdError) -> Data {
        let fd = try connect()
        defer { close(fd) }
        var length = UInt32(callFrame.count).bigEndian
        var bytes = withUnsafeBytes(of: &length) { Array($0) }
        bytes += callFrame
        // A write that fails is not the end: castd may have refused the connection, sent why
        // and closed; the status is still there to read.
        let written = write(bytes, to: fd)

        var response: Data?
        while true {
            guard let header = try read(4, from: fd) else { break }
            let size = header.reduce(0) { $0 << 8 | Int($1) }
            guard size <= maximumFrameLength else {
                throw CastdError(
                    .resourceExhausted,
                    "castd sent a frame of \(size) bytes, over this client's \(maximumFrameLength)-byte limit; connection closed")
            }
            guard let body = try read(size, from: fd) else { break }
            let frame: Castd_V1_Frame
            do {
                frame = try Castd_V1_Frame(serializedBytes: body)
            } catch {
                throw CastdError(.internal, "castd sent a malformed castd.v1 frame (\(error)); connection closed")
            }
            switch (frame.callID, frame.kind) {
            case (0, .status(let status)) where status.code != .ok:
                throw CastdError(status: status)
            case (1, .message(let data)):
                guard response == nil else {
                    throw CastdError(.internal, "castd sent more than one response to \(method.path)")
                }
                response = data
            case (1, .status(let status)):
                guard status.code == .ok else { throw CastdError(status: status) }
                guard let response else {
                    throw CastdError(.internal, "castd ended \(method.path) with OK but sent no response")
                }
                return response
            default:
                continue
            }
        }
        if let written { throw CastdError(.unavailable, "connection to castd lost: \(written)") }
        throw CastdConnection.connectionLost
    }

    private func connect() throws(CastdError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let utf8 = Array(path.utf8)
        guard !utf8.isEmpty, utf8.count < capacity else {
            throw CastdClient.connectError(why: "the path is too long for a Unix socket", path: path)
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
        guard fd >= 0 else { throw CastdClient.connectError(errno: errno, path: path) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw CastdClient.connectError(errno: code, path: path)
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

    /// Exactly `count` bytes, or nil if the connection ended first.
    private func read(_ count: Int, from fd: Int32) throws(CastdError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let n = buffer[offset...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return nil }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == ECONNRESET { return nil }
                throw CastdError(.unavailable, "connection to castd lost: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
        return buffer
    }
}
