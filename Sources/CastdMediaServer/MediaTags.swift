#if canImport(Glibc)
    import Glibc
#endif

/// An audio file's tags, what castd shows for a file cast without a title: read from an open
/// descriptor (castd holds only that) with pread, bounded in what it reads and keeps.
///
/// Formats: MP3's ID3v2.2, 2.3 and 2.4 (ID3v1 at the end of any file fills what they lack),
/// FLAC's Vorbis comment (after an ID3v2 tag too), Ogg Vorbis, Opus, FLAC and Speex comment
/// headers within the file's first ``oggBytes``, and MP4 (M4A) iTunes metadata
/// (moov/udta/meta/ilst, the moov wherever it is among the top-level boxes).
public struct MediaTags: Equatable, Sendable {
    public var title: String?
    public var artist: String?
    public var album: String?
    public var albumArtist: String?
    public var trackNumber: Int?
    /// The tracks on the album ("3/12": 12).
    public var trackCount: Int?
    public var discNumber: Int?
    public var discCount: Int?
    /// The date as tagged: "2024", "2024-05-01"…
    public var date: String?

    public init(
        title: String? = nil, artist: String? = nil, album: String? = nil, albumArtist: String? = nil,
        trackNumber: Int? = nil, trackCount: Int? = nil, discNumber: Int? = nil, discCount: Int? = nil,
        date: String? = nil
    ) {
        self.title = title
        self.artist = artist
        self.album = album
        self.albumArtist = albumArtist
        self.trackNumber = trackNumber
        self.trackCount = trackCount
        self.discNumber = discNumber
        self.discCount = discCount
        self.date = date
    }

