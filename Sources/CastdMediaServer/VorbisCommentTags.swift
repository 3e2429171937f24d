/// Vorbis comments for ``MediaTags``: in a FLAC stream's VORBIS_COMMENT block, and in the
/// comment header of an Ogg stream (Vorbis, Opus, FLAC, Speex).
enum VorbisComment {
    /// The most FLAC metadata blocks walked.
    static let maximumBlocks = 256
    /// The most of a comment block read.
    static let maximumCommentBytes = 1024 * 1024
    /// The most comments looked at.
    static let maximumComments = 4096
    /// The most Ogg pages looked at.
    static let maximumPages = 512

    static let fields: [String: MediaTags.Field] = [
        "TITLE": .title, "ARTIST": .artist, "ALBUM": .album,
        "ALBUMARTIST": .albumArtist, "ALBUM ARTIST": .albumArtist, "ALBUM_ARTIST": .albumArtist,
        "TRACKNUMBER": .track, "TRACKTOTAL": .trackCount, "TOTALTRACKS": .trackCount,
        "DISCNUMBER": .disc, "DISCTOTAL": .discCount, "TOTALDISCS": .discCount,
        "DATE": .date, "YEAR": .date,
    ]

    /// Reads the VORBIS_COMMENT block of the FLAC stream ("fLaC") at `offset`.
    static func readFLAC(_ file: inout TagFile, at offset: Int, into tags: inout MediaTags) {
        var position = offset + 4
        for _ in 0..<maximumBlocks {
            let header = file.read(at: position, count: 4)
            guard header.count == 4 else { return }
            let type = header[0] & 0x7F
            let length = header.bigEndian(at: 1, count: 3)
            guard type != 127 else { return }  // invalid
            if type == 4 {
                parse(file.read(at: position + 4, count: min(length, maximumCommentBytes)), into: &tags)
                return
            }
            guard header[0] & 0x80 == 0 else { return }  // the last block
            position += 4 + length
        }
    }

    /// Reads the comment header, the second packet of the first logical stream, from the first
    /// ``MediaTags/oggBytes`` of an Ogg file (a packet cut there is read as far as it goes).
    static func readOgg(_ file: inout TagFile, into tags: inout MediaTags) {
        let packets = firstPackets(file.read(at: 0, count: MediaTags.oggBytes))
        guard packets.count == 2 else { return }
        let (first, second) = (packets[0], packets[1])
        let comments: ArraySlice<UInt8>
        if first.starts(with: [1] + Array("vorbis".utf8)), second.starts(with: [3] + Array("vorbis".utf8)) {
            comments = second.dropFirst(7)
        } else if first.starts(with: Array("OpusHead".utf8)), second.starts(with: Array("OpusTags".utf8)) {
            comments = second.dropFirst(8)
        } else if first.starts(with: [0x7F] + Array("FLAC".utf8)), second.first.map({ $0 & 0x7F }) == 4 {
            comments = second.dropFirst(4)  // a FLAC metadata block
        } else if first.starts(with: Array("Speex   ".utf8)) {
            comments = second[...]
        } else {
            return
        }
        parse(Array(comments), into: &tags)
    }

    /// The first two packets of the first logical stream in the Ogg pages of `bytes`: fewer when
    /// `bytes` end first (a packet cut there is the last, as far as it goes).
    static func firstPackets(_ bytes: [UInt8]) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        var packet: [UInt8] = []
        var serial: Int?
        var position = 0
        for _ in 0..<maximumPages {
            guard position <= bytes.count - 27, bytes[position..<position + 4].elementsEqual("OggS".utf8) else { break }
            let segments = Int(bytes[position + 26])
            guard position + 27 + segments <= bytes.count else { break }
            let lacing = bytes[(position + 27)..<(position + 27 + segments)]
            let pageSerial = bytes.bigEndian(at: position + 14, count: 4)
            serial = serial ?? pageSerial
            var cursor = position + 27 + segments
            for value in lacing {
                let end = min(cursor + Int(value), bytes.count)
                if pageSerial == serial {
                    packet += bytes[min(cursor, end)..<end]
                    if value < 255 {
                        packets.append(packet)
                        packet = []
                        if packets.count == 2 { return packets }
                    }
                }
                cursor += Int(value)
            }
            position = cursor
        }
        if !packet.isEmpty { packets.append(packet) }
        return packets
    }

    /// Fills `tags` from a Vorbis comment structure (vendor string, count, "KEY=value" comments;
    /// little-endian lengths), as far as `bytes` go.
    static func parse(_ bytes: [UInt8], into tags: inout MediaTags) {
        guard let vendorLength = bytes.littleEndian32(at: 0), vendorLength <= bytes.count - 8,
            let count = bytes.littleEndian32(at: 4 + vendorLength)
        else { return }
        var position = 8 + vendorLength
        for _ in 0..<min(count, maximumComments) {
            guard let length = bytes.littleEndian32(at: position), length <= bytes.count - position - 4 else { return }
            let comment = bytes[(position + 4)..<(position + 4 + length)]
            position += 4 + length
            guard let equals = comment.prefix(32).firstIndex(of: 0x3D) else { continue }
            let key = String(decoding: comment[comment.startIndex..<equals], as: UTF8.self).uppercased()
            guard let field = fields[key], tags.missing(field) else { continue }
            let value = comment[(equals + 1)...].prefix(4 * MediaTags.maximumValueBytes)
            tags.fill(field, String(decoding: value, as: UTF8.self))
        }
    }
}
