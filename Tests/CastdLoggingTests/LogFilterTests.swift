import CastdAPI
import Logging
import Testing

@testable import CastdLogging

@Suite struct LogLevelTests {
    @Test func namesParseInAnyCaseWithTheSDKsAliases() throws {
        let expected: [(String, LogLevel)] = [
            ("verbose", .verbose), ("trace", .verbose), ("TRACE", .verbose), ("Verbose", .verbose), ("debug", .debug),
            ("info", .info), ("INFO", .info), ("notice", .notice), ("warning", .warning), ("error", .error),
            ("critical", .critical), ("assert", .critical), ("none", .none), ("NoNe", .none),
        ]
        for (text, level) in expected {
            #expect(try LogLevel(parsing: text) == level, "\(text)")
        }
    }

    @Test func anUnknownNameIsRefusedListingTheNames() {
        for bad in ["loud", "", "warn", "verbose ", "7"] {
            let message = #expect(throws: LogFilterError.self) { try LogLevel(parsing: bad) }?.message ?? ""
            #expect(message.contains("'\(bad)'"), "\(message)")
            #expect(message.contains("verbose, debug, info, notice, warning, error, critical or none"), "\(message)")
            #expect(message.contains("trace = verbose"), "\(message)")
        }
    }

    @Test func levelsAreOrderedAndMapToTheAPIAndSwiftLog() {
        #expect(LogLevel.allCases == LogLevel.allCases.sorted())
        #expect(LogLevel.verbose < .debug && .critical < .none)
        for level in LogLevel.allCases {
            #expect(LogLevel(level.api) == level)
            #expect(level.api.name == level.name)
        }
        #expect(LogLevel.verbose.api == .verbose && LogLevel.none.api == .none && LogLevel.critical.api == .critical)
        #expect(LogLevel(Castd_V1_LogLevel.unspecified) == nil)
        #expect(LogLevel(Castd_V1_LogLevel.UNRECOGNIZED(42)) == nil)
        #expect(LogLevel(Logger.Level.trace) == .verbose)
        #expect(LogLevel.verbose.loggerLevel == .trace)
        #expect(LogLevel.none.loggerLevel == .critical)
        for level in Logger.Level.allCases { #expect(LogLevel(level).loggerLevel == level) }
    }

    @Test func syslogPriorities() {
        let priorities = LogLevel.allCases.dropLast().map(\.syslogPriority)
        #expect(priorities == [7, 7, 6, 5, 4, 3, 2])
    }
}

@Suite struct LogFilterTests {
    @Test func globsMatchAsFnmatchDoes() {
        #expect(LogFilter.matches("Cast*Session", "CastSession"))
        #expect(LogFilter.matches("Cast*Session", "CastMediaSession"))
        #expect(!LogFilter.matches("Cast*Session", "CastChannel"))
        #expect(!LogFilter.matches("Cast*Session", "CastSessions"))
        #expect(LogFilter.matches("Discovery*", "Discovery"))
        #expect(LogFilter.matches("Discovery*", "DiscoveryBrowser"))
        #expect(!LogFilter.matches("Discovery*", "CastDiscovery"))
        #expect(LogFilter.matches("CastChannel", "CastChannel"))
        #expect(!LogFilter.matches("castchannel", "CastChannel"), "case-sensitive")
        #expect(LogFilter.matches("Cast?uth", "CastAuth"))
        #expect(LogFilter.matches("Cast[AM]*", "CastAuth") && LogFilter.matches("Cast[AM]*", "CastMedia"))
        #expect(!LogFilter.matches("Cast[!AM]*", "CastAuth") && LogFilter.matches("Cast[!AM]*", "CastChannel"))
        #expect(LogFilter.matches("*", "RPC"))
        #expect(LogFilter.matches("Cast\\*", "Cast*") && !LogFilter.matches("Cast\\*", "CastAuth"))
    }

