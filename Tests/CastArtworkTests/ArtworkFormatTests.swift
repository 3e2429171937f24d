import CastArtwork
import Testing

/// Images are told by their first bytes; errors read as one line that names the URL.
@Suite struct ArtworkFormatTests {
    @Test(
        arguments: [
            ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13], ArtworkFormat.png),
            ([0xFF, 0xD8, 0xFF, 0xE0], .jpeg),
            (Array("GIF87a".utf8), .gif),
            (Array("GIF89a\u{1}\u{0}".utf8), .gif),
            (Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WEBPVP8 ".utf8), .webp),
        ] as [([UInt8], ArtworkFormat)])
    func recognises(bytes: [UInt8], format: ArtworkFormat) {
        #expect(ArtworkFormat(magic: bytes) == format)
    }

    @Test(
        arguments: [
            Array("<!DOCTYPE html>".utf8), Array("RIFF\u{24}\u{0}\u{0}\u{0}WAVEfmt ".utf8), Array("GIF8".utf8),
            [0x89, 0x50, 0x4E, 0x47], [0xFF, 0xD8], [], Array("{\"error\":1}".utf8),
        ] as [[UInt8]])
    func refuses(bytes: [UInt8]) {
        #expect(ArtworkFormat(magic: bytes) == nil)
    }

    @Test func extensions() {
        #expect(ArtworkFormat.allCases.map(\.fileExtension) == ["png", "jpg", "gif", "webp"])
        #expect(ArtworkFormat.jpeg.mimeType == "image/jpeg")
    }

    @Test func errorsReadAsOneLine() {
        let url = "http://example.com/a.html"
        #expect(
            ArtworkError.notAnImage(url: url, start: Array("<!DO".utf8)).description
                == "http://example.com/a.html is not an image (starts with `<!DO`)")
        #expect(ArtworkError.notAnImage(url: url, start: [0x00, 0x7F, 0x60]).description.contains("`\\x00\\x7F\\x60`"))
        #expect(
            ArtworkError.notAnImage(url: url, start: []).description
                == "http://example.com/a.html is empty, not an image")
        #expect(
            ArtworkError.tooLarge(url: url, limit: 10 << 20, contentLength: 2_147_483_648).description
                == "http://example.com/a.html is larger than 10 MiB (Content-Length 2147483648)")
        #expect(
            ArtworkError.timedOut(url: url, timeout: .seconds(10)).description
                == "http://example.com/a.html did not answer within 10 s")
        #expect(ArtworkError.timedOut(url: url, timeout: .milliseconds(1500)).description.hasSuffix("within 1.5 s"))
        #expect(ArtworkError.timedOut(url: url, timeout: .milliseconds(250)).description.hasSuffix("within 250 ms"))
        #expect(
            ArtworkError.tooManyRedirects(url: url, count: 6, limit: 5).description.hasPrefix("too many redirects (6)"))
        #expect(ArtworkError.httpStatus(url: url, code: 404, reason: "Not Found").description.contains("HTTP 404"))
        for error in [
            ArtworkError.connectionFailed(url: url, reason: "Connection refused"),
            .tooLarge(url: url, limit: 1 << 16, contentLength: nil), .noImage,
            .cache(path: "/x", reason: "Permission denied"),
        ] {
            #expect(!error.description.contains("\n"))
        }
    }
}
