import CastTestSupport
import Testing

@testable import CastdMediaServer

/// What every answer about a file says (CORS, Accept-Ranges, Content-Type), methods, unknown
/// and revoked tokens, URLs.
@Suite struct MethodAndHeaderTests {
    @Test func corsHeadersAndPreflight() async throws {
        try await withMediaServer { fixture in
            let (path, _) = try makeRandomFile(fixture.directory, "song.flac", size: 10_000)
            let url = try fixture.url(try fixture.publish(path))
            for extra in [[], ["-I"], ["-H", "Range: bytes=1-2"], ["-H", "Range: bytes=99999-"], ["-X", "DELETE"]] {
                let response = try await curl(
                    url, ["-H", "Origin: https://receiver.example"] + extra, directory: fixture.directory)
                #expect(response.headers["access-control-allow-origin"] == "*", "\(extra): \(response)")
                #expect(
                    response.headers["access-control-expose-headers"] == "Content-Length, Content-Range", "\(extra)")
                #expect(response.headers["accept-ranges"] == "bytes", "\(extra)")
            }
            let preflight = try await curl(
                url,
                [
                    "-X", "OPTIONS", "-H", "Origin: https://receiver.example", "-H",
                    "Access-Control-Request-Method: GET",
                    "-H", "Access-Control-Request-Headers: range",
                ], directory: fixture.directory)
            #expect(preflight.status == 204, "\(preflight)")
            #expect(preflight.headers["access-control-allow-origin"] == "*")
            #expect(preflight.headers["access-control-allow-methods"] == "GET, HEAD, OPTIONS")
            #expect(preflight.headers["access-control-allow-headers"] == "Range")
            #expect(preflight.body.isEmpty)
        }
    }

    @Test func otherMethodsAre405() async throws {
        try await withMediaServer { fixture in
            let (path, _) = try makeRandomFile(fixture.directory, size: 1000)
            let url = try fixture.url(try fixture.publish(path))
            for method in ["POST", "PUT", "DELETE", "PATCH"] {
                let response = try await curl(url, ["-X", method], directory: fixture.directory)
                #expect(response.status == 405, "\(method): \(response)")
                #expect(response.headers["allow"] == "GET, HEAD")
                #expect(response.body.isEmpty)
            }
            // A body with it: answered, then the connection closed (the body is not read).
            let posted = try await curl(
                url, ["-X", "POST", "--data-binary", "some body"], directory: fixture.directory)
            #expect(posted.status == 405 && posted.headers["connection"] == "close", "\(posted)")
        }
    }

    @Test func unknownAndRevokedTokensAre404() async throws {
        try await withMediaServer { fixture in
            let (path, bytes) = try makeRandomFile(fixture.directory, "clip.webm", size: 4096)
            let token = try fixture.publish(path)
            let url = try fixture.url(token)
            let base = "http://127.0.0.1:\(fixture.port)"
            #expect(try await curl(url, [], directory: fixture.directory).body == bytes)
            // Any extension, and a query, name the same file.
            #expect(try await curl("\(base)/\(token.hex).mp3?t=1", [], directory: fixture.directory).status == 200)
            for wrong in [
                "/", "/\(MediaToken.random().hex).webm", "/\(token.hex.dropLast())", "/\(token.hex)0",
                "/\(token.hex)/x",
                "/index.html", "/\(token.hex.prefix(8))",
            ] {
                let response = try await curl(base + wrong, [], directory: fixture.directory)
                #expect(response.status == 404, "\(wrong): \(response)")
                #expect(response.body.isEmpty)
            }
            #expect(fixture.server.publishedCount == 1)
            fixture.server.revoke(token)
            #expect(fixture.server.publishedCount == 0)
            #expect(fixture.server.url(for: token, host: "127.0.0.1") == nil)
            for extra in [[], ["-I"], ["-H", "Range: bytes=0-1"], ["-X", "OPTIONS"], ["-X", "POST"]] {
                #expect(try await curl(url, extra, directory: fixture.directory).status == 404, "\(extra)")
            }
            fixture.server.revoke(token)  // again: nothing
        }
    }

    @Test func contentTypeFromPublishThenSniffedThenOctetStream() async throws {
        try await withMediaServer { fixture in
            let (plain, _) = try makeRandomFile(fixture.directory, "data", size: 100)
            let given = try fixture.publish(plain, contentType: "video/mp4; codecs=\"avc1.42E01E\"")
            let unknown = try fixture.publish(plain, name: "notes.txt")
            let byName = try fixture.publish(plain, name: "talk.opus")
            let magic = fixture.directory + "/magic"
            try rewriteFile(magic, creating: Array("fLaC".utf8) + [0, 0, 0, 34] + [UInt8](repeating: 7, count: 100))
            let sniffed = try fixture.publish(magic, name: "mislabelled.mp4")
            let expectations: [(MediaToken, String)] = [
                (given, "video/mp4; codecs=\"avc1.42E01E\""), (unknown, "application/octet-stream"),
                (byName, "audio/ogg"), (sniffed, "audio/flac"),
            ]
            for (token, type) in expectations {
                let response = try await curl(try fixture.url(token), ["-I"], directory: fixture.directory)
                #expect(response.headers["content-type"] == type)
            }
        }
    }

    @Test func urlsShowTheExtensionAlone() async throws {
        try await withMediaServer { fixture in
            let (path, _) = try makeRandomFile(fixture.directory, "secret-name.MP4", size: 10)
            let token = try fixture.publish(path, name: "/home/alice/Private/secret-name.MP4")
            let bare = try fixture.publish(path, name: "/home/alice/Private/README")
            let port = fixture.port
            #expect(
                fixture.server.url(for: token, host: "192.168.1.20") == "http://192.168.1.20:\(port)/\(token.hex).mp4")
            #expect(
                fixture.server.url(for: token, host: "fe80::1%eth0")
                    == "http://[fe80::1%25eth0]:\(port)/\(token.hex).mp4")
            #expect(fixture.server.url(for: token, host: "::1") == "http://[::1]:\(port)/\(token.hex).mp4")
            #expect(fixture.server.url(for: bare, host: "10.0.0.1") == "http://10.0.0.1:\(port)/\(bare.hex)")
            #expect(fixture.server.url(for: MediaToken.random(), host: "10.0.0.1") == nil)
            #expect(!"\(token)".contains(token.hex))
            #expect(fixture.server.url(for: token, host: "10.0.0.1")?.contains("secret") == false)
        }
    }

    /// Every address shares the first one's port; listening twice on one address is one socket.
    @Test func addressesShareOnePort() async throws {
        try await withMediaServer { fixture in
            #expect(try await fixture.server.listen(on: "127.0.0.1") == fixture.port)
            await #expect(throws: (any Error).self) { try await fixture.server.listen(on: "localhost") }
            guard ipv6LoopbackAvailable() else { return }  // a host without IPv6
            #expect(try await fixture.server.listen(on: "::1") == fixture.port)
            let (path, bytes) = try makeRandomFile(fixture.directory, size: 1000)
            let token = try fixture.publish(path)
            let url = try #require(fixture.server.url(for: token, host: "::1"))
            #expect(try await curl(url, ["-g"], directory: fixture.directory).body == bytes)
        }
    }
}