    @Test func theLastMatchingPatternDecidesElseTheMinimum() throws {
        var filter = LogFilter(minimum: .notice)
        try filter.set(.verbose, for: "Cast*")
        try filter.set(.warning, for: "CastAuth")
        #expect(filter.level(for: "CastChannel") == .verbose)
        #expect(filter.level(for: "CastAuth") == .warning)
        #expect(filter.level(for: "Discovery") == .notice)
        // A wider pattern set later wins over the narrower one before it.
        try filter.set(.error, for: "Cast*Session")
        #expect(filter.level(for: "CastSession") == .error)
        #expect(filter.level(for: "CastAuth") == .warning)
        #expect(filter.passes(.error, from: "CastSession") && !filter.passes(.warning, from: "CastSession"))
        #expect(filter.passes(.verbose, from: "CastChannel"))
        #expect(!filter.passes(.info, from: "Discovery") && filter.passes(.notice, from: "Discovery"))
    }

    @Test func settingAPatternAgainReplacesItAndMovesItLast() throws {
        var filter = LogFilter()
        try filter.set(.debug, for: "Cast*")
        try filter.set(.error, for: "CastChannel")
        #expect(filter.level(for: "CastChannel") == .error)
        try filter.set(.verbose, for: "Cast*")
        #expect(filter.entries.map(\.pattern) == ["CastChannel", "Cast*"])
        #expect(filter.entries.map(\.level) == [.error, .verbose])
        #expect(filter.level(for: "CastChannel") == .verbose, "Cast* is last now")
        #expect(filter.description == "info, CastChannel=error, Cast*=verbose")
    }

    @Test func removingAPatternFallsBackToTheOthers() throws {
        var filter = LogFilter(minimum: .warning)
        try filter.set(.debug, for: "Cast*")
        try filter.set(.verbose, for: "CastChannel")
        var removed = filter.remove(pattern: "CastChannel")
        #expect(removed)
        #expect(filter.level(for: "CastChannel") == .debug)
        removed = filter.remove(pattern: "CastChannel")
        #expect(!removed, "already gone")
        removed = filter.remove(pattern: "Cast*")
        #expect(removed)
        #expect(filter.level(for: "CastChannel") == .warning)
        #expect(filter.entries.isEmpty)
    }

    @Test func noneSilencesEvenCriticalRecords() throws {
        var filter = LogFilter(minimum: .none)
        #expect(!filter.passes(.critical, from: "RPC"))
        try filter.set(.none, for: "Discovery")
        filter.minimum = .verbose
        #expect(!filter.passes(.critical, from: "Discovery"))
        #expect(filter.passes(.verbose, from: "RPC"))
    }

    @Test func invalidPatternsAreRefusedSayingWhy() {
        let cases: [(String, String)] = [
            ("", "cannot be empty"),
            ("Cast Channel", "white space"),
            ("Cast\tChannel", "white space"),
            ("Cast\u{1}", "control characters"),
            ("Cast=Channel", "contains '='"),
            ("Cast[AB", "'[' without its ']'"),
            ("Cast[]", "'[' without its ']'"),
            ("Cast[[:alpha:]", "'[' without its ']'"),
            ("Cast\\", "escapes nothing"),
            (String(repeating: "C", count: 129), "longer than 128"),
        ]
        for (pattern, reason) in cases {
            let message = #expect(throws: LogFilterError.self) { try LogFilter.validate(pattern: pattern) }?.message
            #expect(message?.contains(reason) == true, "\(pattern): \(message ?? "accepted")")
            var filter = LogFilter()
            #expect(throws: LogFilterError.self) { try filter.set(.debug, for: pattern) }
            #expect(filter.entries.isEmpty)
        }
        for good in [
            "CastChannel", "Cast*Session", "Discovery*", "Cast[]]x", "Cast[!A]*", "Cast[[:upper:]]*", "Cast\\[", "*",
        ] {
            #expect(throws: Never.self) { try LogFilter.validate(pattern: good) }
        }
    }

    @Test func theFlagAndConfigurationFormsBuildTheStartupFilter() throws {
        let filter = try LogFilter(level: "NOTICE", filters: ["Cast*=debug", "CastChannel*=verbose", "Discovery=none"])
        #expect(filter.minimum == .notice)
        #expect(
            filter.entries == [
                .init(pattern: "Cast*", level: .debug), .init(pattern: "CastChannel*", level: .verbose),
                .init(pattern: "Discovery", level: .none),
            ])
        #expect(try LogFilter(level: nil, filters: []) == LogFilter(minimum: .info))
        // The level follows the last '='.
        #expect(try LogFilter.parse(entry: "RPC=trace") == ("RPC", .verbose))

