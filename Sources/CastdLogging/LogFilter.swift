import CastdAPI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which records castd keeps: a minimum level, and levels for subsystems named by patterns.
///
/// A subsystem's level is that of the *last* pattern matching its name, else the minimum; a
/// record passes when its level is at least its subsystem's. Patterns are globs as fnmatch(3)
/// reads them (`*`, `?`, `[...]`, case-sensitive), so `Cast*Session` and `Discovery*` name groups
/// of subsystems and a later, narrower pattern can make an exception to an earlier, wider one:
///
/// ```swift
/// var filter = LogFilter(minimum: .info)
/// try filter.set(.verbose, for: "Cast*")
/// try filter.set(.warning, for: "CastAuth")   // all Cast* but CastAuth at verbose
/// ```
public struct LogFilter: Sendable, Equatable, CustomStringConvertible {
    /// One pattern and its level.
    public struct Entry: Sendable, Equatable {
        public var pattern: String
        public var level: LogLevel

        public init(pattern: String, level: LogLevel) {
            self.pattern = pattern
            self.level = level
        }
    }

    /// The level of subsystems no pattern matches.
    public var minimum: LogLevel
    /// The patterns in the order they apply: the last one matching a name decides.
    public private(set) var entries: [Entry] = []

    public init(minimum: LogLevel = .info) {
        self.minimum = minimum
    }

    /// A filter with `entries`, applied in order as by ``set(_:for:)``.
    /// - Throws: ``LogFilterError`` for the first invalid pattern.
    public init(minimum: LogLevel, entries: [Entry]) throws(LogFilterError) {
        self.minimum = minimum
        for entry in entries { try set(entry.level, for: entry.pattern) }
    }

    /// The level of `subsystem`: the last matching pattern's, else ``minimum``.
    public func level(for subsystem: String) -> LogLevel {
        entries.last { Self.matches($0.pattern, subsystem) }?.level ?? minimum
    }

    /// Whether a record of `level` from `subsystem` passes.
    public func passes(_ level: LogLevel, from subsystem: String) -> Bool {
        let threshold = self.level(for: subsystem)
        return threshold != .none && level >= threshold
    }

    /// Gives `pattern` a level. A pattern already in the filter is replaced and moves last, so
    /// that the newest setting wins where patterns overlap.
    /// - Throws: ``LogFilterError`` if `pattern` is not a valid pattern.
    public mutating func set(_ level: LogLevel, for pattern: String) throws(LogFilterError) {
        try Self.validate(pattern: pattern)
        entries.removeAll { $0.pattern == pattern }
        entries.append(Entry(pattern: pattern, level: level))
    }

    /// Removes `pattern`; returns whether it was there.
    @discardableResult
    public mutating func remove(pattern: String) -> Bool {
        let before = entries.count
        entries.removeAll { $0.pattern == pattern }
        return entries.count != before
    }

    /// "info" or "info, CastChannel*=verbose, Discovery=debug".
    public var description: String {
        ([minimum.name] + entries.map { "\($0.pattern)=\($0.level.name)" }).joined(separator: ", ")
    }

    // MARK: patterns

    /// Checks a subsystem pattern: not empty, at most 128 bytes, no white space, control
    /// characters or `=`, brackets closed, and accepted by fnmatch(3).
    /// - Throws: ``LogFilterError`` saying what is wrong.
    public static func validate(pattern: String) throws(LogFilterError) {
        if let refusal = CastdLogPattern.refusal(pattern) { throw LogFilterError(refusal) }
    }

    /// Whether the glob `pattern` matches the subsystem `name` (fnmatch(3), no flags:
    /// case-sensitive, `\` escapes).
    public static func matches(_ pattern: String, _ name: String) -> Bool {
        fnmatch(pattern, name, 0) == 0
    }

    // MARK: configuration and flags

    /// The filter castd starts with, from its configuration or command line: a minimum level
    /// (nil: info) and `PATTERN=LEVEL` entries, applied in order.
    ///
    /// ```swift
    /// try LogFilter(level: "notice", filters: ["Cast*=debug", "CastChannel=verbose"])
    /// ```
    ///
    /// - Throws: ``LogFilterError`` whose message names the bad level or entry:
    ///   `unknown log level 'loud': use verbose, …`, or
    ///   `log filter 'CastChannel*=loud': unknown log level 'loud': use verbose, …`.
    public init(level: String?, filters: [String]) throws(LogFilterError) {
        var filter = LogFilter()
        if let level { filter.minimum = try LogLevel(parsing: level) }
        for text in filters {
            let (pattern, level) = try Self.parse(entry: text)
            try filter.set(level, for: pattern)
        }
        self = filter
    }

    /// The same from `(pattern, level)` pairs, as a configuration table holds them.
    /// - Throws: ``LogFilterError`` naming the bad entry: `log filter "Cast Channel" = "verbose": …`.
    public init(level: String?, patterns: [(pattern: String, level: String)]) throws(LogFilterError) {
        var filter = try LogFilter(level: level, filters: [])
        for (pattern, name) in patterns {
            do {
                try filter.set(try LogLevel(parsing: name), for: pattern)
            } catch {
                throw LogFilterError("log filter \"\(pattern)\" = \"\(name)\": \(error.message)")
            }
        }
        self = filter
    }

    /// Parses `PATTERN=LEVEL` (`CastChannel*=verbose`); the level follows the last `=`.
    /// - Throws: ``LogFilterError`` naming the entry.
    public static func parse(entry text: String) throws(LogFilterError) -> (pattern: String, level: LogLevel) {
        guard let equals = text.lastIndex(of: "=") else {
            throw LogFilterError(
                "log filter '\(text)': write PATTERN=LEVEL, e.g. CastChannel*=verbose or 'Discovery*=debug'")
        }
        let pattern = String(text[..<equals])
        let name = String(text[text.index(after: equals)...])
        do {
            try validate(pattern: pattern)
            return (pattern, try LogLevel(parsing: name))
        } catch {
            throw LogFilterError("log filter '\(text)': \(error.message)")
        }
    }

    // MARK: castd.v1

    /// As castd.v1 sends it (without `known_subsystems`).
    public var api: Castd_V1_LogFilter {
        var filter = Castd_V1_LogFilter()
        filter.minimumLevel = minimum.api
        filter.subsystems = entries.map { entry in
            var level = Castd_V1_SubsystemLevel()
            level.pattern = entry.pattern
            level.level = entry.level.api
            return level
        }
        return filter
    }
}
