/// castd.toml's reader: the part of TOML 1.0 that castd's settings use, read strictly.
///
/// Accepted:
/// - `key = value` lines, `[table]` and `[dotted.table]` headers, `#` comments, blank lines; LF
///   or CRLF line ends; a byte order mark at the start.
/// - Keys: bare (`A-Z a-z 0-9 _ -`), quoted (`"…"` with escapes, `'…'`), dotted (`a.b = 1`).
/// - Values: basic strings (`"…"`; escapes `\b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX`), literal
///   strings (`'…'`), `true`, `false`, decimal integers (sign, `_` between digits, 64 bits),
///   arrays of those (over several lines, with comments and a trailing comma), and inline tables
///   of those (`{ "Cast*" = "debug" }`).
///
/// Refused, with the line: everything else TOML has (floats, infinities, hex, octal and binary
/// integers, dates and times, multi-line strings, arrays of tables, arrays inside arrays, tables
/// inside arrays, inline tables inside inline tables), and everything TOML itself refuses (a key or
/// table defined twice, control characters, unknown escapes, surrogates, bytes that are not UTF-8).
///
/// One pass over the bytes, O(n). Nothing nests without a bound: an array holds no array or
/// table, an inline table no inline table, tables nest at most `maximumDepth` deep, and an array
/// holds at most `maximumArrayLength` values. The only recursion is an inline table's entries
/// (one level).
///
/// It decides what is TOML; `ConfigFile` decides what castd makes of it.
struct ConfigTOML: Sendable {
    enum Value: Sendable {
        case string(String)
        case integer(Int)
        case bool(Bool)
        /// Strings, integers and booleans: TOML lets an array mix types (castd's checks do not).
        case array([Value])
        /// An index into `tables`.
        case table(Int)
    }

    struct Entry: Sendable {
        var key: String
        var value: Value
        /// The line the key is on; for a table, the line of its header or of the first key that
        /// made it.
        var line: Int
    }

    struct Table: Sendable {
        /// How the table came to be, which decides what may add to it (TOML 1.0, "Table").
        enum Origin: Sendable {
            /// Named on the way to a header's table (`log` in `[log.filters]`): a header of its
            /// own may still define it, once.
            case implicit
            /// Defined by its own header.
            case header
            /// Made by dotted keys (`log.level = …`): more dotted keys may add to it, no header may
            /// define it, a header may define tables inside it.
            case dotted
            /// An inline table: complete as written.
            case inline
        }
        var origin: Origin
        /// The keys from the root to this table.
        var path: [String]
        var line: Int
        /// In the file's order.
        var entries: [Entry] = []
        var index: [String: Int] = [:]

        mutating func add(_ entry: Entry) {
            index[entry.key] = entries.count
            entries.append(entry)
        }
    }

    /// Every table, the root first.
    var tables: [Table]

    var root: Table { tables[0] }

    /// How deep tables may nest: castd's deepest setting is in a table two deep (log.filters).
    static let maximumDepth = 8
    /// How many values an array may hold: castd's lists are devices, trust roots and groups.
    static let maximumArrayLength = 1000

    /// Reads `bytes`; `file` names it in errors.
    static func parse(_ bytes: [UInt8], file: String) throws(ConfigError) -> ConfigTOML {
        if let line = firstLineNotUTF8(bytes) {
            throw ConfigError(file: file, line: line, key: nil, problem: "not UTF-8 text")
        }
        var parser = Parser(bytes: bytes, file: file)
        try parser.parseDocument()
        return ConfigTOML(tables: parser.tables)
    }

