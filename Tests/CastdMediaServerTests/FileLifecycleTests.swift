import CastTestSupport
import Foundation
import Testing

@testable import CastdMediaServer

/// Descriptors (closed after revoke and after each response), a file truncated while it is sent,
/// what the logs say, and shutdown.
@Suite struct FileLifecycleTests {
    /// A file truncated below what a response promised: the connection ends before the promised
    /// length (no crash, no hang, no spin), the response's lease is let go, and the server
    /// serves the file as it now is.
    @Test func truncationDuringADownloadEndsTheConnection() async throws {
        try await withMediaServer { fixture in
            let path = try makeSparseFile(fixture.directory, "growing.ts", size: 256 << 20)
            let token = try fixture.publish(path)
            let result = try await python(
                PythonClients.truncateWhileReading, ["\(fixture.port)", try fixture.path(token), path],
                directory: fixture.directory)
            expectSuccess(result)
            struct Outcome: Decodable {
                var length: Int
                var received: Int
                var end: String
            }
            let outcome = try JSONDecoder().decode(Outcome.self, from: Data(result.stdout.utf8))
            #expect(outcome.length == 256 << 20)
            #expect(outcome.received < outcome.length, "\(outcome)")
            try await eventually("the connection to close") { fixture.server.connectionCount == 0 }
            let now = try await curl(try fixture.url(token), [], directory: fixture.directory)
            #expect(now.status == 200 && now.body.count == 512 * 1024)
            try await eventually("the response's duplicate to close") { descriptorsOpen(on: path) == 1 }
        }
    }

    /// Each response's dup is closed when it ends; revoking closes the published descriptor.
    /// Counts this process's descriptors on the test's own files (/proc/self/fd), so that other
    /// tests' descriptors, opened meanwhile, do not count.
    @Test func descriptorsAreClosedAfterRevoke() async throws {
        try await withMediaServer { fixture in
            var files: [(path: String, token: MediaToken)] = []
            for index in 0..<20 {
                let (path, _) = try makeRandomFile(fixture.directory, "file\(index).mp3", size: 300_000)
                #expect(descriptorsOpen(on: path) == 0)
                files.append((path, try fixture.publish(path)))
            }
            for file in files { #expect(descriptorsOpen(on: file.path) == 1) }
            for file in files.prefix(5) {
                let response = try await curl(try fixture.url(file.token), [], directory: fixture.directory)
                #expect(response.status == 200 && response.body.count == 300_000)
            }
            try await eventually("each response's duplicate to close") {
                files.allSatisfy { descriptorsOpen(on: $0.path) == 1 }
            }
            for file in files { fixture.server.revoke(file.token) }
            for file in files { #expect(descriptorsOpen(on: file.path) == 0, "\(file.path)") }
            #expect(fixture.server.publishedCount == 0)
        }
    }

    /// Revoking a file while a response sends it: the response finishes (on its own duplicate),
    /// then no descriptor on the file is left; new requests get 404. (The reader holds its
    /// response open until the test says go: the file is larger than the sockets' buffers.)
    @Test func revokeDuringAResponse() async throws {
        try await withMediaServer { fixture in
            let (path, _) = try makeRandomFile(fixture.directory, "clip.mp4", size: 16 * 1024 * 1024)
            let token = try fixture.publish(path)
            let url = try fixture.url(token)
            let script = fixture.directory + "/hold.py"
            try PythonClients.holdThenRead.write(toFile: script, atomically: true, encoding: .utf8)
            let go = fixture.directory + "/go"
            let reader = try ChildProcess(
                "/usr/bin/python3", [script, "\(fixture.port)", try fixture.path(token), go, path, "\(testTimeScale)"],
                directory: fixture.directory)
            defer { reader.signal(SIGKILL) }
            try await eventually("the response to start") {
                try reader.checkRunning()
                return reader.stdout.contains("started")
            }
            #expect(descriptorsOpen(on: path) == 2)
            fixture.server.revoke(token)
            #expect(descriptorsOpen(on: path) == 1)
            #expect(try await curl(url, [], directory: fixture.directory).status == 404)
            #expect(FileManager.default.createFile(atPath: go, contents: nil))
            let status = try await reader.waitForExit(timeout: .seconds(60))
            #expect(status == 0 && reader.stdout.contains("ok"), "\(reader.stderr)")
            try await eventually("the response's duplicate to close") { descriptorsOpen(on: path) == 0 }
        }
    }

    /// Logs name a token by a short prefix at most, and never a file's path or name.
    @Test func logsHoldNoSecrets() async throws {
        let (logger, records) = RecordingLogHandler.logger("media")
        try await withMediaServer(logger: logger) { fixture in
            let (path, _) = try makeRandomFile(fixture.directory, "Private Holiday.mkv", size: 10_000)
            let token = try fixture.publish(path, name: path)
            let url = try fixture.url(token)
            _ = try await curl(url, ["-H", "Range: bytes=1-2"], directory: fixture.directory)
            _ = try await curl(url, ["-X", "POST"], directory: fixture.directory)
            _ = try await run("/usr/bin/curl", ["-s", "-H", "X-Big: " + String(repeating: "b", count: 20_000), url])
            fixture.server.revoke(token)
            _ = try await curl(url, [], directory: fixture.directory)
            let lines = records.all.map(\.line)
            #expect(!lines.isEmpty)
            for line in lines {
                #expect(!line.contains(token.hex) && !line.contains(token.hex.prefix(12)), "\(line)")
                #expect(!line.contains("Holiday") && !line.contains(fixture.directory), "\(line)")
            }
        }
    }

    @Test func shutdownClosesConnectionsAndDescriptors() async throws {
        try await withTemporaryDirectory { directory in
            let server = MediaServer(logger: .emulatorForTests(label: "media-server"))
            let port = try await server.listen(on: "127.0.0.1")
            let path = try makeSparseFile(directory, "big.mp4", size: 1 << 30)
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            let token = server.publish(descriptor: descriptor, name: "big.mp4", contentType: nil)
            let url = try #require(server.url(for: token, host: "127.0.0.1"))
            let download = Task {
                try await run("/usr/bin/curl", ["-s", "-o", "/dev/null", "--limit-rate", "1M", url])
            }
            try await eventually("the download to start") { server.connectionCount == 1 }
            await server.shutdown()
            #expect(server.connectionCount == 0 && server.publishedCount == 0)
            #expect(try await download.value.status != 0)  // cut short
            try await eventually("the descriptors to close") { descriptorsOpen(on: path) == 0 }
            await #expect(throws: MediaServerError.self) { try await server.listen(on: "127.0.0.1") }
            let late = server.publish(descriptor: open(path, O_RDONLY | O_CLOEXEC), name: "late.mp4", contentType: nil)
            #expect(descriptorsOpen(on: path) == 0 && server.url(for: late, host: "127.0.0.1") == nil)
            _ = port
        }
    }
}
