import CastArtwork
import CastTestSupport
import CastdSupport
import Logging
import Testing

/// What the cache logs: fetches at info, with a URL's query (which may hold a token) left out.
@Suite struct ArtworkLoggingTests {
    @Test func aURLsQueryStaysOutOfTheLog() async throws {
        let (logger, records) = RecordingLogHandler.logger("test")
        try await withTemporaryDirectory { directory in
            try await ImageServer.with { server in
                server.answer("/a.png?token=s3cret", .body(ImageServer.png(count: 100)))
                server.answer("/b.png?token=s3cret", .status(500))
                let cache = try ArtworkCache(directory: directory + "/artwork", fetcher: .forTests, logger: logger)
                _ = try await cache.file(for: server.url("/a.png?token=s3cret"))
                _ = try? await cache.file(for: server.url("/b.png?token=s3cret"))
                _ = cache.cachedFile(for: server.url("/a.png?token=s3cret"))
            }
        }
        let logged = records.all.map(\.line)
        #expect(logged.contains { $0.hasPrefix("info fetched artwork") && $0.contains("/a.png?…") }, "\(logged)")
        #expect(logged.contains { $0.hasPrefix("info cannot fetch artwork") && $0.contains("HTTP 500") }, "\(logged)")
        #expect(logged.contains { $0.hasPrefix("debug artwork from the cache") }, "\(logged)")
        #expect(!logged.contains { $0.contains("s3cret") }, "\(logged)")
    }
}
