import CastTestSupport
import Testing

@testable import CastdMediaServer

/// Byte ranges, whole bodies and HEAD, fetched with curl and compared byte for byte with the file.
@Suite struct RangeRequestTests {
    @Test func rangesAreServedByteExact() async throws {
        try await withMediaServer { fixture in
            let size = 3 * 1024 * 1024 + 17
            let (path, bytes) = try makeRandomFile(fixture.directory, "clip.mp4", size: size)
            let url = try fixture.url(try fixture.publish(path))
            let cases: [(range: String, first: Int, last: Int)] = [
                ("bytes=0-0", 0, 0),
                ("bytes=100-1099", 100, 1099),
                ("bytes=1048576-", 1_048_576, size - 1),
                ("bytes=0-", 0, size - 1),
                ("bytes=-4096", size - 4096, size - 1),
                ("bytes=-99999999", 0, size - 1),
                ("bytes=\(size - 10)-\(size + 1000)", size - 10, size - 1),
            ]
            for item in cases {
                let response = try await curl(url, ["-H", "Range: \(item.range)"], directory: fixture.directory)
                #expect(response.status == 206, "\(item.range): \(response)")
                #expect(
                    response.headers["content-range"] == "bytes \(item.first)-\(item.last)/\(size)", "\(item.range)")
                #expect(response.headers["content-length"] == "\(item.last - item.first + 1)", "\(item.range)")
                #expect(response.body == Array(bytes[item.first...item.last]), "\(item.range)")
                #expect(response.headers["accept-ranges"] == "bytes")
            }
        }
    }

    @Test func wholeFileAndIgnoredRanges() async throws {
        try await withMediaServer { fixture in
            let (path, bytes) = try makeRandomFile(fixture.directory, size: 2 * 1024 * 1024 + 3)
            let url = try fixture.url(try fixture.publish(path))
            // No Range, a malformed one, several ranges: the whole file with 200 (RFC 9110 §14.2).
            for extra in [
                [], ["-H", "Range: bytes=9-1"], ["-H", "Range: bytes=0-1,5-9"], ["-H", "Range: pages=1-2"],
            ] {
                let response = try await curl(url, extra, directory: fixture.directory)
                #expect(response.status == 200, "\(extra): \(response)")
                #expect(response.headers["content-length"] == "\(bytes.count)")
                #expect(response.headers["content-range"] == nil)
                #expect(response.body == bytes, "\(extra)")
            }
        }
    }

    @Test func headSaysWhatGetWouldSend() async throws {
        try await withMediaServer { fixture in
            let (path, bytes) = try makeRandomFile(fixture.directory, size: 1_000_003)
            let url = try fixture.url(try fixture.publish(path, contentType: "video/mp4"))
            let whole = try await curl(url, ["-I"], directory: fixture.directory)
            #expect(whole.status == 200)
            #expect(whole.headers["content-length"] == "\(bytes.count)")
            #expect(whole.headers["content-type"] == "video/mp4")
            // (No body after a HEAD answer: PythonClients.keepAlive asks more on the same connection.)
            let part = try await curl(url, ["-I", "-H", "Range: bytes=-10"], directory: fixture.directory)
            #expect(part.status == 206)
            #expect(part.headers["content-range"] == "bytes \(bytes.count - 10)-\(bytes.count - 1)/\(bytes.count)")
            #expect(part.headers["content-length"] == "10")
        }
    }

    @Test func unsatisfiableRangeIs416WithTheSize() async throws {
        try await withMediaServer { fixture in
            let (path, bytes) = try makeRandomFile(fixture.directory, size: 5000)
            let url = try fixture.url(try fixture.publish(path))
            for range in ["bytes=5000-", "bytes=6000-7000", "bytes=-0"] {
                let response = try await curl(url, ["-H", "Range: \(range)"], directory: fixture.directory)
                #expect(response.status == 416, "\(range): \(response)")
                #expect(response.headers["content-range"] == "bytes */\(bytes.count)")
                #expect(response.body.isEmpty)
            }
            // An empty file has no satisfiable range, and a whole body of nothing.
            let empty = try fixture.publish(try makeSparseFile(fixture.directory, "empty", size: 0))
            let ranged = try await curl(
                try fixture.url(empty), ["-H", "Range: bytes=0-"], directory: fixture.directory)
            #expect(ranged.status == 416 && ranged.headers["content-range"] == "bytes */0")
            let whole = try await curl(try fixture.url(empty), [], directory: fixture.directory)
            #expect(whole.status == 200 && whole.headers["content-length"] == "0" && whole.body.isEmpty)
        }
    }

    /// The size is fstat'ed per request: a file that shrinks or grows between requests (same
    /// descriptor) is served as it is now. The 1 GiB file is sparse.
    @Test func sizeIsReadPerRequest() async throws {
        try await withMediaServer { fixture in
            let gib = 1 << 30
            let path = try makeSparseFile(fixture.directory, "big.mkv", size: gib)
            let url = try fixture.url(try fixture.publish(path))
            let tail = try await curl(url, ["-H", "Range: bytes=-16"], directory: fixture.directory)
            #expect(tail.status == 206 && tail.headers["content-range"] == "bytes \(gib - 16)-\(gib - 1)/\(gib)")
            #expect(tail.body == [UInt8](repeating: 0, count: 16))
            let head = try await curl(url, ["-I"], directory: fixture.directory)
            #expect(head.headers["content-length"] == "\(gib)")

            let (_, replaced) = try makeRandomFile(fixture.directory, "big.mkv.new", size: 4096)
            try rewriteFile(path, with: replaced)
            let now = try await curl(url, [], directory: fixture.directory)
            #expect(now.status == 200 && now.body == replaced)
            let beyond = try await curl(url, ["-H", "Range: bytes=\(gib - 16)-"], directory: fixture.directory)
            #expect(beyond.status == 416 && beyond.headers["content-range"] == "bytes */4096")
        }
    }
}
