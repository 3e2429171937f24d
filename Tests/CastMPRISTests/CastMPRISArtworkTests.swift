import CastArtwork
import CastClient
import CastMPRIS
import CastTestSupport
import CastdAPI
import CastdSupport
import Foundation
import Logging
import Testing

/// cast-mpris's artwork, end to end: images from an HTTP server on loopback that the test owns,
/// through castd and an emulated device, to `mpris:artUrl` as playerctl reads it.
@Suite(.serialized)
struct CastMPRISArtworkTests {
    static func media(_ title: String, images: [String]) -> CastdMediaInformation {
        var media = CastdMediaInformation(url: "https://example.com/\(title).mp3", contentType: "audio/mpeg")
        media.duration = 120
        media.metadata.title = title
        media.metadata.images = images.map { url in
            var image = CastdImage()
            image.url = url
            image.width = 512
            image.height = 512
            return image
        }
        return media
    }

    /// cast-mpris's bound on one download, in seconds: 10, stretched by `CASTD_TEST_TIME_SCALE` so
    /// that a loaded machine cannot turn an answer the test expects into a timeout.
    static let artworkTimeout = Int((10 * testTimeScale).rounded(.up))

    @Test(.timeLimit(.minutes(3)))
    func theArtworkIsACachedFileWithTheServedBytesAndNeverDelaysTheRest() async throws {
        try await ImageServer.with { server in
            try await CastMPRISEndToEndTests.withSetUp { client, socket, bus, _, id in
                let bridge = try bus.startBridge(
                    socket: socket, arguments: ["--artwork-timeout", "\(Self.artworkTimeout)"])
                let player = SessionBus.playerName(deviceID: id)
                let cover = ImageServer.png(count: 20_000, seed: 7)
                // The image is held back: the title shows at once, without artwork.
                server.answer("/cover.png", .held(.body(cover)))
                _ = try await client.load(Self.media("Held", images: [server.url("/cover.png")]))
                try await bus.waitForPlayer(player, bridge: bridge)
                let first = try await bus.playerctl([
                    "--player", player, "metadata", "--format", "{{xesam:title}}|{{mpris:artUrl}}",
                ])
                #expect(first.stdout == "Held|\n", "\(first)")
                server.release()
                var artURL = ""
                try await eventually(timeout: .seconds(20), "mpris:artUrl once the image is in") {
                    artURL = try await bus.playerctl(["--player", player, "metadata", "mpris:artUrl"]).stdout
                    return artURL.hasPrefix("file://")
                }
                let path = String(artURL.dropFirst("file://".count).dropLast())
                #expect(path.hasPrefix(bus.directory + "/cache/castd/artwork/"), "\(path)")
                #expect(FileManager.default.contents(atPath: path).map { [UInt8]($0) } == cover)
                #expect(server.hits("/cover.png") == 1)

                // castc artwork gives scripts the same file, from the cache: no second download.
                let castc = try await run("castc", ["--socket", socket, "artwork"], environment: bus.environment)
                expectSuccess(castc)
                #expect(castc.stdout == path + "\n")
                #expect(server.hits("/cover.png") == 1)
            }
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func hostileImagesGiveALogLineAndNoArtwork() async throws {
        try await ImageServer.with { server in
            try await CastMPRISEndToEndTests.withSetUp { client, socket, bus, _, id in
                let bridge = try bus.startBridge(
                    socket: socket, arguments: ["--artwork-timeout", "\(Self.artworkTimeout)"])
                let player = SessionBus.playerName(deviceID: id)
                let html = Array("<!DOCTYPE html><html><body>not a picture</body></html>".utf8)
                server.answer("/page.png", .body(html))
                server.answer("/huge.png", .promises(contentLength: 2 << 30))
                server.answer("/silent.png", .silence)
                let cases: [(path: String, log: String)] = [
                    ("/page.png", "is not an image (starts with `<!DO"),
                    ("/huge.png", "is larger than 10 MiB (Content-Length 2147483648)"),
                    ("/silent.png", "did not answer within \(Self.artworkTimeout) s"),
                ]
                for (number, (path, log)) in cases.enumerated() {
                    _ = try await client.load(Self.media("Hostile\(number)", images: [server.url(path)]))
                    try await bus.waitForPlayer(player, bridge: bridge)
                    try await eventually(timeout: .seconds(40), "cast-mpris to say why \(path) is no artwork") {
                        bridge.stderr.contains(log)
                    }
                    let metadata = try await bus.playerctl([
                        "--player", player, "metadata", "--format", "{{xesam:title}}|{{mpris:artUrl}}",
                    ])
                    #expect(metadata.stdout == "Hostile\(number)|\n", "\(metadata)")
                    #expect(bridge.isRunning)
                }
                // Nothing of them is in the cache, not even a partial file.
                let cached =
                    (try? FileManager.default.contentsOfDirectory(atPath: bus.directory + "/cache/castd/artwork"))
                #expect(cached?.isEmpty ?? true, "\(cached ?? [])")
            }
        }
    }

    /// One artwork fetch per device: a media change cancels the fetch for the media before (its
    /// connection closed), and only the latest media's artwork is shown.
    @Test(.timeLimit(.minutes(3)))
    func aNewMediaCancelsTheArtworkFetchOfTheOneBefore() async throws {
        try await ImageServer.with { server in
            try await CastMPRISEndToEndTests.withSetUp { client, socket, bus, _, id in
                let bridge = try bus.startBridge(
                    socket: socket, arguments: ["--artwork-timeout", "\(Self.artworkTimeout * 6)"])
                let player = SessionBus.playerName(deviceID: id)
                let latest = ImageServer.png(count: 3000, seed: 9)
                server.answer("/first.png", .held(.body(ImageServer.png(count: 3000, seed: 1))))
                server.answer("/second.png", .held(.body(ImageServer.png(count: 3000, seed: 2))))
                server.answer("/third.png", .body(latest))
                for (number, path) in ["/first.png", "/second.png"].enumerated() {
                    _ = try await client.load(Self.media("Superseded\(number)", images: [server.url(path)]))
                    try await bus.waitForPlayer(player, bridge: bridge)
                    try await eventually("cast-mpris to ask for \(path)") { server.hits(path) == 1 }
                }
                _ = try await client.load(Self.media("Latest", images: [server.url("/third.png")]))
                var artURL = ""
                try await eventually(timeout: .seconds(20), "the latest media's artwork") {
                    artURL = try await bus.playerctl(["--player", player, "metadata", "mpris:artUrl"]).stdout
                    return artURL.hasPrefix("file://")
                }
                let path = String(artURL.dropFirst("file://".count).dropLast())
                #expect(FileManager.default.contents(atPath: path).map { [UInt8]($0) } == latest)
                // Both fetches before it were cancelled as their media went, not left to time out.
                for held in ["/first.png", "/second.png"] {
                    try await eventually("the fetch of \(held) to be cancelled") {
                        bridge.stderr.contains("the fetch of \(server.url(held)) was cancelled")
                    }
                }
                // Their answers, let go now, reach no one: only the latest image is in the cache.
                server.release()
                let title = try await bus.playerctl([
                    "--player", player, "metadata", "--format", "{{xesam:title}}|{{mpris:artUrl}}",
                ])
                #expect(title.stdout == "Latest|\(artURL)", "\(title)")
                let cached = try FileManager.default.contentsOfDirectory(atPath: bus.directory + "/cache/castd/artwork")
                #expect(cached.count == 1, "\(cached)")
                #expect(server.hits("/first.png") == 1 && server.hits("/second.png") == 1)
            }
        }
    }

    @Test func tenThousandImagesArePickedFromTheFirstOnesAndSaidOnce() throws {
        let directory = NSTemporaryDirectory() + "castd-mpris-artwork-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (logger, records) = RecordingLogHandler.logger("test")
        let artwork = MPRISArtwork(cache: try ArtworkCache(directory: directory), logger: logger)
        let images = (0..<10_000).map { index in
            var image = CastdImage()
            image.url = "https://example.com/\(index).png"
            image.width = UInt32(100 + index)
            image.height = UInt32(100 + index)
            return image
        }
        // The smallest at least 512×512 would be image 412; only the first 256 are looked at, so the
        // largest of them wins.
        #expect(artwork.choose(images) == "https://example.com/255.png")
        #expect(
            records.all.map(\.message) == ["the media lists 10000 images; the artwork is picked from the first 256"])
    }
}
