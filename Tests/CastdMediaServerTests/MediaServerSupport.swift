import CastTestSupport
import Foundation
import Logging
import Testing

@testable import CastdMediaServer

#if canImport(Glibc)
    import Glibc
#endif

/// A running media server on 127.0.0.1 and a temporary directory for a test's files.
struct MediaFixture {
    let server: MediaServer
    let port: Int
    let directory: String

    /// The URL of `token` on 127.0.0.1.
    func url(_ token: MediaToken) throws -> String {
        try #require(server.url(for: token, host: "127.0.0.1"))
    }

    /// The path of `token`'s URL ("/<hex>.ext").
    func path(_ token: MediaToken) throws -> String {
        let url = try self.url(token)
        return String(url.dropFirst("http://127.0.0.1:\(port)".count))
    }

    /// Publishes the file at `path`, opened for reading.
    func publish(_ path: String, name: String? = nil, contentType: String? = nil) throws -> MediaToken {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        try #require(descriptor >= 0, "open \(path): errno \(errno)")
        return server.publish(
            descriptor: descriptor, name: name ?? (path as NSString).lastPathComponent, contentType: contentType)
    }
}

/// Runs `body` with a media server listening on 127.0.0.1 (shut down afterwards).
func withMediaServer<T>(
    logger: Logger = Logger.emulatorForTests(label: "media-server"),
    _ configure: (inout MediaServerConfiguration) -> Void = { _ in },
    _ body: (MediaFixture) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        var configuration = MediaServerConfiguration()
        configure(&configuration)
        let server = MediaServer(configuration: configuration, logger: logger)
        do {
            let port = try await server.listen(on: "127.0.0.1")
            let result = try await body(MediaFixture(server: server, port: port, directory: directory))
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }
}

/// A file of `size` random bytes at `directory/name`; its bytes.
@discardableResult
func makeRandomFile(_ directory: String, _ name: String = "media.bin", size: Int) throws -> (
    path: String, bytes: [UInt8]
) {
    var generator = SystemRandomNumberGenerator()
    var bytes = [UInt8](repeating: 0, count: size)
    bytes.withUnsafeMutableBytes { raw in
        let words = raw.count / 8
        for index in 0..<words {
            raw.storeBytes(of: generator.next() as UInt64, toByteOffset: index * 8, as: UInt64.self)
        }
        for index in (words * 8)..<raw.count { raw[index] = UInt8.random(in: 0...255, using: &generator) }
    }
    let path = directory + "/" + name
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return (path, bytes)
}

/// A sparse file of `size` bytes (ftruncate: no blocks, reads as zeros).
func makeSparseFile(_ directory: String, _ name: String, size: Int) throws -> String {
    let path = directory + "/" + name
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    try #require(ftruncate(descriptor, off_t(size)) == 0)
    return path
}

/// One answer, as curl saw it.
struct CurlResponse: CustomStringConvertible {
    var status: Int
    /// Header fields by lowercased name (the last of each name).
    var headers: [String: String]
    var body: [UInt8]
    var description: String { "\(status) \(headers.sorted { $0.key < $1.key }) body: \(body.count) bytes" }
}

/// Runs curl for `url` with `arguments` (e.g. ["-H", "Range: bytes=0-9"], ["-I"], ["-X", "POST"]).
func curl(_ url: String, _ arguments: [String] = [], directory: String) async throws -> CurlResponse {
    let tag = String(UInt64.random(in: 0...UInt64.max), radix: 36)
    let headerPath = directory + "/curl-\(tag).head"
    let bodyPath = directory + "/curl-\(tag).body"
    defer {
        try? FileManager.default.removeItem(atPath: headerPath)
        try? FileManager.default.removeItem(atPath: bodyPath)
    }
    let seconds = Int(30 * testTimeScale)
    let result = try await run(
        "/usr/bin/curl",
        ["--silent", "--show-error", "--max-time", "\(seconds)", "-D", headerPath, "-o", bodyPath] + arguments + [url],
        timeout: .seconds(40))
    try #require(result.status == 0, "\(result)")
    let head = try String(contentsOfFile: headerPath, encoding: .utf8)
    let lines = head.components(separatedBy: "\r\n")
    let statusLine = lines.first?.split(separator: " ") ?? []
    let status = try #require(statusLine.count >= 2 ? Int(statusLine[1]) : nil, "status line: \(head)")
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    let body = (try? Data(contentsOf: URL(fileURLWithPath: bodyPath))).map { [UInt8]($0) } ?? []
    return CurlResponse(status: status, headers: headers, body: body)
}

/// Runs one of ``PythonClients``' scripts with `arguments`; its result (exit 0 expected by callers).
func python(_ script: String, _ arguments: [String], directory: String, timeout: Duration = .seconds(120))
    async throws -> CommandResult
{
    let path = directory + "/client-\(String(UInt64.random(in: 0...UInt64.max), radix: 36)).py"
    try script.write(toFile: path, atomically: true, encoding: .utf8)
    return try await run("/usr/bin/python3", [path] + arguments + ["\(testTimeScale)"], timeout: timeout)
}

/// Descriptors of this process (/proc/self/fd) open on `path`.
func descriptorsOpen(on path: String) -> Int {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return entries.filter { entry in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry)) == path
    }.count
}

/// Rewrites the file at `path` in place (the same inode: what a published descriptor reads changes).
func rewriteFile(_ path: String, with bytes: [UInt8]) throws {
    try rewriteFile(path, creating: bytes, flags: 0)
}

/// Writes `bytes` to the file at `path`, made if it is not there (truncated if it is).
func rewriteFile(_ path: String, creating bytes: [UInt8], flags: Int32 = O_CREAT) throws {
    let descriptor = open(path, O_WRONLY | O_CLOEXEC | flags, 0o600)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    try #require(ftruncate(descriptor, 0) == 0)
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    try #require(written == bytes.count)
}

/// Whether this host can bind ::1 (a container may have no IPv6).
func ipv6LoopbackAvailable() -> Bool {
    let descriptor = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_addr = in6addr_loopback
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
        }
    }
}
