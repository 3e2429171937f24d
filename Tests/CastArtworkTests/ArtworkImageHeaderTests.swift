import CastTestSupport
import Testing

@testable import CastArtwork

/// An image's size, read from its header without decoding it: every format the cache keeps, a
/// JPEG whose frame header comes after other segments, and headers malformed or cut short at
/// every length (refused, never read out of bounds).
@Suite(.timeLimit(.minutes(1))) struct ArtworkImageHeaderTests {
    static func bigEndian(_ value: Int, _ count: Int) -> [UInt8] {
        (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    static func littleEndian(_ value: Int, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    static func png(width: Int, height: Int) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + bigEndian(13, 4) + Array("IHDR".utf8)
            + bigEndian(width, 4) + bigEndian(height, 4) + [8, 6, 0, 0, 0] + [0x12, 0x34, 0x56, 0x78]
    }

    /// SOI, an APP0 (JFIF), an APP1 of 300 bytes, a comment, a DQT, fill bytes, then SOF2
    /// (progressive) and the rest.
    static func jpeg(width: Int, height: Int) -> [UInt8] {
        let app0: [UInt8] = [0xFF, 0xE0] + bigEndian(16, 2) + Array("JFIF\0".utf8) + [1, 1, 0, 0, 1, 0, 1, 0, 0]
        let app1: [UInt8] = [0xFF, 0xE1] + bigEndian(300, 2) + Array(repeating: 0xFF, count: 298)
        let comment: [UInt8] = [0xFF, 0xFE] + bigEndian(7, 2) + Array("hello".utf8)
        let dqt: [UInt8] = [0xFF, 0xDB] + bigEndian(67, 2) + Array(repeating: 1, count: 65)
        let sof: [UInt8] =
            [0xFF, 0xFF, 0xFF, 0xC2] + bigEndian(17, 2) + [8] + bigEndian(height, 2) + bigEndian(width, 2)
            + [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
        return [0xFF, 0xD8] + app0 + app1 + comment + dqt + sof + [0xFF, 0xDA, 0, 2]
    }

    static func gif(width: Int, height: Int) -> [UInt8] {
        Array("GIF89a".utf8) + littleEndian(width, 2) + littleEndian(height, 2) + [0xF7, 0, 0]
    }

    static func riff(_ chunk: String, _ payload: [UInt8]) -> [UInt8] {
        Array("RIFF".utf8) + littleEndian(payload.count + 12, 4) + Array("WEBP".utf8) + Array(chunk.utf8)
            + littleEndian(payload.count, 4) + payload
    }

    static func webpLossy(width: Int, height: Int) -> [UInt8] {
        riff("VP8 ", [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A] + littleEndian(width, 2) + littleEndian(height, 2) + [0, 0])
    }

    static func webpLossless(width: Int, height: Int) -> [UInt8] {
        riff("VP8L", [0x2F] + littleEndian((width - 1) | (height - 1) << 14, 4) + [0, 0])
    }

    static func webpExtended(width: Int, height: Int) -> [UInt8] {
        riff("VP8X", [0x10, 0, 0, 0] + littleEndian(width - 1, 3) + littleEndian(height - 1, 3))
    }

    static let makers: [(ArtworkFormat, @Sendable (Int, Int) -> [UInt8])] = [
        (.png, png), (.jpeg, jpeg), (.gif, gif), (.webp, webpLossy), (.webp, webpLossless), (.webp, webpExtended),
    ]

    @Test func everyFormatGivesItsSize() {
        for (format, make) in Self.makers {
            for (width, height) in [(1, 1), (640, 480), (8192, 8192), (8193, 10), (10, 16000), (16383, 16383)] {
                let bytes = make(width, height)
                #expect(ArtworkFormat(magic: bytes) == format)
                #expect(
                    ArtworkImageHeader.read(bytes, format: format) == .size(width: width, height: height),
                    "\(format) \(width)×\(height)")
            }
        }
    }

    /// Every prefix of every header: needs more, or (once the size is in) the size; never a
    /// crash, never a read past the end.
    @Test func aHeaderCutShortNeedsMore() {
        for (format, make) in Self.makers {
            let bytes = make(300, 200)
            var sizeAt: Int?
            for length in 0...bytes.count {
                let reading = ArtworkImageHeader.read(Array(bytes.prefix(length)), format: format)
                if reading == .size(width: 300, height: 200) {
                    if sizeAt == nil { sizeAt = length }
                } else {
                    #expect(reading == .needMore, "\(format) cut at \(length): \(reading)")
                    #expect(sizeAt == nil, "\(format): a longer prefix lost the size")
                }
            }
            #expect(sizeAt != nil)
        }
    }

    @Test func malformedHeadersAreRefused() {
        func malformed(_ bytes: [UInt8], _ format: ArtworkFormat) -> Bool {
            if case .malformed = ArtworkImageHeader.read(bytes, format: format) { return true }
            return false
        }
        var png = Self.png(width: 10, height: 10)
        png[12] = UInt8(ascii: "X")  // not IHDR
        #expect(malformed(png, .png))
        #expect(malformed(Self.png(width: 0, height: 10), .png))
        // A JPEG whose image data (SOS) or end (EOI) comes before any frame header.
        #expect(malformed([0xFF, 0xD8, 0xFF, 0xDA, 0, 2, 1, 2, 3], .jpeg))
        #expect(malformed([0xFF, 0xD8, 0xFF, 0xD9], .jpeg))
        // A segment that is not a marker, a length under 2, a frame header too short.
        #expect(malformed([0xFF, 0xD8, 0x12, 0x34], .jpeg))
        #expect(malformed([0xFF, 0xD8, 0xFF, 0xE0, 0, 1], .jpeg))
        #expect(malformed([0xFF, 0xD8, 0xFF, 0xC0, 0, 5, 8, 0, 1, 0, 1], .jpeg))
        // A segment whose length runs past the end: more is needed, and the body's end refuses it.
        #expect(ArtworkImageHeader.read([0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF, 0, 0], format: .jpeg) == .needMore)
        #expect(malformed(Self.riff("VP8 ", [0x10, 0x02, 0x00, 0x12, 0x34, 0x56, 1, 0, 1, 0]), .webp))
        #expect(malformed(Self.riff("VP8L", [0x00, 0, 0, 0, 0]), .webp))
        #expect(malformed(Self.riff("ALPH", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), .webp))
    }

    /// Random bytes after each format's signature: whatever they say, reading them ends in a
    /// size, needs more, or malformed, and never traps.
    @Test func randomHeadersNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        let signatures: [(ArtworkFormat, [UInt8])] = [
            (.png, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), (.jpeg, [0xFF, 0xD8, 0xFF]),
            (.gif, Array("GIF89a".utf8)), (.webp, Array("RIFF\0\0\0\0WEBPVP8".utf8)),
        ]
        for _ in 0..<2000 {
            for (format, signature) in signatures {
                let count = Int.random(in: 0...64, using: &generator)
                let tail = (0..<count).map { _ in
                    // Mostly 0xFF and small values: the bytes JPEG's markers and lengths are made of.
                    [0xFF, 0x00, 0x01, 0x02, 0xC0, 0xDA, UInt8.random(in: 0...255, using: &generator)].randomElement(
                        using: &generator)!
                }
                _ = ArtworkImageHeader.read(signature + tail, format: format)
            }
        }
    }

    /// End to end: the fetcher refuses an image over 8192 pixels either way, and a header cut
    /// short or malformed, with an error that says so; one of 8192×8192 is taken.
    @Test func theFetcherRefusesAnImageTooLarge() async throws {
        try await ImageServer.with { server in
            server.answer("/wide.png", .body(Self.png(width: 8193, height: 1)))
            server.answer("/tall.jpg", .body(Self.jpeg(width: 100, height: 60000)))
            server.answer("/edge.webp", .body(Self.webpExtended(width: 8192, height: 8192)))
            server.answer("/cut.gif", .body(Array("GIF89a\u{1}".utf8)))
            server.answer("/bad.jpg", .body([0xFF, 0xD8, 0xFF, 0xDA, 0, 2] + Array(repeating: 7, count: 100)))
            let fetcher = ArtworkFetcher.forTests
            func error(_ path: String) async -> ArtworkError? {
                do {
                    _ = try await fetcher.fetch(server.url(path))
                    return nil
                } catch {
                    return error
                }
            }
            let wide = await error("/wide.png")
            #expect(wide == .imageTooLarge(url: server.url("/wide.png"), width: 8193, height: 1, limit: 8192))
            #expect(wide?.description.hasSuffix("is an image of 8193×1 pixels; at most 8192×8192 is taken") == true)
            #expect(
                await error("/tall.jpg")
                    == .imageTooLarge(url: server.url("/tall.jpg"), width: 100, height: 60000, limit: 8192))
            let edge = try await fetcher.fetch(server.url("/edge.webp"))
            #expect(edge.format == .webp)
            guard case .badImageHeader(_, .gif, let cut) = await error("/cut.gif") else {
                Issue.record("a GIF cut short was taken")
                return
            }
            #expect(cut.contains("ends before its header gives its size"), "\(cut)")
            let bad = await error("/bad.jpg")
            guard case .badImageHeader(_, .jpeg, let reason) = bad else {
                Issue.record("a JPEG without a frame header was taken: \(String(describing: bad))")
                return
            }
            #expect(reason.contains("before any frame header"), "\(reason)")
            #expect(bad?.description.contains("is not a valid JPEG image") == true)
        }
    }
}
