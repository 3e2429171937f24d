import CastTestSupport
import CastdDaemon
import Foundation
import Testing

/// castd.toml's reader (ConfigTOML): the part of TOML 1.0 castd's settings use, read strictly;
/// the rest refused with its line.
@Suite(.tags(.cpuBound)) struct ConfigTOMLTests {
    static func parse(_ text: String) throws -> ConfigLayer { try ConfigFile.parse(text, file: "c.toml") }

    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    // MARK: accepted

    @Test(
        arguments: [
            // Basic strings and their escapes; literal strings as written.
            ("socket = \"/run/a b\"", ConfigKey.socket, ConfigValue.string("/run/a b")),
            ("socket = \"\\b\\t\\n\\f\\r\\\"\\\\\"", .socket, .string("\u{8}\t\n\u{C}\r\"\\")),
            ("socket = \"\\u00e9\\u00E9 \\U0001F600 \\u0000\"", .socket, .string("éé 😀 \u{0}")),
            ("socket = \"tab\there, é, 😀\"", .socket, .string("tab\there, é, 😀")),
            ("socket = 'C:\\path\\\"x\"'", .socket, .string("C:\\path\\\"x\"")),
            ("socket = ''", .socket, .string("")),
            ("socket = \"\"", .socket, .string("")),
            ("discovery = true", .discovery, .bool(true)),
            ("discovery = false # off", .discovery, .bool(false)),
            // Whole numbers: a sign, underscores between digits, zero.
            ("[limits]\nwatcher_queue = 1_000_000", .watcherQueue, .integer(1_000_000)),
            ("[limits]\nidle_timeout_seconds = +30", .idleTimeoutSeconds, .integer(30)),
            ("[limits]\nidle_timeout_seconds = 0", .idleTimeoutSeconds, .integer(0)),
            ("[limits]\nidle_timeout_seconds = -0", .idleTimeoutSeconds, .integer(0)),
            // Arrays: empty, over several lines with comments, a trailing comma.
            ("devices = []", .devices, .strings([])),
            ("devices = [ ]", .devices, .strings([])),
            ("devices = [\"a\", 'b',]", .devices, .strings(["a", "b"])),
            (
                "devices = [\n  \"a\", # the kitchen\n  # nothing\n  \"b\"\n\n  ,\"c\",\n]", .devices,
                .strings(["a", "b", "c"])
            ),
            // Keys: quoted, dotted, with blanks around the dots.
            ("\"socket\" = \"/x\"", .socket, .string("/x")),
            ("'socket' = \"/x\"", .socket, .string("/x")),
            ("limits.watcher_queue = 64", .watcherQueue, .integer(64)),
            ("limits . \"watcher_queue\" = 64", .watcherQueue, .integer(64)),
            (
                "[log]\nfilters.\"Cast*\" = \"debug\"\nfilters.RPC = 'info'", .logFilters,
                .table([("Cast*", "debug"), ("RPC", "info")])
            ),
            // Headers: quoted, dotted, with blanks; defined after a table inside them.
            ("[ \"limits\" ]\nwatcher_queue = 64", .watcherQueue, .integer(64)),
            ("[ log . 'filters' ] # comment\nA = \"debug\"", .logFilters, .table([("A", "debug")])),
            ("[log.filters]\nA = \"debug\"\n[log]\nlevel = \"info\"", .logLevel, .string("info")),
            ("log.level = \"info\"\n[log.filters]\nA = \"debug\"", .logFilters, .table([("A", "debug")])),
            // Inline tables.
            (
                "[log]\nfilters = { \"Cast*\" = \"debug\", RPC = 'info' }", .logFilters,
                .table([("Cast*", "debug"), ("RPC", "info")])
            ),
            ("limits = { watcher_queue = 64 }", .watcherQueue, .integer(64)),
            ("log = {}\n", .logLevel, nil),
            // Blanks and tabs anywhere TOML allows them; blank and comment lines.
            ("\n\t# castd\n\n \tsocket\t=\t\"/x\"\t# here\n\n", .socket, .string("/x")),
        ] as [(String, ConfigKey, ConfigValue?)])
    func aConstructIsRead(_ text: String, _ key: ConfigKey, _ value: ConfigValue?) throws {
        let layer = try Self.parse(text)
        #expect(layer[key] == value, "\(text)")
    }

    @Test func theLineOfEachValueIsWhereItsKeyIs() throws {
        let layer = try Self.parse(
            "devices = [\n\"a\",\n\"b\",\n]\n[log]\nfilters = { A = \"debug\" }\n[limits]\n\n watcher_queue = 64\n")
        #expect(layer.origins[.devices] == "c.toml:1")
        #expect(layer.origins[.logFilters] == "c.toml:6")
        #expect(layer.origins[.watcherQueue] == "c.toml:9")
    }

    @Test func crlfLineEndsReadAsLF() throws {
        let lf = ConfigFileTests.complete + "\n"
        let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(crlf.utf8.contains(UInt8(ascii: "\r")))
        let fromCRLF = try Self.parse(crlf)
        #expect(fromCRLF == (try Self.parse(lf)))
        #expect(fromCRLF.origins[.maxFrameBytes] == "c.toml:14")
        // In a comment, an array and after a header, too.
        let layer = try Self.parse("# c\r\n[log]\r\nlevel = \"info\" # c\r\n[limits]\r\n\r\nwatcher_queue = 64\r\n")
        #expect(layer[.watcherQueue] == .integer(64) && layer.origins[.watcherQueue] == "c.toml:6")
        #expect(try Self.parse("devices = [\r\n\"a\", # c\r\n\"b\"\r\n]\r\n")[.devices] == .strings(["a", "b"]))
    }

    @Test func aByteOrderMarkAtTheStartIsSkipped() throws {
        let layer = try Self.parse("\u{FEFF}socket = \"/x\"\n")
        #expect(layer[.socket] == .string("/x"))
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("[limits]\nwatcher_queue = 64\n".utf8)
        #expect(try ConfigFile.parse(bytes: bytes, file: "c.toml")[.watcherQueue] == .integer(64))
        // Anywhere else it is a character like any other: in a string, fine; as a key, not.
        #expect(try Self.parse("socket = \"/\u{FEFF}x\"")[.socket] == .string("/\u{FEFF}x"))
        let error = #expect(throws: ConfigError.self) { try Self.parse("socket = \"/x\"\n\u{FEFF}discovery = true\n") }
        #expect(error?.line == 2, "\(String(describing: error))")
    }

    @Test func emptyAndCommentOnlyFilesSetNothing() throws {
        for text in [
            "", "\n", "# nothing\n", "\r\n\t \r\n", "\u{FEFF}", "[log.filters]\n# none yet\n", "[access]\n[limits]\n",
        ] {
            #expect(try Self.parse(text).values.isEmpty, "\(text.debugDescription)")
        }
    }

    /// Whole numbers are 64-bit; the range each setting takes is checked after.
    @Test func wholeNumbersUpTo64Bits() throws {
        var error = #expect(throws: ConfigError.self) {
            try Self.parse("[limits]\nwatcher_queue = 9_223_372_036_854_775_807\n")
        }
        #expect(
            error?.description
                == "c.toml:2: limits.watcher_queue: 9223372036854775807 is out of range; use 2 to 1000000")
        error = #expect(throws: ConfigError.self) { try Self.parse("[limits]\nwatcher_queue = -9223372036854775808\n") }
        #expect(
            error?.description.hasPrefix("c.toml:2: limits.watcher_queue: -9223372036854775808 is out of range") == true
        )
        error = #expect(throws: ConfigError.self) { try Self.parse("[limits]\nwatcher_queue = 9223372036854775808\n") }
        #expect(
            error?.description
                == "c.toml:2: '9223372036854775808' is too large for a whole number: they go from -9223372036854775808 to 9223372036854775807"
        )
        error = #expect(throws: ConfigError.self) {
            try Self.parse("[limits]\nwatcher_queue = -9_223_372_036_854_775_809\n")
        }
        #expect(
            error?.description.hasPrefix("c.toml:2: '-9_223_372_036_854_775_809' is too small for a whole number")
                == true)
        // A long number is quoted in part.
        let long = String(repeating: "9", count: 50)
        error = #expect(throws: ConfigError.self) { try Self.parse("devices = [\n1,\n\(long)\n]") }
        #expect(error?.line == 3)
        #expect(error?.problem.hasPrefix("'\(long.prefix(40))…' is too large") == true, "\(String(describing: error))")
    }

    // MARK: the examples in the repository

    /// packaging/castd.toml sets nothing (theShippedExampleIsValid); with every `#key = value`
    /// line uncommented it sets every key to the default it documents.
    @Test func theShippedExampleUncommentedGivesTheDocumentedDefaults() throws {
        let text = try String(
            contentsOf: Self.repository.appendingPathComponent("packaging/castd.toml"), encoding: .utf8)
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("#") && line.contains(" = ") && !line.hasPrefix("# ") ? line.dropFirst() : line
        }.joined(separator: "\n")
        let layer = try Self.parse(uncommented)
        let expected: [ConfigKey: ConfigValue] = [
            .socket: .string("/run/castd/castd.sock"), .stateDirectory: .string("/var/lib/castd"),
            .devices: .strings(["Kitchen=192.168.1.21:8009"]), .discovery: .bool(true), .trustRoots: .strings([]),
            .deviceAuth: .string("require"), .controlGroups: .strings(["castd"]), .readGroups: .strings([]),
            .maxFrameBytes: .integer(4_194_304), .maxConnectionsPerUID: .integer(256),
            .maxCallsPerConnection: .integer(128), .watcherQueue: .integer(256), .idleTimeoutSeconds: .integer(30),
            .maxMDNSServices: .integer(1024), .maxMDNSServicesPerHost: .integer(32), .frameTimeoutSeconds: .integer(30),
            .logLevel: .string("info"),
            .logFilters: .table([("CastChannel*", "verbose"), ("Discovery*", "debug")]),
            .launchAndroidTV: .bool(false), .launchIfRunning: .string("join"), .launchFilterDevices: .bool(false),
            .httpPort: .integer(0),
        ]
        #expect(layer.values == expected)
    }

    /// The README's `[log]` example, and the fuzzer's seed with every key.
    @Test func theOtherExamplesInTheRepositoryParse() throws {
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```toml\n").dropFirst().map {
            $0.components(separatedBy: "```")[0]
        }
        #expect(!blocks.isEmpty)
        for block in blocks { _ = try Self.parse(block) }
        let logExample = try Self.parse(try #require(blocks.first { $0.contains("[log]") }))
        #expect(logExample[.logLevel] == .string("info"))
        #expect(logExample[.logFilters] == .table([("CastChannel*", "verbose"), ("Discovery*", "debug")]))
        let launchExample = try Self.parse(try #require(blocks.first { $0.contains("[launch]") }))
        #expect(launchExample[.launchAppID] == .string("ABCD1234"))

        let seed = try ConfigFile.load(
            path: Self.repository.appendingPathComponent("Fuzz/Corpus/CastdConfigFuzzer/every-key.toml").path)
        #expect(seed[.devices] == .strings(["Kitchen=192.168.1.20", "10.0.0.5:8009"]))
        #expect(seed[.idleTimeoutSeconds] == .integer(5))
        #expect(seed[.maxMDNSServices] == .integer(64))
        #expect(seed[.maxMDNSServicesPerHost] == .integer(16))
        #expect(seed[.logFilters] == .table([("Cast*", "verbose")]))
        #expect(seed[.launchIfRunning] == .string("relaunch"))
        #expect(seed[.httpPort] == .integer(8095))
        #expect(seed.values.count == 21)
    }

    /// Every input in the fuzzer's corpus is read or refused with a line of its own.
    @Test func theFuzzCorpusIsReadOrRefusedWithALine() throws {
        let directory = Self.repository.appendingPathComponent("Fuzz/Corpus/CastdConfigFuzzer")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names.count >= 18)
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
            let lines = bytes.count(where: { $0 == UInt8(ascii: "\n") }) + 1
            do {
                _ = try ConfigFile.parse(bytes: bytes, file: name)
            } catch {
                #expect(error.line.map { (1...lines).contains($0) } == true, "\(name): \(error)")
            }
        }
    }
}

