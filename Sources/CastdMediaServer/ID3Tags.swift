/// ID3 tags for ``MediaTags``: ID3v2.2, 2.3 and 2.4 at a file's start, ID3v1 at its end.
enum ID3 {
    /// The most frames looked at in a tag.
    static let maximumFrames = 512
    /// The most of a tag read whole, to undo its unsynchronisation (ID3v2.2 and 2.3).
    static let maximumUnsynchronisedTag = 1024 * 1024
    /// The most of one frame read.
    static let maximumFrameBytes = 8 * 1024

    static let fields: [String: MediaTags.Field] = [
        "TIT2": .title, "TPE1": .artist, "TALB": .album, "TPE2": .albumArtist, "TRCK": .track, "TPOS": .disc,
        "TYER": .date, "TDRC": .date,
        // ID3v2.2's three-letter names
        "TT2": .title, "TP1": .artist, "TAL": .album, "TP2": .albumArtist, "TRK": .track, "TPA": .disc,
        "TYE": .date,
    ]

    /// Reads the ID3v2 tag at `offset` into `tags`; the offset after the tag (what follows it:
    /// audio, or a FLAC stream), nil for no ID3v2 tag there.
    static func readVersion2(_ file: inout TagFile, at offset: Int, into tags: inout MediaTags) -> Int? {
        let header = file.read(at: offset, count: 10)
        guard header.count == 10, header.starts(with: Array("ID3".utf8)), (2...4).contains(header[3]),
            header[6..<10].allSatisfy({ $0 < 0x80 })
        else { return nil }
        let version = header[3]
        let flags = header[5]
        let size = synchsafe(header, at: 6)
        let bodyStart = offset + 10
        let end = bodyStart + size + (version == 4 && flags & 0x10 != 0 ? 10 : 0)
        // ID3v2.2's compression flag: no scheme was ever defined; nothing to read.
        if version == 2 && flags & 0x40 != 0 { return end }
        let unsynchronised = flags & 0x80 != 0
        if unsynchronised && version < 4 {
            // The whole tag was unsynchronised, frame headers with it: read it, undo that, then walk it.
            let body = removingUnsynchronisation(file.read(at: bodyStart, count: min(size, maximumUnsynchronisedTag)))
            readFrames(version: version, flags: flags, size: body.count, into: &tags) { position, count in
                Array(body[min(position, body.count)..<min(position + min(count, body.count), body.count)])
            }
        } else {
            readFrames(version: version, flags: flags, size: size, into: &tags) { position, count in
                file.read(at: bodyStart + position, count: count)
            }
        }
        return end
    }

