import CastDevices
import Foundation

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

/// Reads castd.toml (TOML, the part of it castd's settings use: `ConfigTOML`) into a
/// `ConfigLayer`, checking every key and value against `ConfigKey`.
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
        return try parse(bytes: [UInt8](data), file: path)
    }

    /// Checks the text of a configuration file; `file` names it in errors.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> ConfigLayer {
        try parse(bytes: Array(text.utf8), file: file)
    }

    /// Checks the bytes of a configuration file, UTF-8 among the rest; `file` names it in errors.
    public static func parse(bytes: [UInt8], file: String) throws(ConfigError) -> ConfigLayer {
        guard bytes.count <= maximumFileSize else {
            throw ConfigError(
                file: file, line: nil, key: nil, problem: "\(bytes.count) bytes, over the \(maximumFileSize)-byte limit"
            )
        }
        let document = try ConfigTOML.parse(bytes, file: file)
        var layer = ConfigLayer()
        for entry in document.root.entries {
            let line = entry.line
            if ConfigKey.tables.contains(entry.key) {
                guard case .table(let index) = entry.value else {
                    throw ConfigError(
                        file: file, line: line, key: ConfigTOML.display([entry.key]),
                        problem: "must be a table ([\(entry.key)]), not \(describe(entry.value))")
                }
                for inner in document.tables[index].entries {
                    try read(inner, at: [entry.key, inner.key], into: &layer, file: file, document: document)
                }
            } else {
                try read(entry, at: [entry.key], into: &layer, file: file, document: document)
            }
        }
        return layer
    }

    private static func read(
        _ entry: ConfigTOML.Entry, at path: [String], into layer: inout ConfigLayer, file: String, document: ConfigTOML
    ) throws(ConfigError) {
        guard let key = ConfigKey.at(path) else {
            throw ConfigError(
                file: file, line: entry.line, key: ConfigTOML.display(path), problem: unknownKeyProblem(path))
        }
        let converted = try convert(entry.value, for: key, file: file, line: entry.line, document: document)
        if converted == .table([]) { return }  // an empty [log.filters]: nothing set
        layer.set(key, converted, from: "\(file):\(entry.line)")
    }

    private static func convert(
        _ value: ConfigTOML.Value, for key: ConfigKey, file: String, line: Int, document: ConfigTOML
    ) throws(ConfigError) -> ConfigValue {
        func wrongType(_ expected: String) -> ConfigError {
            ConfigError(
                file: file, line: line, key: key.name, problem: "must be \(expected), not \(describe(value))")
        }
        switch key.kind {
        case .string:
            guard case .string(let string) = value else { throw wrongType("a string") }
            return .string(string)
        case .bool:
            guard case .bool(let bool) = value else { throw wrongType("true or false") }
            return .bool(bool)
        case .integer(let range):
            guard case .integer(let integer) = value else { throw wrongType("an integer") }
            guard range.contains(integer) else {
                throw ConfigError(
                    file: file, line: line, key: key.name,
                    problem: "\(integer) is out of range; use \(range.lowerBound) to \(range.upperBound)")
            }
            return .integer(integer)
        case .strings:
            guard case .array(let array) = value else { throw wrongType("an array of strings") }
            var strings: [String] = []
            for (index, element) in array.enumerated() {
                guard case .string(let string) = element else {
                    throw ConfigError(
                        file: file, line: line, key: key.name,
                        problem: "element \(index + 1) must be a string, not \(describe(element))")
                }
                strings.append(string)
            }
            return .strings(strings)
        case .stringTable:
            guard case .table(let index) = value else { throw wrongType("a table of strings ([\(key.name)])") }
            var entries: [(key: String, value: String)] = []
            // In the file's order, which matters for filters (the last matching pattern wins).
            for entry in document.tables[index].entries {
                guard case .string(let string) = entry.value else {
                    throw ConfigError(
                        file: file, line: entry.line, key: ConfigTOML.display(key.path + [entry.key]),
                        problem: "must be a string, not \(describe(entry.value))")
                }
                entries.append((entry.key, string))
            }
            return .table(entries)
        }
    }

    private static func describe(_ value: ConfigTOML.Value) -> String {
        switch value {
        case .string(let string): "a string (\"\(string)\")"
        case .integer(let integer): "an integer (\(integer))"
        case .bool(let bool): bool ? "true" : "false"
        case .array: "an array"
        case .table: "a table"
        }
    }

    /// "unknown key; [limits] takes max_frame_bytes, …; did you mean max_frame_bytes?"
    static func unknownKeyProblem(_ path: [String]) -> String {
        let siblings = ConfigKey.allCases.filter {
            $0.path.count == path.count && Array($0.path.dropLast()) == Array(path.dropLast())
        }
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
        // Suggest only for a key someone could have mistyped (the distance is quadratic).
        if typed.count <= 64, let closest = names.min(by: { editDistance($0, typed) < editDistance($1, typed) }),
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
