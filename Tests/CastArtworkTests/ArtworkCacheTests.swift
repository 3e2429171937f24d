import CastTestSupport
import CastdAPI
import Foundation
import Testing

@testable import CastArtwork

/// The cache against a real HTTP server on loopback and a real directory.
@Suite(.timeLimit(.minutes(1))) struct ArtworkCacheTests {
    /// A cache directory of its own (removed afterwards) and a server.
    static func withCache<T>(
        maximumTotalBytes: Int = 64 << 20, _ body: (ArtworkCache, ImageServer) async throws -> T
    ) async throws -> T {
        try await withTemporaryDirectory { directory in
            try await ImageServer.with { server in
                let cache = try ArtworkCache(
                    directory: directory + "/cache/castd/artwork", maximumTotalBytes: maximumTotalBytes,
                    fetcher: .forTests)
                return try await body(cache, server)
            }
        }
    }

    static func contents(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The names in the cache's directory: images and temporary files alike.
    static func names(_ cache: ArtworkCache) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: cache.directory).sorted()
    }

    static func error(_ cache: ArtworkCache, _ url: String) async -> ArtworkError? {
        do {
            _ = try await cache.file(for: url)
            return nil
        } catch {
            return error
        }
    }

    @Test func storesTheImageAndServesRepeatsFromDisk() async throws {
        try await Self.withCache { cache, server in
            let png = ImageServer.png(count: 5000)
            server.answer("/a.png", .body(png))
            let url = server.url("/a.png")
            #expect(cache.cachedFile(for: url) == nil)

            let file = try await cache.file(for: url)
            #expect(file.path == cache.directory + "/" + SHA256.hex(url) + ".png")
            #expect(file.byteCount == 5000 && file.format == .png)
            #expect(try Self.contents(file.path) == png)
            #expect(server.hits("/a.png") == 1)
            // The directory is the user's alone.
            let mode = try FileManager.default.attributesOfItem(atPath: cache.directory)[.posixPermissions] as? Int
            #expect(mode == 0o700)

            #expect(try await cache.file(for: url) == file)
            #expect(cache.cachedFile(for: url) == file)
            // Another program's cache on the same directory finds it too.
            let other = try ArtworkCache(directory: cache.directory, fetcher: .forTests)
            #expect(try await other.file(for: url) == file)
            #expect(server.hits("/a.png") == 1)
            #expect(try Self.names(cache) == [SHA256.hex(url) + ".png"])
        }
    }

    @Test func whatIsNotAnImageLeavesNoFile() async throws {
        try await Self.withCache { cache, server in
            server.answer("/a.html", .status(200))
            server.answer("/endless.png", .stream(total: 64 << 20, chunk: 64 << 10))
            let url = server.url("/a.html")
            #expect(await Self.error(cache, url) == .notAnImage(url: url, start: Array("<!DO".utf8)))
            #expect(
                await Self.error(cache, server.url("/endless.png"))
                    == .tooLarge(url: server.url("/endless.png"), limit: 10 << 20, contentLength: nil))
            let names = try Self.names(cache)
            #expect(names == [])
            #expect(cache.cachedFile(for: url) == nil)
        }
    }

    @Test func aFailedFetchIsTriedAgain() async throws {
        try await Self.withCache { cache, server in
            let png = ImageServer.png(count: 100)
            server.answer("/flaky.png", .status(503), .body(png))
            let url = server.url("/flaky.png")
            #expect(await Self.error(cache, url) == .httpStatus(url: url, code: 503, reason: "Service Unavailable"))
            let names = try Self.names(cache)
            #expect(names == [])
            let file = try await cache.file(for: url)
            #expect(try Self.contents(file.path) == png)
            #expect(server.hits("/flaky.png") == 2)
        }
    }

    @Test func twoRequestsForOneURLShareOneFetch() async throws {
        try await Self.withCache { cache, server in
            let png = ImageServer.png(count: 2000)
            server.answer("/shared.png", .held(.body(png)))
            let url = server.url("/shared.png")
            async let first = cache.file(for: url)
            async let second = cache.file(for: url)
            // Both wait for the one request before the server answers it.
            try await eventually("both requests to wait for one fetch") {
                await cache.waiters(for: url) == 2 && server.hits("/shared.png") == 1
            }
            server.release()
            let (a, b) = try await (first, second)
            #expect(a == b)
            #expect(server.hits("/shared.png") == 1)
            #expect(await cache.waiters(for: url) == 0)
        }
    }

    /// A caller's cancellation leaves the fetch to the others; the last one's cancels it (and
    /// so closes its connection: a player whose media changed stops fetching the old image).
    @Test func aFetchNobodyWaitsForAnyMoreIsCancelled() async throws {
        try await Self.withCache { cache, server in
            server.answer("/slow.png", .silence)
            let url = server.url("/slow.png")
            let first = Task { await Self.error(cache, url) }
            let second = Task { await Self.error(cache, url) }
            try await eventually("both requests to wait for one fetch") {
                await cache.waiters(for: url) == 2 && server.hits("/slow.png") == 1
            }
            first.cancel()
            try await eventually("the first caller to leave the fetch") { await cache.waiters(for: url) == 1 }
            second.cancel()
            #expect(await second.value == .cancelled(url: url))
            #expect(await first.value == .cancelled(url: url))
            #expect(await cache.waiters(for: url) == 0)
            #expect(server.hits("/slow.png") == 1)
            #expect(try Self.names(cache) == [])
        }
    }

    @Test func leastRecentlyUsedImagesGoFirst() async throws {
        // Room for two 1000-byte images, not three.
        try await Self.withCache(maximumTotalBytes: 2500) { cache, server in
            for (name, seed) in [("a", 1), ("b", 2), ("c", 3)] {
                server.answer("/\(name).png", .body(ImageServer.png(count: 1000, seed: UInt8(seed))))
            }
            let a = try await cache.file(for: server.url("/a.png"))
            let b = try await cache.file(for: server.url("/b.png"))
            // a is used again: b is now the least recently used.
            #expect(cache.cachedFile(for: server.url("/a.png")) == a)
            let c = try await cache.file(for: server.url("/c.png"))
            #expect(FileManager.default.fileExists(atPath: a.path))
            #expect(!FileManager.default.fileExists(atPath: b.path))
            #expect(FileManager.default.fileExists(atPath: c.path))
            #expect(try Self.names(cache).count == 2)
            // b comes back by a fetch, and a (now the oldest) goes.
            _ = try await cache.file(for: server.url("/b.png"))
            #expect(server.hits("/b.png") == 2)
            #expect(!FileManager.default.fileExists(atPath: a.path))
        }
    }

    @Test func anImageLargerThanTheWholeCacheIsRefused() async throws {
        try await Self.withCache(maximumTotalBytes: 1000) { cache, server in
            server.answer("/big.png", .body(ImageServer.png(count: 1001)))
            #expect(cache.fetcher.maximumBytes == 1000)
            #expect(
                await Self.error(cache, server.url("/big.png"))
                    == .tooLarge(url: server.url("/big.png"), limit: 1000, contentLength: 1001))
        }
    }

    @Test func temporaryFilesOfCrashedWritersAreRemovedAtStart() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/artwork"
            let cache = try ArtworkCache(directory: path, fetcher: .forTests)
            // A writer that no longer runs, an old file, and a live writer's (this process's).
            let dead = path + "/.tmp-\(Int32.max - 1)-1a2b"
            let old = path + "/.tmp-\(getpid())-old"
            let live = path + "/.tmp-\(getpid())-3c4d"
            for file in [dead, old, live] { #expect(FileManager.default.createFile(atPath: file, contents: Data([1]))) }
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: old)
            _ = try ArtworkCache(directory: cache.directory)
            #expect(!FileManager.default.fileExists(atPath: dead))
            #expect(!FileManager.default.fileExists(atPath: old))
            #expect(FileManager.default.fileExists(atPath: live))
        }
    }

    @Test func picksTheMediasImageAndFetchesIt() async throws {
        try await Self.withCache { cache, server in
            server.answer("/small.png", .body(ImageServer.png(count: 100, seed: 1)))
            server.answer("/large.png", .body(ImageServer.png(count: 200, seed: 2)))
            var media = CastdMediaInformation()
            for (path, size) in [("/small.png", UInt32(100)), ("/large.png", 1000)] {
                var image = CastdImage()
                image.url = server.url(path)
                image.width = size
                image.height = size
                media.metadata.images.append(image)
            }
            let thumbnail = try await cache.file(for: media, hint: ArtworkHint(width: 64, height: 64))
            #expect(try Self.contents(thumbnail.path) == ImageServer.png(count: 100, seed: 1))
            let background = try await cache.file(for: media, hint: .background)
            #expect(try Self.contents(background.path) == ImageServer.png(count: 200, seed: 2))
            do {
                _ = try await cache.file(for: CastdMediaInformation(), hint: .thumbnail)
                Issue.record("media without images gave a file")
            } catch {
                #expect(error as? ArtworkError == .noImage)
            }
        }
    }

    @Test func theDefaultDirectoryFollowsXDG() {
        #expect(
            ArtworkStore.defaultDirectory(environment: ["XDG_CACHE_HOME": "/c", "HOME": "/h"]) == "/c/castd/artwork")
        #expect(ArtworkStore.defaultDirectory(environment: ["HOME": "/h"]) == "/h/.cache/castd/artwork")
        // A relative XDG_CACHE_HOME is ignored, as the specification says.
        #expect(
            ArtworkStore.defaultDirectory(environment: ["XDG_CACHE_HOME": "c", "HOME": "/h"])
                == "/h/.cache/castd/artwork")
        #expect(ArtworkStore.defaultDirectory(environment: [:]) == nil)
    }

    @Test func aDirectoryThatCannotBeMadeIsACacheError() async throws {
        try await withTemporaryDirectory { directory in
            #expect(FileManager.default.createFile(atPath: directory + "/file", contents: Data()))
            #expect(throws: ArtworkError.self) { try ArtworkCache(directory: directory + "/file/artwork") }
            #expect(throws: ArtworkError.self) { try ArtworkCache(directory: "relative/artwork") }
        }
    }
}
