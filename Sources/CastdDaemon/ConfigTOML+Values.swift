import CastdSupport
// castd.toml's reader, continued: values and strings (ConfigTOML.swift has the rest).
extension ConfigTOML.Parser {
    typealias Value = ConfigTOML.Value
    typealias Context = ConfigTOML.Context

    // MARK: values

    mutating func parseValue(_ context: Context) throws(ConfigError) -> Value {
        switch current {
        case TOMLByte.quote:
            if byte(after: 1) == TOMLByte.quote, byte(after: 2) == TOMLByte.quote {
                throw failure(
                    "multi-line strings (\"\"\") are not used by any castd setting; write the string on one line")
            }
            return .string(try parseBasicString())
        case TOMLByte.apostrophe:
            if byte(after: 1) == TOMLByte.apostrophe, byte(after: 2) == TOMLByte.apostrophe {
                throw failure(
                    "multi-line strings (''') are not used by any castd setting; write the string on one line")
            }
            return .string(try parseLiteralString())
        case TOMLByte.openBracket:
            guard context != .array else { throw failure("arrays inside arrays are not used by any castd setting") }
            return try parseArray()
        case TOMLByte.openBrace:
            throw failure("tables inside arrays are not used by any castd setting")
        default:
            return try parseBareValue()
        }
    }

    /// `[value, …]`: over several lines if need be, with comments, perhaps a trailing comma.
    mutating func parseArray() throws(ConfigError) -> Value {
        let opened = line
        position += 1
        var values: [Value] = []
        while true {
            try skipArraySpace()
            guard let byte = current else {
                throw invalid("the array opened on line \(opened) has no ']'")
            }
            if byte == TOMLByte.closeBracket {
                position += 1
                return .array(values)
            }
            guard values.count < ConfigTOML.maximumArrayLength else {
                throw failure(
                    "an array of more than \(ConfigTOML.maximumArrayLength) values (opened on line \(opened)); no castd setting takes so many"
                )
            }
            values.append(try parseValue(.array))
            try skipArraySpace()
            switch current {
            case TOMLByte.comma:
                position += 1
            case TOMLByte.closeBracket:
                position += 1
                return .array(values)
            case nil:
                throw invalid("the array opened on line \(opened) has no ']'")
            default:
                throw invalid("\(describeCurrent) in an array, where ',' or ']' should be")
            }
        }
    }

    /// Blanks, comments and line ends, which an array may hold between its values.
    mutating func skipArraySpace() throws(ConfigError) {
        while true {
            skipBlanks()
            if current == TOMLByte.hash { try skipComment() }
            guard try skipNewline() else { return }
        }
    }

    /// `true`, `false`, a whole number; anything else unquoted is refused here, by what it looks like.
    mutating func parseBareValue() throws(ConfigError) -> Value {
        let start = position
        while let byte = current, TOMLByte.isBareValue(byte) { position += 1 }
        let word = bytes[start..<position]
        guard let first = word.first else {
            if atLineEnd || current == TOMLByte.hash { throw invalid("the value is missing after '='") }
            if current == TOMLByte.comma { throw invalid("a value is missing before ','") }
            throw invalid(
                "\(describeCurrent) cannot start a value; castd's settings take \"strings\", true or false, whole numbers and [arrays]"
            )
        }
        let text = String(decoding: word.prefix(40), as: UTF8.self) + (word.count > 40 ? "…" : "")
        if word.elementsEqual("true".utf8) { return .bool(true) }
        if word.elementsEqual("false".utf8) { return .bool(false) }
        let lowered = text.lowercased()
        if TOMLByte.isDigit(first) || first == TOMLByte.plus || first == TOMLByte.minus || first == TOMLByte.dot
            || lowered == "inf" || lowered == "nan"
        {
            return .integer(try wholeNumber(word, text: text))
        }
        if lowered == "true" || lowered == "false" {
            throw invalid("'\(text)' is not a value; TOML writes true and false in lower case")
        }
        throw invalid("'\(text)' is not a value; a string needs quotes: \"\(text)\"")
    }

    /// A decimal integer as TOML writes it (`-12`, `+7`, `1_000`, `0`), within 64 bits.
    func wholeNumber(_ word: ArraySlice<UInt8>, text: String) throws(ConfigError) -> Int {
        let negative = word.first == TOMLByte.minus
        let digits = (word.first == TOMLByte.minus || word.first == TOMLByte.plus) ? word.dropFirst() : word
        guard let lead = digits.first, TOMLByte.isDigit(lead),
            digits.allSatisfy({ TOMLByte.isDigit($0) || $0 == TOMLByte.underscore })
        else {
            throw failure(Self.notWholeNumber(word, text: text))
        }
        var previous = TOMLByte.underscore
        for byte in digits {
            // No leading zero, and each underscore between two digits.
            if byte == TOMLByte.underscore, previous == TOMLByte.underscore {
                throw failure(Self.badlyWritten(text))
            }
            previous = byte
        }
        if previous == TOMLByte.underscore || (lead == TOMLByte.zero && digits.count > 1) {
            throw failure(Self.badlyWritten(text))
        }
        var value = 0
        for byte in digits where byte != TOMLByte.underscore {
            let digit = Int(byte - TOMLByte.zero)
            let (tens, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) =
                negative ? tens.subtractingReportingOverflow(digit) : tens.addingReportingOverflow(digit)
            guard !overflowA, !overflowB else {
                throw failure(
                    "'\(text)' is too \(negative ? "small" : "large") for a whole number: they go from \(Int.min) to \(Int.max)"
                )
            }
            value = next
        }
        return value
    }