        let table = try LogFilter(level: "warning", patterns: [("CastChannel*", "verbose"), ("Cast*Session", "debug")])
        #expect(table.entries.map(\.pattern) == ["CastChannel*", "Cast*Session"])
        #expect(table.minimum == .warning)
    }

    @Test func aBadEntryIsNamedInTheError() {
        let cases: [([String], String, [String])] = [
            (["CastChannel*=loud"], "CastChannel*=loud", ["unknown log level 'loud'"]),
            (["CastChannel*"], "CastChannel*", ["PATTERN=LEVEL"]),
            (["Cast Channel=debug"], "Cast Channel=debug", ["white space"]),
            (["=debug"], "=debug", ["cannot be empty"]),
            (["RPC=debug", "Cast[=info"], "Cast[=info", ["without its ']'"]),
        ]
        for (filters, entry, reasons) in cases {
            let message =
                #expect(throws: LogFilterError.self) { try LogFilter(level: nil, filters: filters) }?.message ?? ""
            #expect(message.contains("'\(entry)'") && reasons.allSatisfy(message.contains), "\(message)")
        }
        let level = #expect(throws: LogFilterError.self) { try LogFilter(level: "loud", filters: []) }
        #expect(
            level?.message.hasPrefix("unknown log level 'loud': use verbose") == true, "\(String(describing: level))")
        let table = #expect(throws: LogFilterError.self) {
            try LogFilter(level: nil, patterns: [("Cast Channel", "debug")])
        }
        #expect(table?.message.contains("\"Cast Channel\" = \"debug\"") == true, "\(String(describing: table))")
    }

    @Test func theAPIFormListsPatternsInOrder() throws {
        var filter = LogFilter(minimum: .warning)
        try filter.set(.verbose, for: "CastChannel*")
        try filter.set(.none, for: "Discovery")
        let api = filter.api
        #expect(api.minimumLevel == .warning)
        #expect(api.subsystems.map(\.pattern) == ["CastChannel*", "Discovery"])
        #expect(api.subsystems.map(\.level) == [.verbose, .none])
    }
}

@Suite struct LogFilterStoreTests {
    @Test func aChangeIsSeenAtOnceDespiteTheCache() throws {
        let store = LogFilterStore(LogFilter(minimum: .info))
        #expect(store.level(for: "CastChannel") == .info)  // cached now
        try store.update { try $0.set(.verbose, for: "CastChannel*") }
        #expect(store.level(for: "CastChannel") == .verbose)
        #expect(store.level(for: "CastAuth") == .info)
        store.update { $0.minimum = .error }
        #expect(store.level(for: "CastAuth") == .error)
        #expect(store.level(for: "CastChannel") == .verbose)
    }

    @Test func aFailedChangeChangesNothing() {
        let store = LogFilterStore(LogFilter(minimum: .info))
        #expect(throws: LogFilterError.self) {
            try store.update { filter in
                filter.minimum = .verbose
                try filter.set(.debug, for: "bad pattern")
            }
        }
        #expect(store.filter == LogFilter(minimum: .info))
        #expect(store.level(for: "RPC") == .info)
    }

    @Test func resetReturnsToTheStartupFilter() throws {
        let startup = try LogFilter(level: "notice", filters: ["RPC=debug"])
        let store = LogFilterStore(startup)
        try store.update {
            try $0.set(.verbose, for: "Cast*")
            $0.remove(pattern: "RPC")
        }
        #expect(store.level(for: "RPC") == .notice)
        #expect(store.reset() == startup)
        #expect(store.filter == startup)
        #expect(store.level(for: "RPC") == .debug)
        #expect(store.level(for: "CastChannel") == .notice)
    }

    @Test func concurrentReadersAndWritersAgree() async throws {
        let store = LogFilterStore(LogFilter(minimum: .info))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for i in 0..<2000 { _ = store.level(for: "Subsystem\(i % 50)") }
                }
            }
            group.addTask {
                for i in 0..<200 { store.update { $0.minimum = i.isMultiple(of: 2) ? .debug : .warning } }
            }
        }
        store.update { $0.minimum = .error }
        for i in 0..<50 { #expect(store.level(for: "Subsystem\(i)") == .error) }
    }
}
