/// The SubRip (.srt) reader behind ``WebVTT/fromSubRip(_:)``: cues from UTF-8 text, their
/// lines cleaned into WebVTT cue text.
enum SubRip {
    struct Cue: Equatable {
        /// Milliseconds.
        var start: Int
        var end: Int
        /// WebVTT cue text: lines, none empty, each ended by a line feed.
        var text: [UInt8]
    }

    /// The cues of `text` in the file's order (see ``WebVTT/fromSubRip(_:)``). A cue starts at a
    /// timing line and takes the lines after it up to a blank line, the next timing line, or a
    /// cue number that a timing line follows; everything else is skipped. Lines are read one at
    /// a time: memory follows the cues' text, not the count of lines.
    static func cues(in text: [UInt8], limit: Int) throws(WebVTT.ConversionError) -> [Cue] {
        var cues: [Cue] = []
        var position = 0
        while let (range, next) = line(in: text, at: position) {
            position = next
            guard let (start, end) = timing(text[range]) else { continue }
            var cueText: [UInt8] = []
            while let (range, next) = line(in: text, at: position) {
                let line = text[range]
                if isBlank(line) || timing(line) != nil { break }
                if isNumber(line), let (following, _) = self.line(in: text, at: next), timing(text[following]) != nil {
                    break
                }
                let cleaned = self.cueText(line)
                if !cleaned.isEmpty {
                    cueText += cleaned
                    cueText.append(0x0A)
                }
                position = next
            }
            guard cues.count < limit else { throw .tooManyCues(limit: limit) }
            cues.append(Cue(start: start, end: end, text: cueText))
        }
        return cues
    }

    /// The line of `text` at `position` (nil at the end) and the position after its end: lines
    /// end at CRLF, LF or a lone CR (CR CR LF, a CRLF file converted once too often, is one end).
    static func line(in text: [UInt8], at position: Int) -> (Range<Int>, Int)? {
        guard position < text.count else { return nil }
        var index = position
        while index < text.count && text[index] != 0x0A && text[index] != 0x0D { index += 1 }
        guard index < text.count else { return (position..<index, index) }
        if text[index] == 0x0D && index + 2 < text.count && text[index + 1] == 0x0D && text[index + 2] == 0x0A {
            return (position..<index, index + 3)
        }
        if text[index] == 0x0D && index + 1 < text.count && text[index + 1] == 0x0A {
            return (position..<index, index + 2)
        }
        return (position..<index, index + 1)
    }

