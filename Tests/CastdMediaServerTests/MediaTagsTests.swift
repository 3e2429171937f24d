import CastTestSupport
import Foundation
import Testing

@testable import CastdMediaServer

#if canImport(Glibc)
    import Glibc
#endif

/// Tags read from real files that ffmpeg writes (ffmpeg is required: the CI installs it), from
/// files made by hand for what ffmpeg does not write, and from mutated files.
@Suite(.tags(.cpuBound)) struct MediaTagsTests {
    static let metadata = [
        "title=Hoppípolla", "artist=Sigur Rós", "album=東京 Takk…", "album_artist=Various", "track=3/12",
        "disc=1/2", "date=2005",
    ]
    static let expected = MediaTags(
        title: "Hoppípolla", artist: "Sigur Rós", album: "東京 Takk…", albumArtist: "Various", trackNumber: 3,
        trackCount: 12, discNumber: 1, discCount: 2, date: "2005")

    /// Each format as ffmpeg writes it: the file's name and ffmpeg's options for it.
    static let formats: [(String, [String])] = [
        ("id3v24.mp3", []),
        ("id3v23.mp3", ["-id3v2_version", "3"]),  // UTF-16 text frames
        ("stream.flac", []),
        ("vorbis.ogg", ["-c:a", "libvorbis"]),
        ("stream.opus", ["-c:a", "libopus"]),
        ("flac-in-ogg.oga", ["-c:a", "flac"]),
        ("speex.spx", ["-c:a", "libspeex", "-ar", "16000"]),
        ("moov-at-end.m4a", ["-c:a", "aac"]),
        ("moov-first.m4a", ["-c:a", "aac", "-movflags", "+faststart"]),
    ]

    @Test(arguments: formats.indices)
    func readsWhatFFmpegWrites(index: Int) async throws {
        let (name, options) = Self.formats[index]
        try await withTemporaryDirectory { directory in
            let path = try await makeAudio(directory, name, metadata: Self.metadata, options: options)
            let tags = try readTags(path)
            #expect(tags == Self.expected, "\(name)")
            #expect(tags?.year == 2005)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            if name == "id3v23.mp3" {
                #expect(bytes[3] == 3 && bytes.firstRange(of: [0x01, 0xFF, 0xFE]) != nil, "ID3v2.3 in UTF-16")
            }
            if name.hasSuffix(".m4a") {
                let moov = try #require(bytes.firstRange(of: Array("moov".utf8))).lowerBound
                let mdat = try #require(bytes.firstRange(of: Array("mdat".utf8))).lowerBound
                #expect((moov > mdat) == (name == "moov-at-end.m4a"))
            }
        }
    }

    /// A 2 MB cover before the comments (FLAC) or among the tags (MP3, M4A) is skipped, not read.
    @Test func skipsACoverArtPicture() async throws {
        try await withTemporaryDirectory { directory in
            let picture = directory + "/cover.png"
            try await ffmpeg([
                "-f", "lavfi", "-i", "nullsrc=s=1200x1200,geq=lum='random(1)*255':cb=128:cr=128", "-frames:v", "1",
                picture,
            ])
            for (name, codec) in [("a.mp3", "libmp3lame"), ("a.flac", "flac"), ("a.m4a", "aac")] {
                let audio = try await makeAudio(directory, name, metadata: Self.metadata, options: ["-c:a", codec])
                let path = directory + "/cover-" + name
                try await ffmpeg([
                    "-i", audio, "-i", picture, "-map", "0", "-map", "1", "-c", "copy", "-disposition:v",
                    "attached_pic",
                    path,
                ])
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                defer { close(descriptor) }
                var file = try #require(TagFile(descriptor: descriptor))
                #expect(file.size > 1_900_000)
                #expect(lseek(descriptor, 123, SEEK_SET) == 123)
                #expect(MediaTags.read(&file) == Self.expected, "\(name)")
                #expect(file.bytesRead < 64 * 1024, "\(name)")
                #expect(lseek(descriptor, 0, SEEK_CUR) == 123, "the descriptor's offset is left alone")
            }
        }
    }

    @Test func id3v1FillsWhatID3v2Lacks() async throws {
        try await withTemporaryDirectory { directory in
            let path = try await makeAudio(
                directory, "both.mp3", metadata: ["title=One", "artist=Two", "album=Three", "track=5", "date=1999"],
                options: ["-write_id3v1", "1"])
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            // ID3v1 alone: the ID3v2 tag cut off.
            let id3v2Length = 10 + ID3.synchsafe(bytes, at: 6)
            let onlyVersion1 = Array(bytes[id3v2Length...])
            #expect(
                try readTags(writeFile(onlyVersion1, to: directory + "/v1.mp3"))
                    == MediaTags(title: "One", artist: "Two", album: "Three", trackNumber: 5, date: "1999"))
            // An ID3v2 tag with a title only; the rest from ID3v1.
            bytes = Self.id3v2(version: 4, frames: [Self.frame("TIT2", [3] + Array("Ünïcode".utf8))]) + onlyVersion1
            #expect(
                try readTags(writeFile(bytes, to: directory + "/merged.mp3"))
                    == MediaTags(title: "Ünïcode", artist: "Two", album: "Three", trackNumber: 5, date: "1999"))
        }
    }

    /// ID3v2 by hand: what ffmpeg never writes (unsynchronisation, extended headers, ID3v2.2,
    /// grouping and data length flags, Latin-1 and UTF-16 big endian text).
    @Test func id3v2Variants() async throws {
        let title = Array("Caf".utf8) + [0xE9]  // Latin-1
        let artist: [UInt8] = [0x00, 0x41, 0x00, 0xFF, 0x00, 0x42]  // UTF-16 BE "AÿB": FF 00 unsynchronised
        let version3 = Self.id3v2(
            version: 3, flags: 0x80 | 0x40,
            frames: [[0, 0, 0, 6] + Array(repeating: 0, count: 6)]  // an extended header, its size leaving itself out
                + [Self.frame("TIT2", [0] + title), Self.frame("TPE1", [2] + artist + [0, 0])],
            unsynchronise: true)
        let version4 = Self.id3v2(
            version: 4, flags: 0x40,
            frames: [[0, 0, 0, 6, 1, 0]]  // a synchsafe extended header size counting itself
                + [
                    // A group and a data length before the text; then a frame unsynchronised on its own.
                    Self.frame("TALB", [0x01] + [0, 0, 0, 6] + [3] + Array("Album".utf8), flags: 0x41),
                    Self.frame("TPE1", [0, 0x41, 0xFF, 0x00, 0x42], flags: 0x02),
                    Self.frame("TRCK", [0] + Array("07".utf8)), Self.frame("TDRC", [3] + Array("2024-05-01".utf8)),
                ])
        let version2 = Self.id3v2(
            version: 2,
            frames: [
                [0x54, 0x54, 0x32, 0, 0, 4, 0] + Array("Old".utf8),
                [0x54, 0x59, 0x45, 0, 0, 5, 0] + Array("1998".utf8),
            ])
        try await withTemporaryDirectory { directory in
            let (path3, path4, path2) = try (
                writeFile(version3, to: directory + "/v3.mp3"), writeFile(version4, to: directory + "/v4.mp3"),
                writeFile(version2, to: directory + "/v2.mp3")
            )
            #expect(try readTags(path3) == MediaTags(title: "Café", artist: "AÿB"))
            #expect(try readTags(path4) == MediaTags(artist: "AÿB", album: "Album", trackNumber: 7, date: "2024-05-01"))
            #expect(try readTags(path2) == MediaTags(title: "Old", date: "1998"))
        }
    }

    @Test func noTagsIsNil() async throws {
        try await withTemporaryDirectory { directory in
            let bare = try await makeAudio(
                directory, "bare.mp3", metadata: [], options: ["-map_metadata", "-1", "-fflags", "+bitexact"])
            #expect(try readTags(bare) == nil)
            let wav = try await makeAudio(directory, "bare.wav", metadata: ["title=not read"], options: [])
            #expect(try readTags(wav) == nil)
            #expect(try readTags(writeFile([], to: directory + "/empty")) == nil)
            #expect(try readTags(writeFile(Array("ID3".utf8), to: directory + "/short")) == nil)
            let descriptor = open(directory, O_RDONLY | O_DIRECTORY)
            defer { close(descriptor) }
            #expect(MediaTags.read(descriptor: descriptor) == nil)
            #expect(MediaTags.read(descriptor: -1) == nil)
        }
    }

    @Test func longValuesAreCut() async throws {
        try await withTemporaryDirectory { directory in
            let long = String(repeating: "é", count: 3000)
            for name in ["long.mp3", "long.flac", "long.m4a"] {
                let path = try await makeAudio(
                    directory, name, metadata: ["title=" + long, "artist= \tpadded\t "], options: [])
                let tags = try #require(try readTags(path))
                #expect(tags.title == String(repeating: "é", count: MediaTags.maximumValueBytes / 2), "\(name)")
                #expect(tags.artist == "padded", "\(name)")
            }
        }
    }

    /// Real files mutated (bytes changed, sizes made huge or zero, cut short) and random bytes
    /// behind each format's magic: every read returns, within its bounds.
    @Test func fuzzedFilesNeverCrash() async throws {
        try await withTemporaryDirectory { directory in
            var seeds: [[UInt8]] = []
            for (name, options) in Self.formats {
                let path = try await makeAudio(directory, name, metadata: Self.metadata, options: options)
                seeds.append(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
            }
            let magics = ["ID3", "fLaC", "OggS", "\0\0\0\u{10}ftypM4A ", "TAG"].map { Array($0.utf8) }
            let path = directory + "/fuzzed"
            let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            try #require(descriptor >= 0)
            defer { close(descriptor) }
            var random = SeededRandom(seed: 0x7A65)
            let start = ContinuousClock.now
            for iteration in 0..<3000 {
                var bytes: [UInt8]
                if iteration % 5 == 0 {
                    bytes =
                        magics[Int(random.next() % UInt64(magics.count))]
                        + (0..<Int(random.next() % 4096)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                } else {
                    bytes = seeds[Int(random.next() % UInt64(seeds.count))]
                    Self.mutate(&bytes, &random)
                }
                #expect(ftruncate(descriptor, 0) == 0)
                #expect(bytes.isEmpty || pwrite(descriptor, bytes, bytes.count, 0) == bytes.count)
                var file = try #require(TagFile(descriptor: descriptor))
                if let tags = MediaTags.read(&file) {
                    for value in [tags.title, tags.artist, tags.album, tags.albumArtist, tags.date] {
                        #expect(value.map { !$0.isEmpty && $0.utf8.count <= MediaTags.maximumValueBytes } ?? true)
                    }
                }
                #expect(file.bytesRead <= MediaTags.maximumBytesRead)
            }
            #expect(ContinuousClock.now - start < .seconds(120))
        }
    }

    static func mutate(_ bytes: inout [UInt8], _ random: inout SeededRandom) {
        for _ in 0..<(1 + Int(random.next() % 12)) {
            guard !bytes.isEmpty else { return }
            // Mostly in the first 2 KiB, where the headers are; sometimes anywhere.
            let span = random.next() % 2 == 0 ? min(bytes.count, 2048) : bytes.count
            let position = Int(random.next() % UInt64(span))
            let run = min(4, bytes.count - position)
            switch random.next() % 6 {
            case 0: bytes[position] = UInt8(truncatingIfNeeded: random.next())
            case 1: bytes[position] ^= 1 << UInt8(random.next() % 8)
            case 2: for offset in 0..<run { bytes[position + offset] = 0xFF }
            case 3: for offset in 0..<run { bytes[position + offset] = 0 }
            case 4: bytes[position] = [0x01, 0x7F, 0x80, 0xFE][Int(random.next() % 4)]
            default: bytes.removeLast(Int(random.next() % UInt64(bytes.count)))
            }
        }
    }

    // MARK: ID3v2 by hand

    /// An ID3v2 tag of `frames` (already encoded), unsynchronised if asked (every 0xFF followed
    /// by 0x00 or by a byte of 0xE0 or more gets a 0x00 after it).
    static func id3v2(version: UInt8, flags: UInt8 = 0, frames: [[UInt8]], unsynchronise: Bool = false) -> [UInt8] {
        var body = frames.flatMap { $0 } + [UInt8](repeating: 0, count: 16)  // padding
        if unsynchronise {
            var output: [UInt8] = []
            for (index, byte) in body.enumerated() {
                output.append(byte)
                if byte == 0xFF && (index + 1 == body.count || body[index + 1] == 0 || body[index + 1] >= 0xE0) {
                    output.append(0)
                }
            }
            body = output
        }
        return Array("ID3".utf8) + [version, 0, flags] + synchsafe(body.count) + body
    }

    /// An ID3v2.3 or 2.4 frame (the size synchsafe: the same bytes for sizes under 128).
    static func frame(_ id: String, _ content: [UInt8], flags: UInt8 = 0) -> [UInt8] {
        Array(id.utf8) + synchsafe(content.count) + [0, flags] + content
    }

    static func synchsafe(_ value: Int) -> [UInt8] {
        [21, 14, 7, 0].map { UInt8(value >> $0 & 0x7F) }
    }
}

// MARK: files

/// Runs ffmpeg (required) with `arguments`, quietly, overwriting its output. It waits for ffmpeg
/// without holding a thread of Swift's cooperative pool (a blocking wait there stalled every test
/// with a deadline).
func ffmpeg(_ arguments: [String]) async throws {
    let found = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        .map { $0 + "/ffmpeg" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    let executable = try #require(found, "ffmpeg is required for the tag tests (apt-get install ffmpeg)")
    let result = try await run(executable, ["-nostdin", "-v", "error", "-y"] + arguments, timeout: .seconds(60))
    try #require(result.status == 0, "ffmpeg \(arguments): \(result.stderr)")
}

/// One second of a sine as `directory/name`, in the format its extension names, tagged with
/// `metadata` ("key=value"); its path.
func makeAudio(_ directory: String, _ name: String, metadata: [String], options: [String]) async throws -> String {
    let path = directory + "/" + name
    try await ffmpeg(
        ["-f", "lavfi", "-i", "sine=frequency=440:duration=1"] + metadata.flatMap { ["-metadata", $0] } + options
            + [path])
    return path
}

/// The tags of the file at `path`.
func readTags(_ path: String) throws -> MediaTags? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    try #require(descriptor >= 0, "open \(path): errno \(errno)")
    defer { close(descriptor) }
    return MediaTags.read(descriptor: descriptor)
}

/// Writes `bytes` to `path`; the path.
func writeFile(_ bytes: [UInt8], to path: String) throws -> String {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
}
