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

extension ConfigTOML {
    enum Context { case keyValue, inlineTable, array }

    /// The reading position in the text, and the tables read so far.
    struct Parser {
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
    }
}
