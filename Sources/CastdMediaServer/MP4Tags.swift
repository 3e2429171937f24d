/// MP4 (M4A) iTunes metadata for ``MediaTags``: the items of moov/udta/meta/ilst (or
/// moov/meta/ilst), found by walking boxes by their sizes with a read of each header, so the
/// moov may be anywhere among the top-level boxes and media data is never read.
enum MP4Tags {
    /// The most boxes walked at one level.
    static let maximumBoxes = 1024
    /// The most of an item's data read.
    static let maximumItemBytes = 8 * 1024

    struct Box {
        var type: [UInt8]
        /// Where its content starts, and its end.
        var content: Range<Int>
    }

    static let fields: [[UInt8]: MediaTags.Field] = [
        [0xA9] + Array("nam".utf8): .title, [0xA9] + Array("ART".utf8): .artist,
        [0xA9] + Array("alb".utf8): .album, Array("aART".utf8): .albumArtist,
        Array("trkn".utf8): .track, Array("disk".utf8): .disc, [0xA9] + Array("day".utf8): .date,
    ]

    static func read(_ file: inout TagFile, into tags: inout MediaTags) {
        guard let moov = child("moov", of: 0..<file.size, in: &file) else { return }
        var meta = child("meta", of: moov.content, in: &file)
        if let udta = child("udta", of: moov.content, in: &file),
            let inUdta = child("meta", of: udta.content, in: &file)
        {
            meta = inUdta
        }
        guard var meta else { return }
        // ISO's meta is a full box (version and flags first); QuickTime's is not, its first child
        // (hdlr) right away.
        if file.read(at: meta.content.lowerBound + 4, count: 4) != Array("hdlr".utf8) {
            guard meta.content.count >= 4 else { return }
            meta.content = (meta.content.lowerBound + 4)..<meta.content.upperBound
        }
        guard let ilst = child("ilst", of: meta.content, in: &file) else { return }
        walk(ilst.content, in: &file) { item, file in
            guard let field = fields[item.type], tags.missing(field) else { return true }
            guard let data = child("data", of: item.content, in: &file) else { return true }
            let bytes = file.read(at: data.content.lowerBound, count: min(data.content.count, maximumItemBytes))
            guard bytes.count >= 8 else { return true }
            let type = bytes.bigEndian(at: 1, count: 3)
            let value = Array(bytes[8...])
            switch field {
            case .track, .disc:
                // Binary: two reserved bytes, the number, the count.
                guard value.count >= 6 else { return true }
                tags.fill(field, "\(value.bigEndian(at: 2, count: 2))/\(value.bigEndian(at: 4, count: 2))")
            default:
                switch type {
                case 1: tags.fill(field, String(decoding: value, as: UTF8.self))
                case 2: tags.fill(field, MediaTags.utf16(value, littleEndian: false))
                default: break
                }
            }
            return true
        }
    }

    /// The first box of `type` among those in `range`.
    static func child(_ type: String, of range: Range<Int>, in file: inout TagFile) -> Box? {
        let wanted = Array(type.utf8)
        var found: Box?
        walk(range, in: &file) { box, _ in
            guard box.type == wanted else { return true }
            found = box
            return false
        }
        return found
    }

    /// Calls `body` with each box in `range` (at most ``maximumBoxes``) until it returns false;
    /// stops at a box whose size is wrong (smaller than its header, or past the range's end).
    static func walk(_ range: Range<Int>, in file: inout TagFile, _ body: (Box, inout TagFile) -> Bool) {
        var position = range.lowerBound
        for _ in 0..<maximumBoxes {
            guard range.upperBound - position >= 8 else { return }
            let header = file.read(at: position, count: 16)
            guard header.count >= 8 else { return }
            var size = header.bigEndian(at: 0, count: 4)
            var headerLength = 8
            if size == 1 {
                // A 64-bit size, which must fit an Int.
                guard header.count == 16, header[8] < 0x80 else { return }
                size = header.bigEndian(at: 8, count: 8)
                headerLength = 16
            } else if size == 0 {
                size = range.upperBound - position  // to the end
            }
            guard size >= headerLength, size <= range.upperBound - position else { return }
            let box = Box(type: Array(header[4..<8]), content: (position + headerLength)..<(position + size))
            guard body(box, &file) else { return }
            position += size
        }
    }
}