    /// The line of the first byte that does not belong to well-formed UTF-8 (no overlong forms,
    /// no surrogates, nothing past U+10FFFF), or nil.
    static func firstLineNotUTF8(_ bytes: [UInt8]) -> Int? {
        var line = 1
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            if lead < 0x80 {
                if lead == TOMLByte.newline { line += 1 }
                index += 1
                continue
            }
            let length: Int
            var scalar: UInt32
            switch lead {
            case 0xC2...0xDF: (length, scalar) = (2, UInt32(lead & 0x1F))
            case 0xE0...0xEF: (length, scalar) = (3, UInt32(lead & 0x0F))
            case 0xF0...0xF4: (length, scalar) = (4, UInt32(lead & 0x07))
            default: return line
            }
            guard bytes.count - index >= length else { return line }
            for offset in 1..<length {
                let next = bytes[index + offset]
                guard next & 0xC0 == 0x80 else { return line }
                scalar = scalar << 6 | UInt32(next & 0x3F)
            }
            switch length {
            case 3: guard scalar >= 0x800, !(0xD800...0xDFFF).contains(scalar) else { return line }
            case 4: guard (0x10000...0x10FFFF).contains(scalar) else { return line }
            default: break
            }
            index += length
        }
        return nil
    }

    /// A key path as it would be written: each key bare if it can be, else quoted.
    static func display(_ path: [String]) -> String {
        path.map(quotedIfNeeded).joined(separator: ".")
    }

    static func quotedIfNeeded(_ key: String) -> String {
        if !key.isEmpty, key.utf8.allSatisfy(TOMLByte.isBareKey) { return key }
        var quoted = "\""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\u{0}"..."\u{1F}", "\u{7F}": quoted += "\\u" + TOMLByte.hex(scalar.value, digits: 4)
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}

/// Bytes by name, and the classes of them that TOML's grammar uses.
fileprivate enum TOMLByte {
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

    static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        default: nil
        }
    }

    static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

extension ConfigTOML {
    fileprivate enum Context { case keyValue, inlineTable, array }

