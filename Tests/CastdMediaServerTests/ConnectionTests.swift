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

    /// A reader that takes one byte at a time, slower than any TV, of a 1 GiB file: the server
    /// hands its connection what the socket buffers and the write-buffer high-water mark hold
    /// (file regions, never the file's bytes in memory), and no more however long it reads.
    @Test func aSlowReaderHoldsBoundedBuffers() async throws {
        try await withMediaServer { fixture in
            let big = try fixture.publish(try makeSparseFile(fixture.directory, "big.mp4", size: 1 << 30))
            let ticks = 60
            async let reader = python(
                PythonClients.slowReader, ["\(fixture.port)", try fixture.path(big), "\(ticks)"],
                directory: fixture.directory)
            try await eventually("the reader's response to start") { fixture.server.bytesQueued > 0 }
            var most = 0
            var samples = 0
            while fixture.server.connectionCount > 0 {
                most = max(most, fixture.server.bytesQueued)
                samples += 1
                try await Task.sleep(for: .milliseconds(20))
            }
            let result = try await reader
            expectSuccess(result)
            #expect(result.stdout.hasPrefix("ok"), "\(result)")
            // Loopback's socket buffers take a few MiB at most; NIO holds 1 MiB of regions, and
            // one chunk more. A server that queued the file would reach 1 GiB.
            #expect(most > 0 && most <= 8 << 20, "\(most) bytes queued for a reader that took \(ticks)")
            #expect(samples > 1)
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