    /// The year: the date's first four characters, when they are digits.
    public var year: Int? {
        guard let date, date.utf8.count >= 4 else { return nil }
        let digits = date.utf8.prefix(4)
        guard digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    public var isEmpty: Bool { self == MediaTags() }

    /// The longest value kept, in UTF-8 bytes: longer ones are cut (at a character's boundary).
    public static let maximumValueBytes = 1024
    /// The most bytes one ``read(descriptor:)`` reads from the file, whatever it says.
    public static let maximumBytesRead = 4 * 1024 * 1024
    /// The most reads (pread calls) one ``read(descriptor:)`` makes.
    public static let maximumReads = 4096
    /// How much of an Ogg file's start is read for its comment header.
    public static let oggBytes = 256 * 1024

    /// The tags of the regular file open for reading at `descriptor` (its offset is left alone);
    /// nil when it has none this reader knows, or cannot be read. Never more than
    /// ``maximumBytesRead`` bytes read; anything in the file may be wrong or hostile.
    public static func read(descriptor: Int32) -> MediaTags? {
        guard var file = TagFile(descriptor: descriptor) else { return nil }
        return read(&file)
    }

    /// The tags of `file` (see ``read(descriptor:)``).
    static func read(_ file: inout TagFile) -> MediaTags? {
        var tags = MediaTags()
        let head = file.read(at: 0, count: 12)
        if head.starts(with: Array("ID3".utf8)) {
            if let end = ID3.readVersion2(&file, at: 0, into: &tags),
                file.read(at: end, count: 4) == Array("fLaC".utf8)
            {
                VorbisComment.readFLAC(&file, at: end, into: &tags)
            }
        } else if head.starts(with: Array("fLaC".utf8)) {
            VorbisComment.readFLAC(&file, at: 0, into: &tags)
        } else if head.starts(with: Array("OggS".utf8)) {
            VorbisComment.readOgg(&file, into: &tags)
        } else if head.count >= 8 && head[4..<8].elementsEqual("ftyp".utf8) {
            MP4Tags.read(&file, into: &tags)
        }
        ID3.readVersion1(&file, into: &tags)
        return tags.isEmpty ? nil : tags
    }

    // MARK: filling in

    /// The tags each format maps its own names to.
    enum Field {
        case title, artist, album, albumArtist, track, trackCount, disc, discCount, date
    }

    /// Sets `field` from the text `value` unless it has a value already (the first one found
    /// wins): text cleaned (``cleaned(_:)``); for the numbers, the leading digits, and for
    /// track and disc a count after a "/" ("3/12").
    mutating func fill(_ field: Field, _ value: String) {
        switch field {
        case .title: fillText(\.title, value)
        case .artist: fillText(\.artist, value)
        case .album: fillText(\.album, value)
        case .albumArtist: fillText(\.albumArtist, value)
        case .date: fillText(\.date, value)
        case .track:
            let (number, count) = Self.numberPair(value)
            fillNumber(\.trackNumber, number)
            fillNumber(\.trackCount, count)
        case .disc:
            let (number, count) = Self.numberPair(value)
            fillNumber(\.discNumber, number)
            fillNumber(\.discCount, count)
        case .trackCount: fillNumber(\.trackCount, Self.numberPair(value).0)
        case .discCount: fillNumber(\.discCount, Self.numberPair(value).0)
        }
    }

    mutating func fillText(_ keyPath: WritableKeyPath<MediaTags, String?>, _ value: String) {
        guard self[keyPath: keyPath] == nil else { return }
        self[keyPath: keyPath] = Self.cleaned(value)
    }

    mutating func fillNumber(_ keyPath: WritableKeyPath<MediaTags, Int?>, _ value: Int?) {
        guard self[keyPath: keyPath] == nil, let value, value > 0 else { return }
        self[keyPath: keyPath] = value
    }

    /// `value` with control characters as spaces, trimmed, cut to ``maximumValueBytes``; nil if empty.
    static func cleaned(_ value: String) -> String? {
        var scalars = String.UnicodeScalarView()
        var bytes = 0
        for scalar in value.unicodeScalars {
            let kept: Unicode.Scalar = scalar.value < 0x20 || scalar.value == 0x7F ? " " : scalar
            bytes += UTF8.width(kept)
            guard bytes <= maximumValueBytes else { break }
            scalars.append(kept)
        }
        let text = String(scalars)
        let trimmed = text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()
        return trimmed.isEmpty ? nil : String(trimmed)
    }

    /// "3/12" → (3, 12), "03" → (3, nil), " 7 of 9" → (7, nil): the leading digits (after white
    /// space; at most six) and those after a "/".
    static func numberPair(_ value: String) -> (Int?, Int?) {
        var bytes = value.utf8.drop { $0 == 0x20 }[...]
        func number() -> Int? {
            let digits = bytes.prefix { (0x30...0x39).contains($0) }
            bytes = bytes.dropFirst(digits.count)
            guard !digits.isEmpty, digits.count <= 6 else { return nil }
            return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        let first = number()
        bytes = bytes.drop { $0 == 0x20 }
        guard bytes.first == 0x2F else { return (first, nil) }
        bytes = bytes.dropFirst().drop { $0 == 0x20 }
        return (first, number())
    }

    // MARK: text in files

    /// Latin-1 `bytes` as text.
    static func latin1(_ bytes: some Collection<UInt8>) -> String {
        String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    /// UTF-16 `bytes` as text (ill-formed: U+FFFD); with `littleEndian` nil, a byte order mark
    /// decides (and is dropped), little endian without one.
    static func utf16(_ bytes: some Collection<UInt8>, littleEndian: Bool?) -> String {
        let bytes = Array(bytes)
        var little = littleEndian ?? true
        var start = 0
        if littleEndian == nil && bytes.count >= 2 {
            if bytes[0] == 0xFF && bytes[1] == 0xFE {
                start = 2
            } else if bytes[0] == 0xFE && bytes[1] == 0xFF {
                little = false
                start = 2
            }
        }
        var units: [UInt16] = []
        var index = start
        while index + 1 < bytes.count {
            let (first, second) = (UInt16(bytes[index]), UInt16(bytes[index + 1]))
            units.append(little ? first | second << 8 : first << 8 | second)
            index += 2
        }
        return String(decoding: units, as: UTF16.self)
    }
}

/// A file read with pread within ``MediaTags``'s bounds: every offset and count checked against
/// the file's size and what remains of the budget; a read past them returns fewer bytes.
struct TagFile {
    let descriptor: Int32
    let size: Int
    private var bytesLeft = MediaTags.maximumBytesRead
    private var readsLeft = MediaTags.maximumReads

    /// Nil for a descriptor that is not a regular file.
    init?(descriptor: Int32) {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size >= 0 else {
            return nil
        }
        self.descriptor = descriptor
        self.size = Int(status.st_size)
    }

    /// Up to `count` bytes at `offset`: fewer at the end of the file, when the budget runs out,
    /// or on an error; none for a negative offset or count.
    mutating func read(at offset: Int, count: Int) -> [UInt8] {
        guard offset >= 0, count > 0, offset < size, readsLeft > 0 else { return [] }
        let wanted = min(count, size - offset, bytesLeft)
        guard wanted > 0 else { return [] }
        readsLeft -= 1
        bytesLeft -= wanted
        var buffer = [UInt8](repeating: 0, count: wanted)
        let got = buffer.withUnsafeMutableBytes { raw -> Int in
            var done = 0
            while done < wanted {
                let result = pread(descriptor, raw.baseAddress! + done, wanted - done, off_t(offset + done))
                if result < 0 && errno == EINTR { continue }
                guard result > 0 else { break }
                done += result
            }
            return done
        }
        buffer.removeLast(wanted - got)
        return buffer
    }

    /// How many bytes the reads so far asked for and got (or failed to get).
    var bytesRead: Int { MediaTags.maximumBytesRead - bytesLeft }
}

extension Array where Element == UInt8 {
    /// The big-endian number in `count` bytes at `offset` (0 where the array is short).
    func bigEndian(at offset: Int, count: Int) -> Int {
        var value = 0
        for index in offset..<offset + count {
            value = value << 8 | (index >= 0 && index < self.count ? Int(self[index]) : 0)
        }
        return value
    }

    /// The little-endian 32-bit number at `offset`; nil where the array is short.
    func littleEndian32(at offset: Int) -> Int? {
        guard offset >= 0, offset <= count - 4 else { return nil }
        return Int(self[offset]) | Int(self[offset + 1]) << 8 | Int(self[offset + 2]) << 16 | Int(self[offset + 3])
            << 24
    }
}