    /// The reading position in the text, and the tables read so far.
    fileprivate struct Parser {
        let bytes: [UInt8]
        let file: String
        var position = 0
        var line = 1
        var tables = [Table(origin: .header, path: [], line: 1)]

        init(bytes: [UInt8], file: String) {
            self.bytes = bytes
            self.file = file
        }

        var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        func byte(after offset: Int) -> UInt8? {
            position + offset < bytes.count ? bytes[position + offset] : nil
        }

        var atLineEnd: Bool {
            guard let byte = current else { return true }
            return byte == TOMLByte.newline
                || (byte == TOMLByte.carriageReturn && self.byte(after: 1) == TOMLByte.newline)
        }

        func failure(_ problem: String, key: [String]? = nil, line: Int? = nil) -> ConfigError {
            ConfigError(file: file, line: line ?? self.line, key: key.map(ConfigTOML.display), problem: problem)
        }

        /// Not TOML at all (rather than TOML that castd's settings do not use).
        func invalid(_ problem: String) -> ConfigError { failure("not valid TOML: " + problem) }

        /// The character at `index`, for a message: `'x'`, `'é' (U+00E9)`, `U+001B`.
        func describe(at index: Int) -> String {
            guard index < bytes.count else { return "the end of the file" }
            let byte = bytes[index]
            if byte == TOMLByte.newline
                || (byte == TOMLByte.carriageReturn && index + 1 < bytes.count && bytes[index + 1] == TOMLByte.newline)
            {
                return "the end of the line"
            }
            if byte >= 0x20, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
            if byte < 0x80 { return "U+" + TOMLByte.hex(UInt32(byte), digits: 4) }
            // Well-formed (checked before parsing), so the first scalar is whole.
            let scalar = String(decoding: bytes[index..<min(index + 4, bytes.count)], as: UTF8.self).unicodeScalars
                .first!
            return "'\(scalar)' (U+\(TOMLByte.hex(scalar.value, digits: 4)))"
        }

        var describeCurrent: String { describe(at: position) }

        // MARK: lines

        mutating func parseDocument() throws(ConfigError) {
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
            var table = 0
            while position < bytes.count {
                skipBlanks()
                guard let byte = current else { break }
                var what = "the value"
                if byte == TOMLByte.openBracket {
                    table = try parseHeader()
                    what = "the table header"
                } else if TOMLByte.isBareKey(byte) || byte == TOMLByte.quote || byte == TOMLByte.apostrophe {
                    try parseKeyValue(in: table, context: .keyValue)
                } else if byte >= 0x80 {
                    throw invalid("\(describeCurrent) cannot be in a bare key (A-Z a-z 0-9 _ -); put the key in quotes")
                } else if !(byte == TOMLByte.hash || byte == TOMLByte.newline || byte == TOMLByte.carriageReturn) {
                    throw invalid("a line holds a key = value, a [table] or a comment, not \(describeCurrent)")
                }
                try endLine(after: what)
            }
        }

        mutating func skipBlanks() {
            while let byte = current, byte == TOMLByte.space || byte == TOMLByte.tab { position += 1 }
        }

        /// Past a comment, up to the end of its line.
        mutating func skipComment() throws(ConfigError) {
            position += 1
            while let byte = current, !atLineEnd {
                if TOMLByte.isControl(byte) { throw invalid("a control character (\(describeCurrent)) in a comment") }
                position += 1
            }
        }

        /// Past a line end (LF or CRLF), if there is one here.
        mutating func skipNewline() throws(ConfigError) -> Bool {
            switch current {
            case TOMLByte.newline:
                position += 1
            case TOMLByte.carriageReturn:
                guard byte(after: 1) == TOMLByte.newline else {
                    throw invalid("a carriage return (U+000D) that is not followed by a line feed")
                }
                position += 2
            default:
                return false
            }
            line += 1
            return true
        }

        /// The rest of a line: blanks, perhaps a comment, its end.
        mutating func endLine(after what: String) throws(ConfigError) {
            skipBlanks()
            if current == TOMLByte.hash { try skipComment() }
            if current == nil { return }
            if try skipNewline() { return }
            throw invalid(
                "\(describeCurrent) after \(what); each key = value and each [table] goes on a line of its own")
        }

        // MARK: keys and tables

        /// A key: one or more names, each bare or quoted, joined by dots.
        mutating func parseKey() throws(ConfigError) -> [String] {
            var parts: [String] = []
            while true {
                skipBlanks()
                guard let byte = current else { throw invalid("a key ends with '.'") }
                switch byte {
                case TOMLByte.quote:
                    parts.append(try parseBasicString())
                case TOMLByte.apostrophe:
                    parts.append(try parseLiteralString())
                case _ where TOMLByte.isBareKey(byte):
                    let start = position
                    while let next = current, TOMLByte.isBareKey(next) { position += 1 }
                    parts.append(String(decoding: bytes[start..<position], as: UTF8.self))
                default:
                    throw parts.isEmpty
                        ? invalid("a key is missing before \(describeCurrent)")
                        : invalid("a key ends with '.' before \(describeCurrent)")
                }
                if parts.count > ConfigTOML.maximumDepth + 1 { throw tooDeep() }
                skipBlanks()
                guard current == TOMLByte.dot else { return parts }
                position += 1
            }
        }

        func tooDeep() -> ConfigError {
            failure(
                "tables nest more than \(ConfigTOML.maximumDepth) deep here; no castd setting is in a table more than 2 deep"
            )
        }

        /// A `[table]` header; returns the table that the lines after it fill.
        mutating func parseHeader() throws(ConfigError) -> Int {
            position += 1
            let isArray = current == TOMLByte.openBracket
            if isArray { position += 1 }
            skipBlanks()
            guard let first = current,
                TOMLByte.isBareKey(first) || first == TOMLByte.quote || first == TOMLByte.apostrophe
            else {
                throw invalid("a table header must name its table right after its brackets")
            }
            let path = try parseKey()
            if isArray {
                throw failure("arrays of tables ([[\(ConfigTOML.display(path))]]) are not used by any castd setting")
            }
            guard current == TOMLByte.closeBracket else {
                throw invalid(
                    "the table header [\(ConfigTOML.display(path)) has \(describeCurrent) where its ']' should be")
            }
            position += 1
            return try defineTable(path)
        }

        /// The table a header names: made, or defined if only named before, but never twice.
        mutating func defineTable(_ path: [String]) throws(ConfigError) -> Int {
            var table = 0
            for (depth, name) in path.enumerated() {
                let isLast = depth == path.count - 1
                guard let index = tables[table].index[name] else {
                    table = try addTable(name, in: table, origin: isLast ? .header : .implicit)
                    continue
                }
                let entry = tables[table].entries[index]
                let at = Array(path.prefix(depth + 1))
                guard case .table(let inner) = entry.value else {
                    throw failure("set to a value on line \(entry.line), so it cannot be a table too", key: at)
                }
                switch tables[inner].origin {
                case .inline:
                    throw failure(
                        "an inline table (line \(entry.line)), complete as written: TOML lets no header add to it",
                        key: at)
                case .implicit where isLast:
                    tables[inner].origin = .header
                    tables[inner].line = line
                    tables[table].entries[index].line = line
                case .header where isLast:
                    throw failure(
                        "[\(ConfigTOML.display(at))] again (first on line \(tables[inner].line)); TOML takes each table once",
                        key: at)
                case .dotted where isLast:
                    throw failure(
                        "already a table, made by dotted keys on line \(tables[inner].line); TOML takes each table once",
                        key: at)
                default:
                    break
                }
                table = inner
            }
            return table
        }

        /// A new table `name` in `table`.
        mutating func addTable(_ name: String, in table: Int, origin: Table.Origin) throws(ConfigError) -> Int {
            let path = tables[table].path + [name]
            guard path.count <= ConfigTOML.maximumDepth else { throw tooDeep() }
            tables.append(Table(origin: origin, path: path, line: line))
            tables[table].add(Entry(key: name, value: .table(tables.count - 1), line: line))
            return tables.count - 1
        }

        /// `key = value`, into `table` (the header's, the root, or an inline table).
        mutating func parseKeyValue(in table: Int, context: Context) throws(ConfigError) {
            let keyLine = line
            let path = try parseKey()
            guard current == TOMLByte.equals else {
                throw invalid("the key \(ConfigTOML.display(path)) is followed by \(describeCurrent), not '='")
            }
            position += 1
            skipBlanks()
            // The table the last name goes in: dotted keys make tables, or add to those they made.
            var parent = table
            for name in path.dropLast() {
                guard let index = tables[parent].index[name] else {
                    parent = try addTable(name, in: parent, origin: .dotted)
                    continue
                }
                let entry = tables[parent].entries[index]
                let at = tables[parent].path + [name]
                guard case .table(let inner) = entry.value else {
                    throw failure("set to a value on line \(entry.line), so it cannot be a table too", key: at)
                }
                switch tables[inner].origin {
                case .dotted: break
                case .inline:
                    throw failure(
                        "an inline table (line \(entry.line)), complete as written: TOML lets no key add to it", key: at
                    )
                case .header, .implicit:
                    throw failure(
                        "a table with a [header] (line \(tables[inner].line)); TOML lets no dotted key add to it; write its keys under its header",
                        key: at)
                }
                parent = inner
            }
            let name = path[path.count - 1]
            if let index = tables[parent].index[name] {
                throw failure(
                    "set again (first on line \(tables[parent].entries[index].line)); TOML takes each key once",
                    key: tables[parent].path + [name])
            }
            if current == TOMLByte.openBrace {
                guard context == .keyValue else {
                    throw failure(
                        "inline tables inside inline tables are not used by any castd setting; write a [table] header")
                }
                try parseInlineTable(try addTable(name, in: parent, origin: .inline))
                return
            }
            let value = try parseValue(context)
            tables[parent].add(Entry(key: name, value: value, line: keyLine))
        }

        /// `{ key = value, … }` on one line (a value in it may span lines, as TOML allows).
        mutating func parseInlineTable(_ table: Int) throws(ConfigError) {
            position += 1
            skipBlanks()
            if current == TOMLByte.closeBrace {
                position += 1
                return
            }
            while true {
                skipBlanks()
                guard let byte = current,
                    TOMLByte.isBareKey(byte) || byte == TOMLByte.quote || byte == TOMLByte.apostrophe
                else {
                    if current == TOMLByte.closeBrace {
                        throw invalid("TOML allows no ',' after an inline table's last value")
                    }
                    if atLineEnd || current == TOMLByte.hash {
                        throw invalid("an inline table must close ('}') on the line it opens")
                    }
                    throw invalid("a key is missing in the inline table before \(describeCurrent)")
                }
                try parseKeyValue(in: table, context: .inlineTable)
                skipBlanks()
                switch current {
                case TOMLByte.comma:
                    position += 1
                case TOMLByte.closeBrace:
                    position += 1
                    return
                case _ where atLineEnd || current == TOMLByte.hash:
                    throw invalid("an inline table must close ('}') on the line it opens")
                default:
                    throw invalid("\(describeCurrent) in an inline table, where ',' or '}' should be")
                }
            }
        }

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
}
