import CastdSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Figure 11's floor: the least a server can do to send a file over loopback, a blocking loop of
/// `sendfile(2)` on a thread of the bench, one connection at a time, no HTTP beyond a minimal
/// head. What castd spends above it is castd's own; what it does not is the kernel's (TCP over
/// loopback, and on a virtual machine the hypervisor's share).
final class SendfileFloor: Sendable {
    let port: Int
    private let listener: Int32
    /// The CPU time (user and system) the loop's thread spent on each connection, in seconds.
    private let spent = Locked<[Double]>([])

    init(path: String) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw BenchError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && listen(socket, 16) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else {
            close(socket)
            throw BenchError("the sendfile floor cannot listen: errno \(errno)")
        }
        listener = socket
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in serve(path) }
    }

    /// The CPU time the last connection took.
    var lastCPUSeconds: Double { spent.withLock { $0.last ?? 0 } }

    /// Stops listening (the thread's next accept fails, and it ends).
    func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

    private func serve(_ path: String) {
        defer { close(listener) }
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            let before = Self.threadCPU()
            send(path, on: connection)
            close(connection)
            let after = Self.threadCPU()
            spent.withLock { $0.append(after - before) }
        }
    }

    private func send(_ path: String, on connection: Int32) {
        var request = [UInt8](repeating: 0, count: 4096)
        guard recv(connection, &request, request.count, 0) > 0 else { return }
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0 else { return }
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: \(status.st_size)\r\nConnection: close\r\n\r\n".utf8)
        guard Glibc.send(connection, head, head.count, Int32(MSG_NOSIGNAL)) == head.count else { return }
        var offset = off_t(0)
        while offset < status.st_size {
            guard sendfile(connection, file, &offset, Int(status.st_size - offset)) > 0 else { return }
        }
    }

    /// This thread's CPU time, user and system, in seconds.
    private static func threadCPU() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
