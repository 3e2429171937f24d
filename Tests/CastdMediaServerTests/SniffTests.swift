import Testing

@testable import CastdMediaServer

@Suite struct ContentSniffingTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
    static let ebmlWebM: [UInt8] =
        [0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84] + bytes("webm")
    static let ebmlMatroska: [UInt8] =
        [0x1A, 0x45, 0xDF, 0xA3, 0xA3, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x88] + bytes("matroska")

    /// (first bytes, name, expected type): magic wins over the name; the name's extension is the
    /// fallback; neither gives nil.
    static let table: [([UInt8], String, String?)] = [
        ([0, 0, 0, 0x20] + bytes("ftypisom") + [0, 0, 2, 0], "a", "video/mp4"),
        ([0, 0, 0, 0x20] + bytes("ftypM4A ") + [0, 0, 2, 0], "song.mp4", "audio/mp4"),
        ([0, 0, 0, 0x20] + bytes("ftypM4B "), "book", "audio/mp4"),
        ([0, 0, 0, 0x18] + bytes("ftypM4V "), "x", "video/mp4"),
        // A container that holds audio or video alike: an audio extension says it is audio; a
        // video's extension, or another container's, does not overrule the bytes.
        ([0, 0, 0, 0x20] + bytes("ftypisom") + [0, 0, 2, 0], "Song.M4A", "audio/mp4"),
        ([0, 0, 0, 0x20] + bytes("ftypmp42"), "book.m4b", "audio/mp4"),
        ([0, 0, 0, 0x20] + bytes("ftypM4A "), "song.m4v", "audio/mp4"),
        ([0, 0, 0, 0x20] + bytes("ftypisom"), "song.mp3", "video/mp4"),
        (ebmlMatroska, "live.mka", "audio/x-matroska"),
        (ebmlWebM, "live.mka", "video/webm"),
        (ebmlWebM, "clip.mkv", "video/webm"),
        (ebmlMatroska, "clip.webm", "video/x-matroska"),
        ([0x1A, 0x45, 0xDF, 0xA3], "x", "video/x-matroska"),
        (bytes("ID3") + [4, 0, 0, 0, 0, 0, 0], "x", "audio/mpeg"),
        ([0xFF, 0xFB, 0x90, 0x64], "x", "audio/mpeg"),  // MPEG-1 layer III
        ([0xFF, 0xF3, 0x48, 0xC4], "x", "audio/mpeg"),  // MPEG-2 layer III
        ([0xFF, 0xF1, 0x50, 0x80], "x.mp3", "audio/aac"),  // ADTS, MPEG-4
        ([0xFF, 0xF9, 0x50, 0x80], "x", "audio/aac"),  // ADTS, MPEG-2
        (bytes("fLaC") + [0, 0, 0, 0x22], "x", "audio/flac"),
        (bytes("OggS") + [0, 2] + [UInt8](repeating: 0, count: 22) + bytes("OpusHead"), "x", "audio/ogg"),
        (bytes("OggS") + [0, 2] + [UInt8](repeating: 0, count: 22) + [1] + bytes("vorbis"), "x", "audio/ogg"),
        (bytes("OggS") + [0, 2] + [UInt8](repeating: 0, count: 22) + [0x80] + bytes("theora"), "x", "video/ogg"),
        (bytes("RIFF") + [0x24, 0, 0, 0] + bytes("WAVEfmt "), "x", "audio/wav"),
        (bytes("RIFF") + [0x24, 0, 0, 0] + bytes("AVI LIST"), "x", nil),
        ([0xFF, 0xD8, 0xFF, 0xE0], "x", "image/jpeg"),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "x", "image/png"),
        (bytes("WEBVTT\n\n00:00.000 --> 00:01.000"), "x", "text/vtt"),
        ([0xEF, 0xBB, 0xBF] + bytes("WEBVTT - title\n"), "x", "text/vtt"),
        (bytes("WEBVTT"), "x", "text/vtt"),
        (bytes("WEBVTTX"), "x", nil),
        // No magic: the extension, any case; then nil.
        ([], "movie.MP4", "video/mp4"), ([], "a.m4v", "video/mp4"), ([], "a.m4a", "audio/mp4"),
        ([], "a.webm", "video/webm"), ([], "a.mkv", "video/x-matroska"), ([], "a.mp3", "audio/mpeg"),
        ([], "a.flac", "audio/flac"), ([], "a.ogg", "audio/ogg"), ([], "a.opus", "audio/ogg"),
        ([], "a.wav", "audio/wav"), ([], "a.aac", "audio/aac"), ([], "a.jpg", "image/jpeg"),
        ([], "a.jpeg", "image/jpeg"), ([], "a.png", "image/png"), ([], "subs.vtt", "text/vtt"),
        (bytes("plain text"), "/home/u/notes.txt", nil), ([], "noextension", nil), ([], ".mp4", nil),
        ([0xFF], "x", nil), ([0xFF, 0xE0], "x", nil),  // a sync with no layer: neither
    ]

    @Test(arguments: table.indices)
    func sniffsMagicThenExtension(index: Int) {
        let (head, name, expected) = Self.table[index]
        #expect(MediaContentType.sniff(head: head, name: name) == expected, "\(head.prefix(12)) \(name)")
    }

    @Test func fileExtensionIsTheOnlyPartOfTheName() {
        #expect(MediaContentType.fileExtension(of: "/home/alice/Secret Films/holiday.MKV") == "mkv")
        #expect(MediaContentType.fileExtension(of: "archive.tar.gz") == "gz")
        #expect(MediaContentType.fileExtension(of: "/dir.d/file") == nil)
        #expect(MediaContentType.fileExtension(of: "x.a b") == nil)
        #expect(MediaContentType.fileExtension(of: "x.averylongext") == nil)
        #expect(MediaContentType.fileExtension(of: "x.") == nil)
    }
}

