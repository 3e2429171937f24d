import CastdSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Figure 11's reader: fetches a loopback URL whole and throws its body away in the kernel
/// (`recv` with `MSG_TRUNC`, which TCP takes as "discard", copying nothing), so that what is
/// measured is the server. curl, which copies every byte into its buffer and writes it to
/// /dev/null, was the bottleneck for both servers (they measured within 10% of each other, and of a
/// bare C sendfile loop).
enum DiscardingReader {
    /// Reads `url` (`http://IPv4:PORT/PATH`) whole; returns the body's length.
    static func read(_ url: String) throws -> Int {
        guard let parsed = URL(string: url), parsed.scheme == "http", let host = parsed.host, let port = parsed.port
        else { throw BenchError("not a loopback http URL: \(url)") }
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw BenchError("socket: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw BenchError("not an IPv4 address: \(host)") }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw BenchError("connect \(url): errno \(errno)") }
        let request = Array("GET \(parsed.path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard send(socket, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else {
            throw BenchError("send \(url): errno \(errno)")
        }
        // The head, and whatever of the body came with it.
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var bodyStart: Int?
        while bodyStart == nil {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { throw BenchError("\(url) closed before its head ended") }
            head += buffer.prefix(count)
            bodyStart = head.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound
            guard head.count < 16 * 1024 || bodyStart != nil else { throw BenchError("\(url): a head over 16 KiB") }
        }
        let text = String(decoding: head.prefix(bodyStart!), as: UTF8.self)
        guard text.hasPrefix("HTTP/1.") && text.dropFirst(9).hasPrefix("200") else {
            throw BenchError("\(url) answered \(text.prefix { $0 != "\r" })")
        }
        guard
            let line = text.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { throw BenchError("\(url) sent no Content-Length") }
        var received = head.count - bodyStart!
        while received < length {
            let count = recv(socket, nil, min(length - received, 1 << 30), Int32(MSG_TRUNC))
            guard count > 0 else { throw BenchError("\(url) ended after \(received) of \(length) bytes") }
            received += count
        }
        return received
    }
}