    static func isBlank(_ line: ArraySlice<UInt8>) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0B || $0 == 0x0C }
    }

    static func isNumber(_ line: ArraySlice<UInt8>) -> Bool {
        let trimmed = trimmed(line)
        return !trimmed.isEmpty && trimmed.allSatisfy { (0x30...0x39).contains($0) }
    }

    static func trimmed(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0B || byte == 0x0C }
        guard let first = line.firstIndex(where: { !isSpace($0) }) else { return line[line.endIndex...] }
        let last = line.lastIndex(where: { !isSpace($0) })!
        return line[first...last]
    }

    // MARK: timing lines

    /// The start and end, in milliseconds, of a timing line (`00:01:02,500 --> 00:01:04,000`,
    /// and the variants ``WebVTT/fromSubRip(_:)`` lists); nil for any other line. Whatever
    /// follows the end time is ignored.
    static func timing(_ line: ArraySlice<UInt8>) -> (Int, Int)? {
        var index = line.startIndex
        func skipSpaces() {
            while index < line.endIndex && (line[index] == 0x20 || line[index] == 0x09) { index += 1 }
        }
        skipSpaces()
        guard let start = time(line, &index) else { return nil }
        skipSpaces()
        guard line[index...].starts(with: arrow) else { return nil }
        index += arrow.count
        skipSpaces()
        guard let end = time(line, &index) else { return nil }
        return (start, end)
    }

    /// A time at `index`: [H[H[H]]:]M[M]:S[S] then optionally a comma or dot and digits of a
    /// fraction of a second (the first three count); moves `index` past it.
    static func time(_ line: ArraySlice<UInt8>, _ index: inout Int) -> Int? {
        func number(maximumDigits: Int) -> (value: Int, digits: Int)? {
            var value = 0
            var digits = 0
            while index < line.endIndex && (0x30...0x39).contains(line[index]) {
                guard digits < maximumDigits else { return nil }
                value = value * 10 + Int(line[index] - 0x30)
                digits += 1
                index += 1
            }
            return digits == 0 ? nil : (value, digits)
        }
        var fields: [Int] = []
        while true {
            guard let (value, _) = number(maximumDigits: 3) else { return nil }
            fields.append(value)
            guard fields.count < 3, index < line.endIndex, line[index] == 0x3A else { break }
            index += 1
        }
        guard fields.count >= 2 else { return nil }
        let (hours, minutes, seconds) =
            fields.count == 3 ? (fields[0], fields[1], fields[2]) : (0, fields[0], fields[1])
        guard minutes < 60 || fields.count == 2, seconds < 60, minutes < 1000 else { return nil }
        var milliseconds = 0
        if index < line.endIndex && (line[index] == 0x2C || line[index] == 0x2E) {
            index += 1
            var digits = 0
            while index < line.endIndex && (0x30...0x39).contains(line[index]) {
                if digits < 3 { milliseconds = milliseconds * 10 + Int(line[index] - 0x30) }
                digits += 1
                index += 1
                guard digits <= 9 else { return nil }
            }
            guard digits > 0 else { return nil }
            for _ in min(digits, 3)..<3 { milliseconds *= 10 }
        }
        return ((hours * 60 + minutes) * 60 + seconds) * 1000 + milliseconds
    }

    // MARK: cue text

    static let arrow = Array("-->".utf8)
    static let keptTags: Set<[UInt8]> = [Array("b".utf8), Array("i".utf8), Array("u".utf8)]
    static let keptEntities: Set<[UInt8]> = Set(["amp", "lt", "gt", "nbsp", "lrm", "rlm"].map { Array($0.utf8) })

    /// One line of a cue's text as WebVTT cue text, trimmed: see ``WebVTT/fromSubRip(_:)``.
    static func cueText(_ line: ArraySlice<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        var index = line.startIndex
        while index < line.endIndex {
            let byte = line[index]
            switch byte {
            case 0x7B:  // {
                if index + 1 < line.endIndex, line[index + 1] == 0x5C,  // {\ … }
                    let close = line[index...].firstIndex(of: 0x7D)
                {
                    index = close + 1
                } else {
                    output.append(byte)
                    index += 1
                }
            case 0x3C:  // <
                if let (tag, next) = self.tag(line, at: index) {
                    output += tag
                    index = next
                } else {
                    output += Array("&lt;".utf8)
                    index += 1
                }
            case 0x3E:  // >
                output += Array("&gt;".utf8)
                index += 1
            case 0x26:  // &
                output += isEntity(line, at: index) ? [byte] : Array("&amp;".utf8)
                index += 1
            case 0x09:
                output.append(0x20)
                index += 1
            case 0..<0x20, 0x7F:
                index += 1
            default:
                output.append(byte)
                index += 1
            }
        }
        return Array(trimmed(output[...]))
    }

    /// For a tag at `index` (`<` `/`? a letter, letters or digits, anything but `<` up to `>`):
    /// the WebVTT to write for it (`<b>`, `</i>`…, or nothing for the tags WebVTT lacks) and the
    /// index after it; nil when `<` starts no tag.
    static func tag(_ line: ArraySlice<UInt8>, at index: Int) -> ([UInt8], Int)? {
        var cursor = index + 1
        var closing = false
        if cursor < line.endIndex && line[cursor] == 0x2F {
            closing = true
            cursor += 1
        }
        let nameStart = cursor
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        guard cursor < line.endIndex, isLetter(line[cursor]) else { return nil }
        while cursor < line.endIndex && (isLetter(line[cursor]) || (0x30...0x39).contains(line[cursor])) {
            cursor += 1
        }
        let name = line[nameStart..<cursor].map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
        while cursor < line.endIndex && line[cursor] != 0x3E {
            guard line[cursor] != 0x3C else { return nil }
            cursor += 1
        }
        guard cursor < line.endIndex else { return nil }
        guard keptTags.contains(name) else { return ([], cursor + 1) }
        return (Array((closing ? "</" : "<").utf8) + name + [0x3E], cursor + 1)
    }

    /// Whether `&` at `index` starts a character reference WebVTT knows: one of ``keptEntities``
    /// or a numeric one (`&#233;`, `&#xE9;`), ended by `;`.
    static func isEntity(_ line: ArraySlice<UInt8>, at index: Int) -> Bool {
        guard let semicolon = line[index...].prefix(12).firstIndex(of: 0x3B) else { return false }
        let body = Array(line[(index + 1)..<semicolon])
        if keptEntities.contains(body) { return true }
        guard body.first == 0x23 else { return false }  // #
        if body.count > 2 && (body[1] == 0x78 || body[1] == 0x58) {
            return body[2...].allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0)
            }
        }
        return body.count > 1 && body[1...].allSatisfy { (0x30...0x39).contains($0) }
    }
}
