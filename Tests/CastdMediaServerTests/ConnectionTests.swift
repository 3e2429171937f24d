import CastTestSupport
import Testing

@testable import CastdMediaServer

/// Connections: keep-alive and `Connection: close`, many readers at once, and the limits
/// (head size, connections, requests per token, idle time), driven by Python clients.
@Suite struct ConnectionTests {
    @Test func keepAliveServesSeveralRequestsOnOneConnection() async throws {
        try await withMediaServer { fixture in
            let (path, _) = try makeRandomFile(fixture.directory, size: 64 * 1024)
            let token = try fixture.publish(path)
            let result = try await python(
                PythonClients.keepAlive, ["\(fixture.port)", try fixture.path(token), path],
                directory: fixture.directory)
            expectSuccess(result)
        }
    }

    @Test func hundredConcurrentRangeReadersAreByteExact() async throws {
        try await withMediaServer({ $0.maximumConnectionsPerToken = 100 }) { fixture in
            let (path, _) = try makeRandomFile(fixture.directory, size: 4 * 1024 * 1024)
            let token = try fixture.publish(path)
            let result = try await python(
                PythonClients.concurrentRanges, ["\(fixture.port)", try fixture.path(token), path, "100"],
                directory: fixture.directory, timeout: .seconds(180))
            expectSuccess(result)
            #expect(result.stdout.contains("ok 100"))
            try await eventually("the connections to close") { fixture.server.connectionCount == 0 }
        }
    }

    /// A 1 MiB head: 431 as soon as the limit is passed, the connection closed; the server
    /// serves on.
    @Test func oneMebibyteHeadIsRefused() async throws {
        try await withMediaServer { fixture in
            let (path, bytes) = try makeRandomFile(fixture.directory, size: 1000)
            let token = try fixture.publish(path)
            let result = try await python(
                PythonClients.hugeHead, ["\(fixture.port)", try fixture.path(token)], directory: fixture.directory)
            expectSuccess(result)
            #expect(result.stdout.hasPrefix("HTTP/1.1 431"), "\(result)")
            try await eventually("the connection to close") { fixture.server.connectionCount == 0 }
            #expect(try await curl(try fixture.url(token), [], directory: fixture.directory).body == bytes)
            // Just under the limit is fine.
            let header = "X-Pad: " + String(repeating: "p", count: 12 * 1024)
            let padded = try await curl(try fixture.url(token), ["-H", header], directory: fixture.directory)
            #expect(padded.status == 200)
        }
    }

    @Test func requestsPerTokenAreLimited() async throws {
        try await withMediaServer({ $0.maximumConnectionsPerToken = 3 }) { fixture in
            let big = try fixture.publish(try makeSparseFile(fixture.directory, "big.mp4", size: 1 << 30))
            let (small, _) = try makeRandomFile(fixture.directory, size: 100)
            let other = try fixture.publish(small)
            let result = try await python(
                PythonClients.perTokenLimit,
                ["\(fixture.port)", try fixture.path(big), try fixture.path(other), "3"], directory: fixture.directory)
            expectSuccess(result)
        }
    }

    @Test func connectionsAreLimited() async throws {
        try await withMediaServer({ $0.maximumConnections = 4 }) { fixture in
            let (path, _) = try makeRandomFile(fixture.directory, size: 100)
            let token = try fixture.publish(path)
            let result = try await python(
                PythonClients.connectionLimit, ["\(fixture.port)", try fixture.path(token), "4"],
                directory: fixture.directory)
            expectSuccess(result)
        }
    }

    /// A connection waiting for a request is closed after the idle timeout (and one that never
    /// asked, too).
    @Test func idleConnectionsAreClosed() async throws {
        try await withMediaServer({ $0.idleTimeout = .milliseconds(300) }) { fixture in
            let (path, _) = try makeRandomFile(fixture.directory, size: 100)
            let token = try fixture.publish(path)
            let result = try await python(
                PythonClients.idleClose, ["\(fixture.port)", try fixture.path(token)], directory: fixture.directory)
            expectSuccess(result)
            let waited = try #require(Double(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(waited >= 0.29, "closed \(waited) s after the request, before the idle timeout")
            try await eventually("the connections to close") { fixture.server.connectionCount == 0 }
        }
    }
}
