/// The text of a subtitle file as UTF-8, whatever encoding it came in: what people's SubRip files
/// actually are (UTF-8 with or without a byte order mark, UTF-16 with one, or an 8-bit Windows
/// code page).
enum SubtitleText {
    /// The encoding `bytes` are read in.
    enum Encoding: Equatable {
        case utf8, utf16LittleEndian, utf16BigEndian, windows1252
    }

    /// `bytes` as UTF-8, without a byte order mark:
    /// - a UTF-8 byte order mark: UTF-8 (ill-formed sequences become U+FFFD);
    /// - a UTF-16 byte order mark (FF FE, FE FF), or no mark but the pattern of UTF-16 text (every
    ///   other byte zero): UTF-16 (an odd last byte is dropped; unpaired surrogates become U+FFFD);
    /// - else well-formed UTF-8 as it is; UTF-8 with a few ill-formed sequences (more well-formed
    ///   characters of several bytes than ill-formed sequences: a stray Latin-1 byte in a UTF-8
    ///   file) as UTF-8, those as U+FFFD; anything else as Windows-1252 (Latin-1 with the
    ///   printable characters Windows puts at 0x80–0x9F).
    static func utf8(_ bytes: [UInt8]) -> (bytes: [UInt8], encoding: Encoding) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            let body = Array(bytes.dropFirst(3))
            return (isWellFormedUTF8(body) ? body : Array(String(decoding: body, as: UTF8.self).utf8), .utf8)
        }
        if bytes.starts(with: [0xFF, 0xFE]) {
            return (fromUTF16(bytes.dropFirst(2), littleEndian: true), .utf16LittleEndian)
        }
        if bytes.starts(with: [0xFE, 0xFF]) {
            return (fromUTF16(bytes.dropFirst(2), littleEndian: false), .utf16BigEndian)
        }
        if let littleEndian = looksLikeUTF16(bytes) {
            return (
                fromUTF16(bytes[...], littleEndian: littleEndian),
                littleEndian ? .utf16LittleEndian : .utf16BigEndian
            )
        }
        if isWellFormedUTF8(bytes) { return (bytes, .utf8) }
        if isMostlyUTF8(bytes) { return (Array(String(decoding: bytes, as: UTF8.self).utf8), .utf8) }
        return (fromWindows1252(bytes), .windows1252)
    }

    static func isWellFormedUTF8(_ bytes: [UInt8]) -> Bool {
        // The standard library's validation: fast in a debug build too, unlike a loop here.
        String(validating: bytes, as: UTF8.self) != nil
    }

    /// Whether ill-formed UTF-8 `bytes` have more well-formed characters of two to four bytes
    /// than ill-formed sequences.
    static func isMostlyUTF8(_ bytes: [UInt8]) -> Bool {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var characters = 0
        var errors = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): if encoded.count > 1 { characters += 1 }
            case .error: errors += 1
            case .emptyInput: return characters > errors
            }
        }
    }

    /// Without a byte order mark: whether the first bytes look like UTF-16 text (ASCII in UTF-16:
    /// nine pairs in ten with a zero high byte and a non-zero low one); true for little endian,
    /// false for big endian, nil for neither.
    static func looksLikeUTF16(_ bytes: [UInt8]) -> Bool? {
        let pairs = min(bytes.count, 512) / 2
        guard pairs >= 2 else { return nil }
        var little = 0
        var big = 0
        for pair in 0..<pairs {
            let first = bytes[2 * pair]
            let second = bytes[2 * pair + 1]
            if first != 0 && second == 0 { little += 1 }
            if first == 0 && second != 0 { big += 1 }
        }
        if little * 10 >= pairs * 9 { return true }
        if big * 10 >= pairs * 9 { return false }
        return nil
    }

    static func fromUTF16(_ bytes: ArraySlice<UInt8>, littleEndian: Bool) -> [UInt8] {
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            let first = UInt16(bytes[index])
            let second = UInt16(bytes[index + 1])
            units.append(littleEndian ? first | second << 8 : first << 8 | second)
            index += 2
        }
        return Array(String(decoding: units, as: UTF16.self).utf8)
    }

    /// Windows-1252: Latin-1, but for the printable characters at 0x80–0x9F (the five undefined
    /// there map to the C1 controls of the same value, as Windows does).
    static func fromWindows1252(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 8)
        for byte in bytes {
            if byte < 0x80 {
                output.append(byte)
            } else if byte < 0xA0 {
                appendUTF8(of: windows1252High[Int(byte - 0x80)], to: &output)
            } else {
                appendUTF8(of: UInt32(byte), to: &output)
            }
        }
        return output
    }

    /// Windows-1252's characters for 0x80 to 0x9F.
    static let windows1252High: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
        0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
        0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ]

    /// Appends the UTF-8 of the scalar `value` (U+FFFD for a value that is no scalar).
    static func appendUTF8(of value: UInt32, to output: inout [UInt8]) {
        let scalar = Unicode.Scalar(value) ?? "\u{FFFD}"
        UTF8.encode(scalar) { output.append($0) }
    }
}
