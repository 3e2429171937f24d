import CastArtwork
import CastTestSupport
import CastdSupport
import Logging
import Testing

/// What the cache logs: fetches at info, with a URL's query (which may hold a token) left out.
@Suite struct ArtworkLoggingTests {
    /// Every record, rendered as `level message metadata`.
    final class Lines: Sendable {
        let lines = Locked<[String]>([])
    }

    struct Recorder: LogHandler {
        let lines: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            lines.lines.withLock { $0.append("\(event.level) \(event.message) \(fields.joined(separator: " "))") }
        }
    }

    @Test func aURLsQueryStaysOutOfTheLog() async throws {
        let lines = Lines()
        let logger = Logger(label: "test") { _ in Recorder(lines: lines) }
        try await withTemporaryDirectory { directory in
            try await ImageServer.with { server in
                server.answer("/a.png?token=s3cret", .body(ImageServer.png(count: 100)))
                server.answer("/b.png?token=s3cret", .status(500))
                let cache = try ArtworkCache(directory: directory + "/artwork", logger: logger)
                _ = try await cache.file(for: server.url("/a.png?token=s3cret"))
                _ = try? await cache.file(for: server.url("/b.png?token=s3cret"))
                _ = cache.cachedFile(for: server.url("/a.png?token=s3cret"))
            }
        }
        let logged = lines.lines.withLock { $0 }
        #expect(logged.contains { $0.hasPrefix("info fetched artwork") && $0.contains("/a.png?…") }, "\(logged)")
        #expect(logged.contains { $0.hasPrefix("info cannot fetch artwork") && $0.contains("HTTP 500") }, "\(logged)")
        #expect(logged.contains { $0.hasPrefix("debug artwork from the cache") }, "\(logged)")
        #expect(!logged.contains { $0.contains("s3cret") }, "\(logged)")
    }
}