    /// Walks the frames of a tag's body of `size` bytes (read through `read(position, count)`),
    /// by their sizes: only the frames of ``fields`` are read.
    private static func readFrames(
        version: UInt8, flags: UInt8, size: Int, into tags: inout MediaTags, read: (Int, Int) -> [UInt8]
    ) {
        var position = 0
        if flags & 0x40 != 0 && version >= 3 {
            let extended = read(0, 4)
            guard extended.count == 4 else { return }
            // ID3v2.3: a plain size that leaves itself out; ID3v2.4: a synchsafe size that counts itself.
            position = version == 3 ? 4 + extended.bigEndian(at: 0, count: 4) : synchsafe(extended, at: 0)
        }
        let headerLength = version == 2 ? 6 : 10
        let idLength = version == 2 ? 3 : 4
        for _ in 0..<maximumFrames {
            guard position >= 0, position <= size - headerLength else { return }
            let header = read(position, headerLength)
            guard header.count == headerLength,
                header[0..<idLength].allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) })
            else { return }  // padding, or not a frame
            let frameSize: Int
            switch version {
            case 2: frameSize = header.bigEndian(at: 3, count: 3)
            case 3: frameSize = header.bigEndian(at: 4, count: 4)
            default:
                // Synchsafe, but for the writers (old iTunes) that wrote plain sizes in ID3v2.4.
                frameSize =
                    header[4..<8].allSatisfy { $0 < 0x80 }
                    ? synchsafe(header, at: 4) : header.bigEndian(at: 4, count: 4)
            }
            let dataStart = position + headerLength
            guard frameSize <= size - dataStart else { return }
            let id = String(decoding: header[0..<idLength], as: UTF8.self)
            if let field = fields[id], tags.missing(field) {
                let data = read(dataStart, min(frameSize, maximumFrameBytes))
                let formatFlags = version == 2 ? 0 : header[9]
                if let payload = payload(data, version: version, formatFlags: formatFlags, tagFlags: flags),
                    let text = text(payload)
                {
                    tags.fill(field, text)
                }
            }
            position = dataStart + frameSize
        }
    }

    /// A frame's content without what its format flags add; nil for a frame compressed or encrypted.
    private static func payload(_ data: [UInt8], version: UInt8, formatFlags: UInt8, tagFlags: UInt8) -> [UInt8]? {
        var data = data[...]
        if version == 3 {
            guard formatFlags & 0xC0 == 0 else { return nil }
            if formatFlags & 0x20 != 0 { data = data.dropFirst() }  // group
        } else if version == 4 {
            guard formatFlags & 0x0C == 0 else { return nil }
            if formatFlags & 0x40 != 0 { data = data.dropFirst() }  // group
            if formatFlags & 0x01 != 0 { data = data.dropFirst(4) }  // data length
            if formatFlags & 0x02 != 0 || tagFlags & 0x80 != 0 { return removingUnsynchronisation(Array(data)) }
        }
        return Array(data)
    }

    /// A text frame's first string, in the encoding its first byte names: 0 Latin-1, 1 UTF-16
    /// with a byte order mark, 2 UTF-16 big endian, 3 UTF-8; nil for another.
    static func text(_ payload: [UInt8]) -> String? {
        guard let encoding = payload.first else { return nil }
        let body = payload.dropFirst()
        switch encoding {
        case 0: return MediaTags.latin1(body.prefix { $0 != 0 })
        case 3: return String(decoding: body.prefix { $0 != 0 }, as: UTF8.self)
        case 1, 2:
            var end = body.startIndex
            while end + 1 < body.endIndex && (body[end] != 0 || body[end + 1] != 0) { end += 2 }
            return MediaTags.utf16(
                body[body.startIndex..<min(end, body.endIndex)], littleEndian: encoding == 1 ? nil : false)
        default: return nil
        }
    }

    /// The 28-bit number in four bytes of seven bits at `offset`.
    static func synchsafe(_ bytes: [UInt8], at offset: Int) -> Int {
        (offset..<offset + 4).reduce(0) { $0 << 7 | Int(bytes[$1] & 0x7F) }
    }

    /// `bytes` with each 0xFF 0x00 made 0xFF.
    static func removingUnsynchronisation(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var previous: UInt8 = 0
        for byte in bytes {
            if !(previous == 0xFF && byte == 0) { output.append(byte) }
            previous = byte
        }
        return output
    }

    /// Fills what `tags` lack from an ID3v1 (or 1.1) tag in the file's last 128 bytes.
    static func readVersion1(_ file: inout TagFile, into tags: inout MediaTags) {
        guard file.size >= 128 else { return }
        let tag = file.read(at: file.size - 128, count: 128)
        guard tag.count == 128, tag.starts(with: Array("TAG".utf8)) else { return }
        func text(_ range: Range<Int>) -> String {
            let bytes = Array(tag[range].prefix { $0 != 0 })
            // Latin-1 by the letter; UTF-8 in practice from some writers.
            return SubtitleText.isWellFormedUTF8(bytes)
                ? String(decoding: bytes, as: UTF8.self) : MediaTags.latin1(bytes)
        }
        tags.fill(.title, text(3..<33))
        tags.fill(.artist, text(33..<63))
        tags.fill(.album, text(63..<93))
        tags.fill(.date, text(93..<97))
        if tag[125] == 0 && tag[126] != 0 { tags.fill(.track, String(tag[126])) }
    }
}

extension MediaTags {
    /// Whether `field` has no value yet (a frame for it is worth reading).
    func missing(_ field: Field) -> Bool {
        switch field {
        case .title: title == nil
        case .artist: artist == nil
        case .album: album == nil
        case .albumArtist: albumArtist == nil
        case .track: trackNumber == nil
        case .trackCount: trackCount == nil
        case .disc: discNumber == nil
        case .discCount: discCount == nil
        case .date: date == nil
        }
    }
}
