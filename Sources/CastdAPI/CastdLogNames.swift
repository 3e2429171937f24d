// The words of castd's log filter, shared by the daemon (flags, configuration, SetLogFilter) and
// its clients (castc log-level), so that both accept and print the same names and refuse the same
// patterns with the same sentences.

#if canImport(Glibc)
    import Glibc
#endif

/// A log level name or a subsystem pattern that castd does not accept; `message` says why and
/// what is allowed.
public struct CastdLogFilterError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

extension Castd_V1_LogLevel {
    /// The level names, lowest first: the Cast SDK's logger names where it has them (verbose;
    /// its assert is critical here), swift-log's otherwise. `none` silences.
    public static let names = ["verbose", "debug", "info", "notice", "warning", "error", "critical", "none"]

    /// Accepted besides ``names``: swift-log's `trace` and the Cast SDK's `assert`.
    public static let aliases = ["trace": Castd_V1_LogLevel.verbose, "assert": .critical]

    /// "verbose", "debug", …, "none"; "unspecified" for `.unspecified`.
    public var name: String {
        switch self {
        case .unspecified: "unspecified"
        case .verbose: "verbose"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        case .none: "none"
        case .UNRECOGNIZED(let n): "level \(n)"
        }
    }

    /// Parses a level name, in any case: one of ``names``, or `trace` (= verbose) or `assert`
    /// (= critical).
    /// - Throws: ``CastdLogFilterError`` naming the word and listing the names.
    public init(parsing text: String) throws(CastdLogFilterError) {
        let word = text.lowercased()
        if let index = Self.names.firstIndex(of: word), let level = Castd_V1_LogLevel(rawValue: index + 1) {
            self = level
        } else if let level = Self.aliases[word] {
            self = level
        } else {
            throw CastdLogFilterError(
                "unknown log level '\(text)': use \(Self.names.dropLast().joined(separator: ", ")) or none "
                    + "(trace = verbose, assert = critical)")
        }
    }
}

/// Subsystem patterns of a log filter: a subsystem's name, or a glob over names as fnmatch(3)
/// reads it (`*`, `?`, `[...]`, case-sensitive): `CastChannel`, `Cast*Session`, `Discovery*`.
public enum CastdLogPattern {
    /// The longest pattern castd keeps, in bytes of UTF-8.
    public static let maximumLength = 128

    /// Why `pattern` cannot be a subsystem pattern, or nil if it can: it must not be empty, have
    /// white space, control characters or `=`, or an unclosed `[` or a trailing `\`.
    public static func problem(_ pattern: String) -> String? {
        guard !pattern.isEmpty else { return "a subsystem pattern cannot be empty" }
        guard pattern.utf8.count <= maximumLength else {
            return "subsystem pattern '\(pattern.prefix(40))…' is longer than \(maximumLength) bytes"
        }
        if pattern.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F })
        {
            return "subsystem pattern '\(printable(pattern))' contains white space or control characters"
        }
        if pattern.contains("=") {
            return "subsystem pattern '\(pattern)' contains '=' (write PATTERN=LEVEL, e.g. CastChannel*=verbose)"
        }
        let characters = Array(pattern.unicodeScalars)
        var index = 0
        while index < characters.count {
            switch characters[index] {
            case "\\":
                guard index + 1 < characters.count else {
                    return "subsystem pattern '\(pattern)' ends with a '\\' that escapes nothing"
                }
                index += 2
            case "[":
                guard let end = closingBracket(characters, from: index) else {
                    return "subsystem pattern '\(pattern)' has a '[' without its ']' (write \\[ for a literal [)"
                }
                index = end + 1
            default:
                index += 1
            }
        }
        return nil
    }

    /// Why castd refuses `pattern`, or nil if it takes it: ``problem(_:)``, or fnmatch(3) does
    /// not accept it as a glob.
    public static func refusal(_ pattern: String) -> String? {
        if let problem = problem(pattern) { return problem }
        let result = fnmatch(pattern, "", 0)
        guard result == 0 || result == FNM_NOMATCH else { return "subsystem pattern '\(pattern)' is not a valid glob" }
        return nil
    }

    /// Checks a pattern. - Throws: ``CastdLogFilterError`` with ``problem(_:)``.
    public static func validate(_ pattern: String) throws(CastdLogFilterError) {
        if let problem = problem(pattern) { throw CastdLogFilterError(problem) }
    }

    /// The index of the `]` closing the bracket expression that opens at `open`: a `]` right
    /// after `[` or `[!`/`[^` is a member, and `[:class:]` is skipped whole.
    private static func closingBracket(_ characters: [Unicode.Scalar], from open: Int) -> Int? {
        var index = open + 1
        if index < characters.count, characters[index] == "!" || characters[index] == "^" { index += 1 }
        if index < characters.count, characters[index] == "]" { index += 1 }
        while index < characters.count {
            if characters[index] == "[", index + 1 < characters.count, characters[index + 1] == ":" {
                // A character class, [:alpha:]: up to its ":]".
                var end = index + 2
                while end + 1 < characters.count, !(characters[end] == ":" && characters[end + 1] == "]") { end += 1 }
                guard end + 1 < characters.count else { return nil }
                index = end + 2
                continue
            }
            if characters[index] == "]" { return index }
            index += 1
        }
        return nil
    }

    private static func printable(_ text: String) -> String {
        String(
            text.unicodeScalars.map { scalar -> String in
                scalar.value < 0x20 || scalar.value == 0x7F ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
            }.joined())
    }
}
