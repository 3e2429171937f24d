import CastdAPI
import CastdSupport
import SwiftProtobuf

#if canImport(Glibc)
    import Glibc
#endif

/// A connection to castd's files socket (rpc.proto: "The files socket"): hands castd open
/// descriptors of files this process opened, and gets a handle for each to load it by
/// (`CastdMediaInformation.file`). castd never opens a path: the files are read with this
/// process's permissions, as it opened them.
///
/// Keep the connection open until the calls that name the handles have been answered: castd
/// lets go of handles no call took when it closes.
public final class CastdFileHandover: Sendable {
    /// Descriptors in one request (castd's bound).
    public static let batch = FilesSocketProtocol.descriptorsPerRequest
    /// Handles one connection may hold that no call has taken yet (castd's bound).
    public static let maximumUntaken = FilesSocketProtocol.untakenPerConnection
    let fd: Int32
    public let path: String

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { Glibc.close(fd) }

    /// Connects to the files socket beside castd's socket at `socketPath` (default: as
    /// `CastdClient` finds it).
    public static func connect(socketPath: String? = nil) throws(CastdError) -> CastdFileHandover {
        let path = CastdSocketPath.files(forSocket: CastdSocketPath.resolve(explicit: socketPath))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw CastdError(.invalidArgument, "castd's files socket path \(path) is too long for a Unix socket")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CastdError(.unavailable, "cannot make a socket: \(Errno.current)") }
        // Each answer comes at once: a castd that takes longer is stuck, not busy.
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let error = Errno.current
            Glibc.close(fd)
            let hint =
                error.code == ENOENT || error.code == ECONNREFUSED
                ? "; is castd running, and new enough to take files?" : ""
            throw CastdError(.unavailable, "cannot reach castd's files socket at \(path): \(error)\(hint)")
        }
        return CastdFileHandover(fd: fd, path: path)
    }

    /// Hands `files` (open descriptors, and the names castd may show) to castd, in requests of
    /// at most `batch`; their handles, in order. The descriptors stay this process's to close.
    public func handOver(_ files: [(descriptor: Int32, name: String)]) throws(CastdError) -> [String] {
        var handles: [String] = []
        var start = 0
        while start < files.count {
            let part = files[start..<min(start + Self.batch, files.count)]
            handles += try request(Array(part))
            start += part.count
        }
        return handles
    }

    private func request(_ files: [(descriptor: Int32, name: String)]) throws(CastdError) -> [String] {
        var request = Castd_V1_FileHandover()
        request.names = files.map(\.name)
        let body: [UInt8]
        do { body = try request.serializedBytes() } catch {
            throw CastdError(.internal, "cannot encode a FileHandover: \(error)")
        }
        var frame = FilesSocketProtocol.prefix(body.count)
        frame += body
        var sent = 0
        var descriptors = files.map(\.descriptor)
        while sent < frame.count {
            switch UnixRights.send(fd, Array(frame[sent...]), descriptors: descriptors) {
            case .success(let count):
                sent += count
                descriptors = []  // they went with the first byte
            case .failure(let error) where error.code == EINTR:
                continue
            case .failure(let error):
                throw CastdError(.unavailable, "cannot hand files to castd at \(path): \(error)")
            }
        }
        let response = try readResponse()
        if response.hasStatus, response.status.code != .ok { throw CastdError(status: response.status) }
        guard response.handles.count == files.count else {
            throw CastdError(
                .internal, "castd answered \(response.handles.count) handles for \(files.count) files handed over")
        }
        return response.handles
    }

    private func readResponse() throws(CastdError) -> Castd_V1_FileHandoverResponse {
        let header = try read(4)
        let length = FilesSocketProtocol.length(header)
        guard length <= 1 << 20 else {
            throw CastdError(.internal, "castd's files socket answered a frame of \(length) bytes")
        }
        let body = try read(length)
        do {
            return try Castd_V1_FileHandoverResponse(serializedBytes: body)
        } catch {
            throw CastdError(.internal, "castd's files socket answered something that is not a response: \(error)")
        }
    }

    private func read(_ count: Int) throws(CastdError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, count - got, 0) }
            if n > 0 {
                got += n
            } else if n == 0 {
                throw CastdError(.unavailable, "castd closed its files socket before it answered")
            } else if errno != EINTR {
                let error = Errno.current
                let what = error.code == EAGAIN ? "did not answer within 10 s" : "\(error)"
                throw CastdError(.unavailable, "castd's files socket at \(path) \(what)")
            }
        }
        return bytes
    }
}