    static func badlyWritten(_ text: String) -> String {
        "'\(text)' is not a whole number as TOML writes one: no leading zeros, and each '_' between two digits"
    }

    static func notWholeNumber(_ word: ArraySlice<UInt8>, text: String) -> String {
        let bytes = Array(word)
        let isDate =
            bytes.count >= 10 && bytes[0..<4].allSatisfy(TOMLByte.isDigit) && bytes[4] == TOMLByte.minus
            && bytes[5..<7].allSatisfy(TOMLByte.isDigit) && bytes[7] == TOMLByte.minus
            && bytes[8..<10].allSatisfy(TOMLByte.isDigit)
        if isDate || bytes.contains(TOMLByte.colon) {
            return "'\(text)' is not a whole number: dates and times are not used by any castd setting"
        }
        if bytes.count > 2, bytes[0] == TOMLByte.zero,
            [UInt8(ascii: "x"), UInt8(ascii: "o"), UInt8(ascii: "b")].contains(bytes[1])
        {
            return
                "'\(text)' is not a whole number as castd reads them: castd's settings take decimal digits only (no hex, octal or binary)"
        }
        return
            "'\(text)' is not a whole number; castd's settings take numbers written in decimal digits only (no dates, times, fractions or hex)"
    }

    // MARK: strings

    /// `"…"`, with escapes, on one line.
    mutating func parseBasicString() throws(ConfigError) -> String {
        position += 1
        var text: [UInt8] = []
        while true {
            guard let byte = current, !atLineEnd else {
                throw invalid("the string has no closing quote (\") on its line")
            }
            switch byte {
            case TOMLByte.quote:
                position += 1
                return String(decoding: text, as: UTF8.self)
            case TOMLByte.backslash:
                try parseEscape(into: &text)
            case _ where TOMLByte.isControl(byte):
                throw invalid(
                    "a control character (\(describeCurrent)) in a string; write it as an escape (\\u\(TOMLByte.hex(UInt32(byte), digits: 4)))"
                )
            default:
                text.append(byte)
                position += 1
            }
        }
    }

    /// `'…'`: no escapes, on one line.
    mutating func parseLiteralString() throws(ConfigError) -> String {
        position += 1
        let start = position
        while true {
            guard let byte = current, !atLineEnd else {
                throw invalid("the string has no closing quote (') on its line")
            }
            if byte == TOMLByte.apostrophe {
                position += 1
                return String(decoding: bytes[start..<position - 1], as: UTF8.self)
            }
            if TOMLByte.isControl(byte) {
                throw invalid(
                    "a control character (\(describeCurrent)) in a string; in a \"string\" it can be an escape")
            }
            position += 1
        }
    }

    mutating func parseEscape(into text: inout [UInt8]) throws(ConfigError) {
        let escape = position
        position += 1
        guard let letter = current else { throw invalid("the string has no closing quote (\") on its line") }
        position += 1
        switch letter {
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "r"): text.append(0x0D)
        case TOMLByte.quote: text.append(TOMLByte.quote)
        case TOMLByte.backslash: text.append(TOMLByte.backslash)
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = letter == UInt8(ascii: "u") ? 4 : 8
            var value: UInt32 = 0
            for _ in 0..<count {
                guard let digit = current.flatMap(TOMLByte.hexValue) else {
                    throw invalid("'\\\(Character(Unicode.Scalar(letter)))' takes exactly \(count) hex digits")
                }
                value = value << 4 | digit
                position += 1
            }
            guard let scalar = Unicode.Scalar(value) else {
                let written = String(decoding: bytes[escape..<position], as: UTF8.self)
                throw invalid(
                    "'\(written)' is not a Unicode character (surrogates D800 to DFFF and values past 10FFFF are not)"
                )
            }
            text.append(contentsOf: String(Character(scalar)).utf8)
        default:
            position -= 1
            throw invalid(
                "'\\' and \(describeCurrent) are not an escape TOML knows; use \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX or \\UXXXXXXXX"
            )
        }
    }
}

/// Bytes by name, and the classes of them that TOML's grammar uses.
enum TOMLByte {
    static let tab = UInt8(ascii: "\t")
    static let newline = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let quote = UInt8(ascii: "\"")
    static let apostrophe = UInt8(ascii: "'")
    static let backslash = UInt8(ascii: "\\")
    static let hash = UInt8(ascii: "#")
    static let equals = UInt8(ascii: "=")
    static let dot = UInt8(ascii: ".")
    static let comma = UInt8(ascii: ",")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let plus = UInt8(ascii: "+")
    static let minus = UInt8(ascii: "-")
    static let underscore = UInt8(ascii: "_")
    static let colon = UInt8(ascii: ":")
    static let zero = UInt8(ascii: "0")

    static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }

    /// A character of a bare key.
    static func isBareKey(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || byte == underscore || byte == minus
    }

    /// A character of a value written without quotes: `true`, `12_000`, and the numbers, dates
    /// and times castd refuses (`1.5e3`, `1979-05-27T07:32:00Z`, `+inf`), read whole so that the
    /// refusal can quote them.
    static func isBareValue(_ byte: UInt8) -> Bool {
        isBareKey(byte) || byte == plus || byte == dot || byte == colon
    }

    /// A control character, which TOML allows in no string or comment (a tab excepted).
    static func isControl(_ byte: UInt8) -> Bool { (byte < 0x20 && byte != tab) || byte == 0x7F }

    static func hexValue(_ byte: UInt8) -> UInt32? { HexDigit.value(byte).map(UInt32.init) }

    static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
