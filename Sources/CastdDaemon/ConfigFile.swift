import CastCore
import Foundation
import TOMLKit

#if canImport(Glibc)
import Glibc
#endif

/// Something wrong in a configuration file, said so a person can fix it: the file, the line,
/// the key, what is wrong.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var key: String?
    public var problem: String

    public init(file: String, line: Int?, key: String?, problem: String) {
        self.file = file
        self.line = line
        self.key = key
        self.problem = problem
    }

    /// "/etc/castd/castd.toml:12: limits.max_frame_bytes: must be an integer, not a string"
    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        text += ": "
        if let key { text += "\(key): " }
        return text + problem
    }
}

/// Reads castd.toml (TOML, parsed by TOMLKit) into a `ConfigLayer`, checking every key and
/// value against `ConfigKey`.
public enum ConfigFile {
    /// The largest configuration file castd reads (every key documented is a few KiB).
    public static let maximumFileSize = 1 << 20

    /// Reads and checks the file at `path`.
    public static func load(path: String) throws(ConfigError) -> ConfigLayer {
        let read: Data?
        do {
            // A link is fine here (configuration is often managed that way); a huge file is not.
            read = try BoundedFile.read(path, limit: maximumFileSize, followLinks: true)
        } catch {
            throw ConfigError(file: path, line: nil, key: nil, problem: "cannot read the file: \(error.detail)")
        }
        guard let data = read else {
            throw ConfigError(file: path, line: nil, key: nil, problem: "cannot read the file: no such file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(file: path, line: nil, key: nil, problem: "not UTF-8 text")
        }
        return try parse(text, file: path)
    }

    /// Checks the text of a configuration file; `file` names it in errors.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> ConfigLayer {
        if let (line, problem) = preflight(text) {
            throw ConfigError(file: file, line: line, key: nil, problem: problem)
        }
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigError(
                file: file, line: error.source.begin.line, key: nil, problem: "not valid TOML: \(error.description)")
        } catch {
            throw ConfigError(file: file, line: nil, key: nil, problem: "not valid TOML: \(error)")
        }
        let lines = KeyLines(text: text)
        var layer = ConfigLayer()
        try read(root, at: [], into: &layer, file: file, lines: lines)
        return layer
    }

    /// What TOMLKit's parser (toml++) must not be given: a table header whose name does not start
    /// right after its brackets (`[`, `[[`, `[[[a]]]`, `[ ]` on a line of their own). toml++ then
    /// breaks its own precondition in `parse_key`: a debug build aborts, a release build has
    /// undefined behaviour (the check is an optimiser assumption there). Fixed upstream after the
    /// toml++ that TOMLKit 0.6.0 carries; found by CastdConfigFuzzer. A line that starts with `[`
    /// is taken as a header even inside a multi-line array or string, which castd's keys never
    /// need. Returns the line and what is wrong.
    static func preflight(_ text: String) -> (line: Int, problem: String)? {
        // Bytes, not Characters: a combining mark after `[` makes one Character of the two, which
        // toml++ (reading bytes) still takes for a header.
        func isKeyStart(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "\""),
                UInt8(ascii: "'"):
                true
            default: false
            }
        }
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var number = 0
        for line in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            var rest = line[...]
            // toml++ skips a byte order mark at the start of the text.
            if number == 1, rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
            rest = rest.drop(while: isBlank)
            guard rest.first == UInt8(ascii: "[") else { continue }
            rest = rest.dropFirst()
            if rest.first == UInt8(ascii: "[") { rest = rest.dropFirst() }
            rest = rest.drop(while: isBlank)
            guard let first = rest.first, isKeyStart(first) else {
                return (number, "not valid TOML: a table header must name its table right after its brackets")
            }
        }
        return numberProblem(text)
    }

    /// The number-like words outside strings and comments that are not plain decimal integers:
    /// dates, times, fractions, hex, and malformed mixtures. castd's settings take whole numbers
    /// only, and toml++'s parsing of the rest broke its own preconditions on malformed input
    /// (`1048----a`; CastdConfigFuzzer).
    static func numberProblem(_ text: String) -> (line: Int, problem: String)? {
        let bytes = Array(text.utf8)
        func isWordByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"),
                UInt8(ascii: "."), UInt8(ascii: ":"):
                true
            default: false
            }
        }
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        var line = 1
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\n"):
                line += 1
                index += 1
            case UInt8(ascii: "#"):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                // A string: basic (escapes) or literal, on one line or, tripled, on several.
                let tripled = index + 2 < bytes.count && bytes[index + 1] == byte && bytes[index + 2] == byte
                index += tripled ? 3 : 1
                while index < bytes.count {
                    if bytes[index] == UInt8(ascii: "\n") {
                        if !tripled { break }  // unterminated: TOML says so; the newline is counted above
                        line += 1
                    } else if byte == UInt8(ascii: "\""), bytes[index] == UInt8(ascii: "\\") {
                        index += 1
                    } else if bytes[index] == byte,
                        !tripled || (index + 2 < bytes.count && bytes[index + 1] == byte && bytes[index + 2] == byte)
                    {
                        index += tripled ? 3 : 1
                        break
                    }
                    index += 1
                }
            case _ where isWordByte(byte):
                let start = index
                while index < bytes.count, isWordByte(bytes[index]) { index += 1 }
                let word = bytes[start..<index]
                let first = word.first!
                guard isDigit(first) || first == UInt8(ascii: "+") || first == UInt8(ascii: "-") else { continue }
                let digits = (first == UInt8(ascii: "+") || first == UInt8(ascii: "-")) ? word.dropFirst() : word[...]
                if digits.first.map(isDigit) != true
                    || !digits.allSatisfy({ isDigit($0) || $0 == UInt8(ascii: "_") })
                {
                    return (
                        line,
                        "'\(String(decoding: word.prefix(40), as: UTF8.self))' is not a whole number; castd's settings take numbers written in decimal digits only (no dates, times, fractions or hex)"
                    )
                }
            default:
                index += 1
            }
        }
        return nil
    }

    private static func read(
        _ table: TOMLTable, at prefix: [String], into layer: inout ConfigLayer, file: String, lines: KeyLines
    ) throws(ConfigError) {
        for name in table.keys {
            let path = prefix + [name]
            let dotted = path.map(KeyLines.quotedIfNeeded).joined(separator: ".")
            let line = lines.line(of: path)
            guard let value = table[name] else { continue }
            if prefix.isEmpty, ConfigKey.tables.contains(name) {
                guard let inner = value.table else {
                    throw ConfigError(
                        file: file, line: line, key: dotted, problem: "must be a table ([\(name)]), not \(describe(value))")
                }
                try read(inner, at: path, into: &layer, file: file, lines: lines)
                continue
            }
            guard let key = ConfigKey.at(path) else {
                throw ConfigError(file: file, line: line, key: dotted, problem: unknownKeyProblem(path))
            }
            let converted = try convert(value, for: key, file: file, line: line, lines: lines)
            if converted == .table([]) { continue }  // an empty [log.filters]: nothing set
            layer.set(key, converted, from: line.map { "\(file):\($0)" } ?? file)
        }
    }

    private static func convert(
        _ value: any TOMLValueConvertible, for key: ConfigKey, file: String, line: Int?, lines: KeyLines
    ) throws(ConfigError) -> ConfigValue {
        func wrongType(_ expected: String) -> ConfigError {
            ConfigError(file: file, line: line, key: key.name, problem: "must be \(expected), not \(describe(value))")
        }
        switch key.kind {
        case .string:
            guard let string = value.string else { throw wrongType("a string") }
            return .string(string)
        case .bool:
            guard let bool = value.bool else { throw wrongType("true or false") }
            return .bool(bool)
        case .integer(let range):
            guard value.type == .int, let integer = value.int else { throw wrongType("an integer") }
            guard range.contains(integer) else {
                throw ConfigError(
                    file: file, line: line, key: key.name,
                    problem: "\(integer) is out of range; use \(range.lowerBound) to \(range.upperBound)")
            }
            return .integer(integer)
        case .strings:
            guard let array = value.array else { throw wrongType("an array of strings") }
            var strings: [String] = []
            for (index, element) in array.enumerated() {
                guard let string = element.string else {
                    throw ConfigError(
                        file: file, line: line, key: key.name,
                        problem: "element \(index + 1) must be a string, not \(describe(element))")
                }
                strings.append(string)
            }
            return .strings(strings)
        case .stringTable:
            guard let table = value.table else { throw wrongType("a table of strings ([\(key.name)])") }
            var entries: [(key: String, value: String)] = []
            for entryKey in table.keys {
                guard let entry = table[entryKey] else { continue }
                guard let string = entry.string else {
                    let path = key.path + [entryKey]
                    throw ConfigError(
                        file: file, line: lines.line(of: path),
                        key: path.map(KeyLines.quotedIfNeeded).joined(separator: "."),
                        problem: "must be a string, not \(describe(entry))")
                }
                entries.append((entryKey, string))
            }
            // TOMLKit's tables are unordered; the file's order matters for filters (the last
            // matching pattern wins), so restore it.
            entries.sort { (lines.line(of: key.path + [$0.key]) ?? 0) < (lines.line(of: key.path + [$1.key]) ?? 0) }
            return .table(entries)
        }
    }

    private static func describe(_ value: any TOMLValueConvertible) -> String {
        switch value.type {
        case .string: "a string (\"\(value.string ?? "")\")"
        case .int: "an integer (\(value.int.map(String.init) ?? ""))"
        case .double: "a number (\(value.double.map { "\($0)" } ?? ""))"
        case .bool: "\(value.bool == true ? "true" : "false")"
        case .array: "an array"
        case .table: "a table"
        default: "a \(value.type)"
        }
    }

    /// "unknown key; [limits] takes max_frame_bytes, …; did you mean max_frame_bytes?"
    static func unknownKeyProblem(_ path: [String]) -> String {
        let siblings = ConfigKey.allCases.filter { $0.path.count == path.count && Array($0.path.dropLast()) == Array(path.dropLast()) }
        var names = siblings.map { $0.path.last! }
        if path.count == 1 { names += ConfigKey.tables.sorted().map { "[\($0)]" } }
        let place = path.count == 1 ? "the top level" : "[\(path.dropLast().joined(separator: "."))]"
        var problem = "unknown key"
        if names.isEmpty {
            problem += "; castd.toml has no [\(path.dropLast().joined(separator: "."))] table"
        } else {
            problem += "; \(place) takes \(names.joined(separator: ", "))"
        }
        let typed = path.last!
        if let closest = names.min(by: { editDistance($0, typed) < editDistance($1, typed) }),
            editDistance(closest, typed) <= max(2, typed.count / 3)
        {
            problem += "; did you mean \(closest)?"
        }
        return problem
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// The line each key of a TOML text is on, for error messages. TOMLKit parses the file but
/// does not say where a key is, so this reads table headers (`[limits]`) and the keys of
/// `key = value` lines (bare, quoted or dotted). It only locates keys in a file TOMLKit has
/// already accepted; it decides nothing about the file's meaning.
struct KeyLines: Sendable {
    private var lines: [[String]: Int] = [:]

    init(text: String) {
        var table: [String] = []
        var inMultilineString: String? = nil
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = raw.trimmingCharacters(in: .whitespaces)
            if let delimiter = inMultilineString {
                if line.contains(delimiter) { inMultilineString = nil }
                continue
            }
            if line.hasPrefix("[") {
                let isArray = line.hasPrefix("[[")
                let body = line.dropFirst(isArray ? 2 : 1)
                guard let end = body.firstIndex(of: "]") else { continue }
                table = Self.keyParts(String(body[..<end]))
                if lines[table] == nil { lines[table] = number }
                continue
            }
            guard !line.hasPrefix("#"), let equals = Self.assignment(in: line) else { continue }
            let key = table + Self.keyParts(String(line[..<equals]))
            // `a.b.c = 1` also defines a and a.b here.
            for end in (table.count + 1)...key.count where lines[Array(key.prefix(end))] == nil {
                lines[Array(key.prefix(end))] = number
            }
            // Keys of an inline table on this line: `filters = { "A*" = "debug", B = "info" }`.
            let rest = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if rest.hasPrefix("{") {
                for entry in rest.dropFirst().split(separator: ",") {
                    guard let inner = Self.assignment(in: String(entry)) else { continue }
                    let entryText = String(entry)
                    let parts = Self.keyParts(String(entryText[..<inner]))
                    if lines[key + parts] == nil { lines[key + parts] = number }
                }
            }
            for delimiter in ["\"\"\"", "'''"] where rest.hasPrefix(delimiter) {
                if !rest.dropFirst(3).contains(delimiter) { inMultilineString = delimiter }
            }
        }
    }

    /// The line of `path`, else of the nearest enclosing table or key.
    func line(of path: [String]) -> Int? {
        var prefix = path
        while !prefix.isEmpty {
            if let line = lines[prefix] { return line }
            prefix.removeLast()
        }
        return nil
    }

    /// The index of the `=` that ends a key, outside quotes.
    private static func assignment(in line: String) -> String.Index? {
        var quote: Character? = nil
        for index in line.indices {
            let character = line[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "=" {
                return index
            }
        }
        return nil
    }

    /// `a."b.c".d` → ["a", "b.c", "d"]
    static func keyParts(_ key: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var quote: Character? = nil
        for character in key {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "." {
                parts.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current.trimmingCharacters(in: .whitespaces))
        return parts
    }

    /// A key as it would be written: bare if it can be, else quoted.
    static func quotedIfNeeded(_ key: String) -> String {
        let bare = !key.isEmpty && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
        return bare ? key : "\"\(key)\""
    }
}
