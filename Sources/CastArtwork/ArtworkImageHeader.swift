/// An image's size as its header gives it, read from the first bytes of the body, without
/// decoding the image: what lets the fetcher refuse an image too large to show (a 60000×60000
/// PNG is a few kilobytes and gigabytes once a desktop decodes it) before it is stored.
///
/// - PNG: the IHDR chunk, which must come first (bytes 8 to 23).
/// - JPEG: the first SOFn segment (baseline, progressive, lossless, arithmetic), found by
///   walking the segments before it (APPn, DQT, DHT, comments …) by their lengths.
/// - GIF: the logical screen (bytes 6 to 9).
/// - WebP: the VP8 (lossy) frame header, the VP8L (lossless) header, or the VP8X canvas.
///
/// Every read is bounds-checked: a header cut short is ``Reading/needMore`` until the body
/// ends, and one that breaks its format's rules is ``Reading/malformed(_:)``.
package enum ArtworkImageHeader {
    /// The most pixels either side of an image may have.
    package static let maximumSide = 8192

    package enum Reading: Sendable, Hashable {
        case size(width: Int, height: Int)
        /// The bytes so far end before the size: more are needed.
        case needMore
        /// The header breaks its format's rules: why.
        case malformed(String)
    }

    /// The size `bytes` (the start of an image of `format`) give.
    package static func read(_ bytes: [UInt8], format: ArtworkFormat) -> Reading {
        var reader = ByteReader(bytes: bytes)
        switch format {
        case .png: return png(&reader)
        case .jpeg: return jpeg(&reader)
        case .gif: return gif(&reader)
        case .webp: return webp(&reader)
        }
    }

    private static func png(_ reader: inout ByteReader) -> Reading {
        reader.offset = 8
        guard let length = reader.bigEndian(4), let type = reader.bytes(4), let width = reader.bigEndian(4),
            let height = reader.bigEndian(4)
        else { return .needMore }
        guard type == Array("IHDR".utf8) else { return .malformed("its first chunk is not IHDR") }
        guard length == 13 else { return .malformed("its IHDR chunk is \(length) bytes long, not 13") }
        guard width > 0, height > 0 else { return .malformed("its IHDR gives a size of \(width)×\(height)") }
        return .size(width: width, height: height)
    }

    private static func gif(_ reader: inout ByteReader) -> Reading {
        reader.offset = 6
        guard let width = reader.littleEndian(2), let height = reader.littleEndian(2) else { return .needMore }
        return .size(width: width, height: height)
    }

    private static func jpeg(_ reader: inout ByteReader) -> Reading {
        reader.offset = 2  // after SOI, FF D8
        while true {
            // A marker: FF, any number of FF fill bytes, then its code.
            guard let first = reader.byte() else { return .needMore }
            guard first == 0xFF else { return .malformed("a segment does not start with a marker") }
            var code: UInt8 = 0xFF
            while code == 0xFF {
                guard let next = reader.byte() else { return .needMore }
                code = next
            }
            switch code {
            case 0xD0...0xD7, 0x01:
                continue  // RSTn, TEM: no length
            case 0x00, 0xD8:
                return .malformed("it has a misplaced marker (FF \(hex(code)))")
            case 0xD9, 0xDA:
                return .malformed("its image data starts before any frame header (SOFn)")
            default:
                break
            }
            guard let length = reader.bigEndian(2) else { return .needMore }
            guard length >= 2 else { return .malformed("a segment's length is \(length)") }
            // SOF0…SOF15, but DHT (C4), JPG (C8) and DAC (CC), which share the range.
            if (0xC0...0xCF).contains(code) && code != 0xC4 && code != 0xC8 && code != 0xCC {
                guard length >= 8 else { return .malformed("its frame header (SOFn) is \(length) bytes long") }
                guard reader.byte() != nil, let height = reader.bigEndian(2), let width = reader.bigEndian(2) else {
                    return .needMore
                }
                return .size(width: width, height: height)
            }
            guard reader.skip(length - 2) else { return .needMore }
        }
    }

    private static func webp(_ reader: inout ByteReader) -> Reading {
        reader.offset = 12  // after RIFF, the size, WEBP
        guard let chunk = reader.bytes(4), reader.skip(4) else { return .needMore }
        switch String(decoding: chunk, as: UTF8.self) {
        case "VP8 ":
            // A frame tag (3 bytes), the start code 9D 01 2A, then 14-bit width and height.
            guard reader.skip(3), let start = reader.bytes(3), let width = reader.littleEndian(2),
                let height = reader.littleEndian(2)
            else { return .needMore }
            guard start == [0x9D, 0x01, 0x2A] else { return .malformed("its VP8 frame has no start code") }
            return .size(width: width & 0x3FFF, height: height & 0x3FFF)
        case "VP8L":
            // The signature 2F, then width − 1 and height − 1 in 14 bits each, least significant first.
            guard let signature = reader.byte(), let bits = reader.littleEndian(4) else { return .needMore }
            guard signature == 0x2F else { return .malformed("its VP8L header has no signature") }
            return .size(width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1)
        case "VP8X":
            // Flags and reserved (4 bytes), then the canvas's width − 1 and height − 1 in 24 bits each.
            guard reader.skip(4), let width = reader.littleEndian(3), let height = reader.littleEndian(3) else {
                return .needMore
            }
            return .size(width: width + 1, height: height + 1)
        default:
            return .malformed("its first chunk is not VP8, VP8L or VP8X")
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
    }
}

/// Reads a byte array forward; every read returns nil, and moves nothing, past the end.
private struct ByteReader {
    let bytes: [UInt8]
    var offset = 0

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func bytes(_ count: Int) -> [UInt8]? {
        guard count >= 0, count <= bytes.count - offset else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= bytes.count - offset else { return false }
        offset += count
        return true
    }

    mutating func bigEndian(_ count: Int) -> Int? {
        bytes(count)?.reduce(0) { $0 << 8 | Int($1) }
    }

    mutating func littleEndian(_ count: Int) -> Int? {
        bytes(count)?.reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}