/// What castd.toml refuses, and the line it names.
@Suite(.tags(.cpuBound)) struct ConfigTOMLRefusalTests {
    @Test(
        arguments: [
            // Values TOML has and no castd setting uses.
            (
                "[limits]\nwatcher_queue = 6.4e1", 2,
                "'6.4e1' is not a whole number; castd's settings take numbers written in decimal digits only"
            ),
            ("[limits]\nwatcher_queue = inf", 2, "'inf' is not a whole number"),
            ("[limits]\nwatcher_queue = -nan", 2, "'-nan' is not a whole number"),
            ("[limits]\nwatcher_queue = .5", 2, "'.5' is not a whole number"),
            (
                "x = 1979-05-27", 1,
                "'1979-05-27' is not a whole number: dates and times are not used by any castd setting"
            ),
            ("x = 1979-05-27T07:32:00-08:00", 1, "dates and times are not used by any castd setting"),
            ("x = 1979-05-27 07:32:00", 1, "dates and times are not used by any castd setting"),
            ("x = 07:32:00.5", 1, "dates and times are not used by any castd setting"),
            (
                "x = 0x1F", 1,
                "'0x1F' is not a whole number as castd reads them: castd's settings take decimal digits only (no hex, octal or binary)"
            ),
            ("x = 0o17", 1, "no hex, octal or binary"),
            ("x = 0b101", 1, "no hex, octal or binary"),
            (
                "x = 007", 1,
                "'007' is not a whole number as TOML writes one: no leading zeros, and each '_' between two digits"
            ),
            ("x = 1__0", 1, "each '_' between two digits"),
            ("x = 10_", 1, "each '_' between two digits"),
            ("x = -_1", 1, "is not a whole number"),
            ("x = +", 1, "'+' is not a whole number"),
            (
                "\nsocket = \"\"\"\n/x\"\"\"", 2,
                "multi-line strings (\"\"\") are not used by any castd setting; write the string on one line"
            ),
            ("socket = '''/x'''", 1, "multi-line strings (''') are not used by any castd setting"),
            ("x = 1\n[[devices]]\nname = \"a\"", 2, "arrays of tables ([[devices]]) are not used by any castd setting"),
            ("devices = [\n\"a\",\n[\"b\"]]", 3, "arrays inside arrays are not used by any castd setting"),
            ("devices = [{ name = \"a\" }]", 1, "tables inside arrays are not used by any castd setting"),
            (
                "log = { filters = { A = \"debug\" } }", 1,
                "inline tables inside inline tables are not used by any castd setting"
            ),
            // Keys and tables defined twice, as TOML forbids.
            (
                "discovery = true\n\ndiscovery = true", 3,
                "discovery: set again (first on line 1); TOML takes each key once"
            ),
            ("socket = \"/a\"\n\"socket\" = \"/b\"", 2, "socket: set again (first on line 1)"),
            ("[log.filters]\nA = \"x\"\n'A' = \"y\"", 3, "log.filters.A: set again (first on line 2)"),
            ("[log]\nfilters = { A = \"x\", A = \"y\" }", 2, "log.filters.A: set again (first on line 2)"),
            ("[limits]\n[access]\n[limits]", 3, "limits: [limits] again (first on line 1); TOML takes each table once"),
            ("[log.filters]\n[log]\n[log]", 3, "log: [log] again (first on line 2)"),
            ("limits = 1\n[limits]", 2, "limits: set to a value on line 1, so it cannot be a table too"),
            (
                "limits = 1\nlimits.watcher_queue = 2", 2,
                "limits: set to a value on line 1, so it cannot be a table too"
            ),
            (
                "[limits]\nwatcher_queue = 1\n[limits.watcher_queue]", 3,
                "limits.watcher_queue: set to a value on line 2"
            ),
            ("log.level = \"info\"\n[log]", 2, "log: already a table, made by dotted keys on line 1"),
            (
                "[log]\nfilters.A = \"x\"\n[log.filters]", 3,
                "log.filters: already a table, made by dotted keys on line 2"
            ),
            (
                "[log.filters]\nA = \"x\"\n[log]\nfilters.B = \"y\"", 4,
                "log.filters: a table with a [header] (line 1); TOML lets no dotted key add to it"
            ),
            (
                "log = { level = \"info\" }\n[log.filters]", 2,
                "log: an inline table (line 1), complete as written: TOML lets no header add to it"
            ),
            (
                "log = { level = \"info\" }\nlog.filters.A = \"x\"", 2,
                "log: an inline table (line 1), complete as written: TOML lets no key add to it"
            ),
            ("log = { level = \"info\" }\nlog = {}", 2, "log: set again (first on line 1)"),
            // Strings: control characters, escapes, Unicode.
            (
                "devices = [\"Kit\u{1B}chen\"]", 1,
                "not valid TOML: a control character (U+001B) in a string; write it as an escape (\\u001B)"
            ),
            ("socket = \"a\u{0}b\"", 1, "a control character (U+0000) in a string"),
            ("socket = \"a\u{7F}b\"", 1, "a control character (U+007F) in a string"),
            ("x = 1\nsocket = 'a\u{1F}b'", 2, "not valid TOML: a control character (U+001F) in a string"),
            ("socket = \"a\rb\"", 1, "a control character (U+000D) in a string"),
            ("x = 1 # a\u{7}bell", 1, "not valid TOML: a control character (U+0007) in a comment"),
            ("# a\rb\nx = 1", 1, "a control character (U+000D) in a comment"),
            ("socket = \"\\x41\"", 1, "not valid TOML: '\\' and 'x' are not an escape TOML knows"),
            ("socket = \"\\e\"", 1, "'\\' and 'e' are not an escape TOML knows"),
            ("socket = \"\\ \"", 1, "'\\' and ' ' are not an escape TOML knows"),
            ("socket = \"a\\\nb\"", 1, "'\\' and the end of the line are not an escape TOML knows"),
            ("socket = \"\\u12\"", 1, "'\\u' takes exactly 4 hex digits"),
            ("socket = \"\\U0001F60\"", 1, "'\\U' takes exactly 8 hex digits"),
            (
                "socket = \"\\uD800\"", 1,
                "'\\uD800' is not a Unicode character (surrogates D800 to DFFF and values past 10FFFF are not)"
            ),
            ("socket = \"\\uDFFF\"", 1, "'\\uDFFF' is not a Unicode character"),
            ("socket = \"\\uD83D\\uDE00\"", 1, "'\\uD83D' is not a Unicode character"),
            ("socket = \"\\U0000DC00\"", 1, "'\\U0000DC00' is not a Unicode character"),
            ("socket = \"\\U00110000\"", 1, "'\\U00110000' is not a Unicode character"),
            ("socket = \"\\UFFFFFFFF\"", 1, "'\\UFFFFFFFF' is not a Unicode character"),
            ("socket = \"/x\n", 1, "not valid TOML: the string has no closing quote (\") on its line"),
            ("socket = '/x", 1, "not valid TOML: the string has no closing quote (') on its line"),
            ("socket = \"/x\\", 1, "the string has no closing quote"),
            // The rest of TOML's grammar.
            ("devices = [\n\"a\"\n\"b\"]", 3, "not valid TOML: '\"' in an array, where ',' or ']' should be"),
            ("devices = [\"a\",,]", 1, "not valid TOML: a value is missing before ','"),
            ("devices = [,]", 1, "a value is missing before ','"),
            ("devices = [\n\"a\",\n", 3, "not valid TOML: the array opened on line 1 has no ']'"),
            (
                "[log]\nfilters = { A = \"x\",\nB = \"y\" }", 2,
                "not valid TOML: an inline table must close ('}') on the line it opens"
            ),
            (
                "[log]\nfilters = { A = \"x\", }", 2,
                "not valid TOML: TOML allows no ',' after an inline table's last value"
            ),
            ("[log]\nfilters = { A = \"x\" B = \"y\" }", 2, "'B' in an inline table, where ',' or '}' should be"),
            ("[log]\nfilters = { , }", 2, "a key is missing in the inline table before ','"),
            (
                "socket = \"/x\" \"/y\"", 1,
                "not valid TOML: '\"' after the value; each key = value and each [table] goes on a line of its own"
            ),
            ("[limits] x = 1", 1, "'x' after the table header"),
            ("[limits]]", 1, "']' after the table header"),
            ("[limits", 1, "not valid TOML: the table header [limits has the end of the file where its ']' should be"),
            ("[limits.]", 1, "not valid TOML: a key ends with '.' before ']'"),
            ("limits. = 3", 1, "a key ends with '.' before '='"),
            ("socket\n= \"/x\"", 1, "not valid TOML: the key socket is followed by the end of the line, not '='"),
            ("socket \"/x\"", 1, "the key socket is followed by '\"', not '='"),
            ("socket =\n\"/x\"", 1, "not valid TOML: the value is missing after '='"),
            ("socket = # none", 1, "the value is missing after '='"),
            ("= \"/x\"", 1, "not valid TOML: a line holds a key = value, a [table] or a comment, not '='"),
            ("\n\n}", 3, "a line holds a key = value, a [table] or a comment, not '}'"),
            (
                "x = 1\rdiscovery = true", 1,
                "not valid TOML: a carriage return (U+000D) that is not followed by a line feed"
            ),
            ("x = 1\n\r", 2, "a carriage return (U+000D) that is not followed by a line feed"),
            ("x = 1\n\u{0}", 2, "a line holds a key = value, a [table] or a comment, not U+0000"),
            ("\nsöcket = \"/x\"", 2, "not valid TOML: the key s is followed by 'ö' (U+00F6), not '='"),
            (
                "\nöffnen = 1", 2,
                "not valid TOML: 'ö' (U+00F6) cannot be in a bare key (A-Z a-z 0-9 _ -); put the key in quotes"
            ),
            ("level = debug", 1, "not valid TOML: 'debug' is not a value; a string needs quotes: \"debug\""),
            ("discovery = True", 1, "not valid TOML: 'True' is not a value; TOML writes true and false in lower case"),
            (
                "socket = /run/castd.sock", 1,
                "not valid TOML: '/' cannot start a value; castd's settings take \"strings\", true or false, whole numbers and [arrays]"
            ),
            // Bounds.
            (
                "a.b.c.d.e.f.g.h.i.j = 1", 1,
                "tables nest more than 8 deep here; no castd setting is in a table more than 2 deep"
            ),
            ("[a.b.c.d.e]\nf.g.h.i.j = 1", 2, "tables nest more than 8 deep"),
            ("[a.b.c.d.e]\nf = { g.h.i.j = 1 }", 2, "tables nest more than 8 deep"),
        ] as [(String, Int, String)])
    func aConstructIsRefusedWithItsLine(_ text: String, _ line: Int, _ problem: String) {
        let error = #expect(throws: ConfigError.self) { try ConfigFile.parse(text, file: "c.toml") }
        #expect(error?.line == line, "\(text.debugDescription): \(String(describing: error))")
        let message = error.map { ($0.key.map { "\($0): " } ?? "") + $0.problem } ?? ""
        #expect(message.hasPrefix(problem) || message.contains(problem), "\(text.debugDescription): \(message)")
    }

    @Test func anArrayHoldsAtMostAThousandValues() throws {
        let thousand = "devices = [" + Array(repeating: "\"a\"", count: 1000).joined(separator: ",\n") + "]\n"
        #expect(
            try ConfigFile.parse(thousand, file: "c.toml")[.devices] == .strings(Array(repeating: "a", count: 1000)))
        let more = "devices = [" + Array(repeating: "\"a\"", count: 1001).joined(separator: ",\n") + "]\n"
        let error = #expect(throws: ConfigError.self) { try ConfigFile.parse(more, file: "c.toml") }
        #expect(error?.line == 1001)
        #expect(
            error?.problem == "an array of more than 1000 values (opened on line 1); no castd setting takes so many")
    }

    /// Deep nesting is refused where it starts, without recursion: 100,000 brackets or dots.
    @Test func deepNestingIsRefusedAtOnce() {
        for text in [
            "devices = " + String(repeating: "[", count: 100_000), String(repeating: "[", count: 100_000),
            "x = " + String(repeating: "{ a = ", count: 100_000),
            Array(repeating: "a", count: 100_000).joined(separator: ".") + " = 1",
        ] {
            let error = #expect(throws: ConfigError.self) { try ConfigFile.parse(text, file: "c.toml") }
            #expect(error?.line == 1, "\(String(describing: error))")
        }
    }

    @Test func bytesThatAreNotUTF8AreRefusedWithTheirLine() {
        let cases: [(bytes: [UInt8], line: Int)] = [
            ([0xFF], 1),
            (Array("socket = \"/x\"\n# caf".utf8) + [0xE9] + Array("\n".utf8), 2),  // Latin-1 é in a comment
            (Array("x = 1\n\nsocket = \"".utf8) + [0xC0, 0xAF] + Array("\"".utf8), 3),  // overlong '/'
            (Array("socket = \"".utf8) + [0xED, 0xA0, 0x80] + Array("\"".utf8), 1),  // an encoded surrogate
            (Array("socket = \"".utf8) + [0xF4, 0x90, 0x80, 0x80] + Array("\"".utf8), 1),  // past U+10FFFF
            (Array("socket = \"".utf8) + [0xE2, 0x82], 1),  // cut short
            (Array("\n\n\nsocket = \"".utf8) + [0x80] + Array("\"".utf8), 4),  // a continuation byte alone
        ]
        for (bytes, line) in cases {
            let error = #expect(throws: ConfigError.self) { try ConfigFile.parse(bytes: bytes, file: "c.toml") }
            #expect(error?.description == "c.toml:\(line): not UTF-8 text", "\(bytes): \(String(describing: error))")
        }
    }

    @Test func aFileThatIsNotUTF8IsRefusedWithItsLine() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("castd-\(UUID().uuidString).toml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(Array("[log]\nlevel = \"".utf8) + [0xFE] + Array("\"\n".utf8)).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: ConfigError.self) { try ConfigFile.load(path: path) }
        #expect(error?.description == "\(path):2: not UTF-8 text")
    }

    @Test func moreThanAMebibyteIsRefused() {
        let text = "# " + String(repeating: "x", count: ConfigFile.maximumFileSize)
        let error = #expect(throws: ConfigError.self) { try ConfigFile.parse(text, file: "c.toml") }
        #expect(error?.description == "c.toml: \(text.utf8.count) bytes, over the 1048576-byte limit")
    }

    /// Keys in messages are written as TOML would have them.
    @Test func keysInMessagesAreQuotedWhenTheyMustBe() {
        let error = #expect(throws: ConfigError.self) {
            try ConfigFile.parse("[log.filters]\n\"a\\\"b\\u0007\" = 1\n", file: "c.toml")
        }
        #expect(error?.description == "c.toml:2: log.filters.\"a\\\"b\\u0007\": must be a string, not an integer (1)")
    }
}
