import CastTestSupport
import CastdAPI
import Foundation
import SwiftProtobuf

#if canImport(Glibc)
import Glibc
#endif

/// A deliberately dumb castd.v1 peer on a blocking Unix socket, for sending what CastClient
/// never would (unknown methods, garbage, oversized frames).
final class RawSocket: @unchecked Sendable {
    // @unchecked: used by one test at a time; the fd is only read and written, never reassigned.
    let fd: Int32

    init(path: String) throws {
        fd = try unixSocket(Int32(SOCK_STREAM.rawValue), path: path)
        var timeout = timeval(tv_sec: 30, tv_usec: 0)  // a deadline for a loaded machine, not a wait
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw POSIXError(.EPIPE) }
            offset += n
        }
    }

    func send(_ frame: Castd_V1_Frame) throws {
        let body: [UInt8] = try frame.serializedBytes()
        var header = [UInt8](repeating: 0, count: 4)
        let length = UInt32(body.count)
        header[0] = UInt8(length >> 24)
        header[1] = UInt8((length >> 16) & 0xFF)
        header[2] = UInt8((length >> 8) & 0xFF)
        header[3] = UInt8(length & 0xFF)
        try write(header + body)
    }

    func start(callID: UInt64, method: String, request: some SwiftProtobuf.Message) throws {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        var start = Castd_V1_CallStart()
        start.method = method
        start.request = try request.serializedData()
        frame.start = start
        try send(frame)
    }

    private func readExactly(_ count: Int) throws -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let n = out[offset...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return nil }
            guard n > 0 else { throw POSIXError(.ETIMEDOUT) }
            offset += n
        }
        return out
    }

    /// The next frame, or nil once the daemon closed the connection. The blocking read runs
    /// on a Dispatch thread: blocking a cooperative-pool thread could starve the daemon's tasks.
    func receive() async throws -> Castd_V1_Frame? {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try self.receiveBlocking() })
            }
        }
    }

    private func receiveBlocking() throws -> Castd_V1_Frame? {
        guard let header = try readExactly(4) else { return nil }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard let body = try readExactly(length) else { return nil }
        return try Castd_V1_Frame(serializedBytes: body)
    }
}
