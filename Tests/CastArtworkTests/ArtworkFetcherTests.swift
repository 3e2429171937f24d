import CastArtwork
import CastTestSupport
import Testing

/// The fetcher against a real HTTP server on loopback: every bound a server could stretch.
@Suite(.timeLimit(.minutes(1))) struct ArtworkFetcherTests {
    static let png = ImageServer.png(count: 3000)

    /// The error `fetch` throws, or nil if it succeeded.
    static func error(_ fetcher: ArtworkFetcher, _ url: String) async -> ArtworkError? {
        do {
            _ = try await fetcher.fetch(url)
            return nil
        } catch {
            return error
        }
    }

    @Test func fetchesAnImage() async throws {
        try await ImageServer.with { server in
            server.answer("/a.png", .body(Self.png))
            server.answer("/chunked.png", .body(Self.png, chunked: 100))
            let download = try await ArtworkFetcher.forTests.fetch(server.url("/a.png"))
            #expect(download.bytes == Self.png && download.format == .png && download.redirects == 0)
            #expect(try await ArtworkFetcher.forTests.fetch(server.url("/chunked.png")).bytes == Self.png)
        }
    }

    @Test func serverThatNeverAnswersTimesOut() async throws {
        try await ImageServer.with { server in
            server.answer("/slow.png", .silence)
            let timeout = Duration.milliseconds(500).scaledForTests
            let fetcher = ArtworkFetcher.forTests(timeout: timeout)
            let clock = ContinuousClock()
            let start = clock.now
            let error = await Self.error(fetcher, server.url("/slow.png"))
            let elapsed = clock.now - start
            #expect(error == .timedOut(url: server.url("/slow.png"), timeout: timeout))
            #expect(elapsed >= timeout * 0.9 && elapsed < timeout + .seconds(5).scaledForTests, "\(elapsed)")
        }
    }

    @Test func contentLengthOverTheLimitIsRefusedAtTheHead() async throws {
        try await ImageServer.with { server in
            server.answer("/huge.png", .promises(contentLength: 2 << 30))
            // A long timeout: the refusal must come from the head, not from waiting.
            let fetcher = ArtworkFetcher.forTests(timeout: .seconds(60))
            let clock = ContinuousClock()
            let start = clock.now
            let error = await Self.error(fetcher, server.url("/huge.png"))
            #expect(error == .tooLarge(url: server.url("/huge.png"), limit: 10 << 20, contentLength: 2_147_483_648))
            #expect(clock.now - start < .seconds(10).scaledForTests)
            #expect(error?.description.contains("larger than 10 MiB (Content-Length 2147483648)") == true)
        }
    }

    @Test func chunkedBodyOverTheLimitIsAbandoned() async throws {
        try await ImageServer.with { server in
            let total = 64 << 20
            server.answer("/endless.png", .stream(total: total, chunk: 64 << 10))
            let error = await Self.error(ArtworkFetcher.forTests, server.url("/endless.png"))
            #expect(error == .tooLarge(url: server.url("/endless.png"), limit: 10 << 20, contentLength: nil))
            // The fetcher closed the connection at the limit: the server could not send it all.
            try await eventually("the server to stop streaming") { server.streamEnded("/endless.png") }
            #expect(server.bytesSent("/endless.png") < total / 2)
        }
    }

    @Test func followsFiveRedirectsAndRefusesASixth() async throws {
        try await ImageServer.with { server in
            // /r/N redirects to /r/N-1 (an absolute URL, an absolute path, a relative path, in
            // turn, with each redirect status); /r/0 is the image.
            let codes = [301, 302, 303, 307, 308]
            for hop in 1...6 {
                let location = [server.url("/r/\(hop - 1)"), "/r/\(hop - 1)", "\(hop - 1)"][hop % 3]
                server.answer("/r/\(hop)", .redirect(codes[hop % codes.count], location: location))
            }
            server.answer("/r/0", .body(Self.png))
            let download = try await ArtworkFetcher.forTests.fetch(server.url("/r/5"))
            #expect(download.bytes == Self.png && download.redirects == 5)
            #expect(download.url.description == server.url("/r/0"))
            let error = await Self.error(ArtworkFetcher.forTests, server.url("/r/6"))
            #expect(error == .tooManyRedirects(url: server.url("/r/6"), count: 6, limit: 5))
            #expect(server.hits("/r/0") == 1)
        }
    }

    @Test func redirectsElsewhereThanHTTPAreRefused() async throws {
        try await ImageServer.with { server in
            server.answer("/ftp", .redirect(302, location: "ftp://example.com/a.png"))
            server.answer("/nowhere", .redirect(301, location: ""))
            let ftp = await Self.error(ArtworkFetcher.forTests, server.url("/ftp"))
            guard case .badRedirect(_, let location, let reason) = ftp else {
                Issue.record("\(String(describing: ftp))")
                return
            }
            #expect(location == "ftp://example.com/a.png" && reason.contains("only http and https"))
            guard case .badRedirect = await Self.error(ArtworkFetcher.forTests, server.url("/nowhere")) else {
                Issue.record("a redirect without a Location was followed")
                return
            }
        }
    }

    @Test func onlyImagesAndOnly200() async throws {
        try await ImageServer.with { server in
            server.answer("/a.html", .status(200))
            server.answer("/missing.png", .status(404))
            server.answer("/empty.png", .body([]))
            // A GIF's signature and logical screen (1×1): all the fetcher reads of it.
            server.answer("/tiny.gif", .body(Array("GIF89a".utf8) + [1, 0, 1, 0]))
            let html = await Self.error(ArtworkFetcher.forTests, server.url("/a.html"))
            #expect(html == .notAnImage(url: server.url("/a.html"), start: Array("<!DO".utf8)))
            #expect(html?.description == "\(server.url("/a.html")) is not an image (starts with `<!DO`)")
            #expect(
                await Self.error(ArtworkFetcher.forTests, server.url("/missing.png"))
                    == .httpStatus(url: server.url("/missing.png"), code: 404, reason: "Not Found"))
            #expect(
                await Self.error(ArtworkFetcher.forTests, server.url("/empty.png"))
                    == .notAnImage(url: server.url("/empty.png"), start: []))
            let gif = try await ArtworkFetcher.forTests.fetch(server.url("/tiny.gif"))
            #expect(gif.format == .gif)
        }
    }

    @Test func nothingListeningIsAConnectionFailure() async throws {
        let port = try freePort()
        let error = await Self.error(ArtworkFetcher.forTests, "http://127.0.0.1:\(port)/a.png")
        guard case .connectionFailed(_, let reason) = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(reason.contains("refused"), "\(reason)")
    }

    @Test func cancellationEndsTheFetch() async throws {
        try await ImageServer.with { server in
            server.answer("/slow.png", .silence)
            let task = Task {
                await Self.error(ArtworkFetcher.forTests(timeout: .seconds(60)), server.url("/slow.png"))
            }
            try await eventually("the request to arrive") { server.hits("/slow.png") == 1 }
            task.cancel()
            #expect(await task.value == .cancelled(url: server.url("/slow.png")))
        }
    }
}
