import CastdAPI
import CastdSupport
import Foundation
import NIOCore
import SwiftProtobuf

#if canImport(Glibc)
    import Glibc
#endif

/// A deliberately dumb castd.v1 peer on a blocking Unix socket: a client sending what CastClient
/// never would (unknown methods, garbage, oversized frames), or the daemon's end of a socket a
/// test answers by hand.
public final class RawSocket: @unchecked Sendable {
    // @unchecked: the fd is only read and written, never reassigned; a test reads it from one
    // thread at a time and writes it from one at a time.
    public let fd: Int32

    /// Connects to `path`; reads give up after 30 s (times `testTimeScale`).
    public init(path: String) throws {
        fd = try unixSocket(Int32(SOCK_STREAM.rawValue), path: path)
        // A deadline for a loaded machine, not a wait.
        var timeout = timeval(tv_sec: Int(30 * testTimeScale), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Takes over a connected socket (one `accept` returned), closing it when released.
    public init(fd: Int32) {
        self.fd = fd
    }

    deinit { close(fd) }

    public func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw POSIXError(.EPIPE) }
            offset += n
        }
    }

    public func send(_ frame: Castd_V1_Frame) throws {
        try write(Self.framed(frame))
    }

    /// `frame` as it travels: its length, then its bytes.
    public static func framed(_ frame: Castd_V1_Frame) throws -> [UInt8] {
        var buffer = ByteBuffer()
        try CastdRPC.write(frame, into: &buffer)
        return Array(buffer.readableBytesView)
    }

    /// Writes `body` as one frame.
    public func write(frameBody body: [UInt8]) throws {
        try write(Self.header(length: body.count) + body)
    }

    /// A frame's 4-byte big-endian length.
    public static func header(length: Int) -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt32(truncatingIfNeeded: length))
        return Array(buffer.readableBytesView)
    }

    public func start(callID: UInt64, method: String, request: some SwiftProtobuf.Message) throws {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        var start = Castd_V1_CallStart()
        start.method = method
        start.request = try request.serializedData()
        frame.start = start
        try send(frame)
    }

    /// Whether a read would return at once (data, or the end of the stream) rather than wait.
    public var isReadable: Bool {
        var poll = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return Glibc.poll(&poll, 1, 0) > 0
    }

    private func readExactly(_ count: Int) throws -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let n = out[offset...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return nil }
            guard n > 0 else {
                throw RawSocketTimeout(waited: offset == 0 && count == 4 ? "a frame" : "the rest of a frame")
            }
            offset += n
        }
        return out
    }

    /// The next frame, or nil once the daemon closed the connection. The blocking read runs
    /// on a thread of its own (`onThread`).
    public func receive() async throws -> Castd_V1_Frame? {
        try await onThread { try self.receiveBlocking() }
    }

    private func receiveBlocking() throws -> Castd_V1_Frame? {
        guard let body = try receiveBodyBlocking() else { return nil }
        return try Castd_V1_Frame(serializedBytes: body)
    }

    /// The next frame's body as it came, blocking; nil once the peer closed the connection.
    public func receiveBodyBlocking() throws -> [UInt8]? {
        guard let header = try readExactly(4) else { return nil }
        return try readExactly(header.reduce(0) { $0 << 8 | Int($1) })
    }
}

/// A read that got nothing for the socket's whole timeout (30 s times `testTimeScale`): the
/// other side neither wrote nor closed.
public struct RawSocketTimeout: Error, CustomStringConvertible {
    public var waited: String
    public var description: String {
        "a raw socket got neither \(waited) nor the end of the stream within \(Int(30 * testTimeScale)) s"
    }
}