@Suite struct ByteRangeTests {
    static func select(_ header: [String], size: Int) -> ByteRange.Selection {
        ByteRange.select(ByteRange(header: header), size: size)
    }

    @Test func singleRanges() {
        #expect(Self.select(["bytes=0-99"], size: 1000) == .partial(0...99))
        #expect(Self.select(["bytes=500-"], size: 1000) == .partial(500...999))
        #expect(Self.select(["bytes=0-"], size: 1000) == .partial(0...999))
        #expect(Self.select(["bytes=-100"], size: 1000) == .partial(900...999))
        #expect(Self.select(["bytes=-5000"], size: 1000) == .partial(0...999))
        #expect(Self.select(["bytes=900-5000"], size: 1000) == .partial(900...999))
        #expect(Self.select(["bytes=999-999"], size: 1000) == .partial(999...999))
        #expect(Self.select(["BYTES = 1 - 2 "], size: 1000) == .partial(1...2))
        #expect(Self.select(["bytes=0-99999999999999999999999"], size: 10) == .partial(0...9))
    }

    @Test func unsatisfiable() {
        #expect(Self.select(["bytes=1000-"], size: 1000) == .unsatisfiable)
        #expect(Self.select(["bytes=1000-2000"], size: 1000) == .unsatisfiable)
        #expect(Self.select(["bytes=-0"], size: 1000) == .unsatisfiable)
        #expect(Self.select(["bytes=0-"], size: 0) == .unsatisfiable)
        #expect(Self.select(["bytes=-1"], size: 0) == .unsatisfiable)
        #expect(Self.select(["bytes=99999999999999999999999-"], size: 10) == .unsatisfiable)
    }

    /// Malformed, multiple or of another unit: ignored, the whole file (200).
    @Test func ignored() {
        for header in [
            ["bytes=5-1"], ["bytes=0-1,3-4"], ["bytes=-"], ["bytes="], ["bytes=a-b"], ["items=0-1"], ["bytes 0-1"],
            ["bytes=0-1", "bytes=2-3"], ["bytes=1-2-3"], ["bytes=+1-2"], ["bytes=0x1-2"],
        ] {
            #expect(Self.select(header, size: 1000) == .whole, "\(header)")
        }
        #expect(Self.select([], size: 1000) == .whole)
    }
}

@Suite struct MediaTokenTests {
    @Test func randomHexRoundTrip() throws {
        let tokens = (0..<1000).map { _ in MediaToken.random() }
        #expect(Set(tokens).count == tokens.count)
        for token in tokens.prefix(20) {
            #expect(token.hex.count == 32)
            #expect(MediaToken(hexDigits: Array(token.hex.utf8)) == token)
            #expect(MediaToken(hexDigits: Array(token.hex.uppercased().utf8)) == token)
            #expect(token.description.count == 9 && token.hex.hasPrefix(token.description.dropLast()))
        }
        #expect(MediaToken(hexDigits: Array("0123456789abcdef0123456789abcdeg".utf8)) == nil)
        #expect(MediaToken(hexDigits: Array("0123".utf8)) == nil)
    }

    @Test func tokenInPath() {
        let token = MediaToken.random()
        #expect(MediaRequestHandler.token(inPath: "/\(token.hex)") == token)
        #expect(MediaRequestHandler.token(inPath: "/\(token.hex).mp4?x=1") == token)
        #expect(MediaRequestHandler.token(inPath: "/\(token.hex)/") == nil)
        #expect(MediaRequestHandler.token(inPath: "\(token.hex)") == nil)
        #expect(MediaRequestHandler.token(inPath: "/../\(token.hex)") == nil)
        #expect(MediaRequestHandler.token(inPath: "*") == nil)
    }
}
