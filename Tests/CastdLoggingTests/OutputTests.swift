import CastTestSupport
import Foundation
import Logging
import Testing

@testable import CastdLogging

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.tags(.cpuBound)) struct JournalFieldTests {
    @Test func metadataKeysBecomeJournalFieldNames() {
        let cases: [(String, String)] = [
            ("device.id", "DEVICE_ID"), ("cast.namespace", "CAST_NAMESPACE"), ("rpc.method", "RPC_METHOD"),
            ("rpc.code", "RPC_CODE"), ("auth.root", "AUTH_ROOT"), ("Device-Name", "DEVICE_NAME"),
            ("mdns.service", "MDNS_SERVICE"), ("silent.ms", "SILENT_MS"), ("x", "X"), ("ünïcode", "F__N_CODE"),
            // A leading digit or underscore (journald's trusted fields), or nothing: F_.
            ("1st", "F_1ST"), ("_private", "F__PRIVATE"), (".hidden", "F__HIDDEN"), ("", "F_"),
            // Fields castd or journald give a meaning are not overridden by metadata.
            ("message", "F_MESSAGE"), ("priority", "F_PRIORITY"), ("syslog.identifier", "F_SYSLOG_IDENTIFIER"),
            ("code.file", "F_CODE_FILE"), ("errno", "F_ERRNO"), ("castd.subsystem", "F_CASTD_SUBSYSTEM"),
            ("error", "ERROR"),
        ]
        for (key, name) in cases {
            #expect(JournalFields.name(forMetadataKey: key) == name, "\(key)")
        }
        let long = JournalFields.name(forMetadataKey: String(repeating: "a.", count: 50))
        #expect(long.count == 64 && long.hasPrefix("A_A_"))
        let longDigit = JournalFields.name(forMetadataKey: "9" + String(repeating: "b", count: 80))
        #expect(longDigit.count == 64 && longDigit.hasPrefix("F_9B"))
    }

    @Test func anEntrysFields() {
        var entry = LogEntry(
            timeMilliseconds: 1_800_000_000_123, level: .warning, subsystem: "CastChannel",
            message: "device silent;\nclosing link",
            fields: [
                "device.id": "abc123", "cast.namespace": "urn:x-cast:com.google.cast.tp.heartbeat", "message": "x",
            ],
            file: "CastChannel/CastMessageDecoder.swift", function: "tick(context:)", line: 90)
        entry.sequence = 7
        let fields = JournalFields.fields(for: entry)
        #expect(
            fields.map(\.name) == [
                "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CASTD_SUBSYSTEM", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
                "CAST_NAMESPACE", "DEVICE_ID", "F_MESSAGE",
            ])
        #expect(
            fields.map(\.value) == [
                "device silent;\nclosing link", "4", "castd", "CastChannel", "CastChannel/CastMessageDecoder.swift",
                "90",
                "tick(context:)", "urn:x-cast:com.google.cast.tp.heartbeat", "abc123", "x",
            ])
        for level in LogLevel.allCases.dropLast() {
            entry.level = level
            let priority = JournalFields.fields(for: entry, identifier: "castd-test").first { $0.name == "PRIORITY" }?
                .value
            #expect(priority == String(level.syslogPriority))
        }
        #expect(
            JournalFields.fields(for: entry, identifier: "castd-test").contains {
                $0 == ("SYSLOG_IDENTIFIER", "castd-test")
            })
    }

    @Test func theJournalIsOnlyChosenWhenItsSocketExists() throws {
        var info = stat()
        fstat(2, &info)
        let stderr = ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"]
        #expect(
            LogOutput.automatic.resolved(environment: stderr, journalSocket: "/nonexistent/socket") == .standardError)
        #expect(LogOutput.automatic.resolved(environment: stderr, journalSocket: "/dev/null") == .journal)
    }
}

@Suite(.tags(.cpuBound)) struct JournalStreamTests {
    /// `DEVICE:INODE` of `fd`, as systemd writes JOURNAL_STREAM.
    static func journalStream(of fd: Int32) -> String {
        var info = stat()
        fstat(fd, &info)
        return "\(info.st_dev):\(info.st_ino)"
    }

    @Test func onlyTheStreamNamedByJournalStreamIsTheJournal() throws {
        try withTemporaryFile { fd, other in
            let value = Self.journalStream(of: fd)
            #expect(JournalStream.isConnectedToJournal(fd: fd, environment: ["JOURNAL_STREAM": value]))
            // A child that inherited the variable but writes elsewhere: not the journal.
            #expect(!JournalStream.isConnectedToJournal(fd: other, environment: ["JOURNAL_STREAM": value]))
            #expect(!JournalStream.isConnectedToJournal(fd: fd, environment: [:]))
            for bad in ["", "1", "1:", ":1", "a:b", "1:2:3", "-1:5", value + " "] {
                #expect(!JournalStream.isConnectedToJournal(fd: fd, environment: ["JOURNAL_STREAM": bad]), "\(bad)")
            }
        }
    }

    @Test func thisProcesssStderrAgainstJournalStream() throws {
        let mine = Self.journalStream(of: 2)
        #expect(JournalStream.isStderrConnectedToJournal(environment: ["JOURNAL_STREAM": mine]))
        try withTemporaryFile { fd, _ in
            let elsewhere = Self.journalStream(of: fd)
            #expect(!JournalStream.isStderrConnectedToJournal(environment: ["JOURNAL_STREAM": elsewhere]))
            #expect(LogOutput.automatic.resolved(environment: ["JOURNAL_STREAM": elsewhere]) == .standardError)
        }
        #expect(
            LogOutput.automatic.resolved(environment: ["JOURNAL_STREAM": mine], journalSocket: "/dev/null") == .journal)
        #expect(LogOutput.automatic.resolved(environment: [:]) == .standardError)
        #expect(LogOutput.discard.resolved(environment: ["JOURNAL_STREAM": mine]) == .discard)
    }

    private func withTemporaryFile(_ body: (Int32, Int32) throws -> Void) throws {
        let path = NSTemporaryDirectory() + "castd-journal-stream-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(path, O_CREAT | O_RDWR, 0o600)
        let other = open(path + ".other", O_CREAT | O_RDWR, 0o600)
        defer {
            close(fd)
            close(other)
            unlink(path)
            unlink(path + ".other")
        }
        try #require(fd >= 0 && other >= 0)
        try body(fd, other)
    }
}

@Suite(.tags(.cpuBound)) struct StandardErrorLineTests {
    @Test func oneLinePerRecord() {
        let entry = LogEntry(
            timeMilliseconds: 1_795_860_000_123, level: .info, subsystem: "CastChannel", message: "sent",
            fields: [
                "device.id": "abc", "cast.type": "LAUNCH", "reason": "the device closed the connection", "empty": "",
            ])
        #expect(
            StandardErrorLine.format(entry)
                == #"2026-11-28T10:00:00.123Z info CastChannel: sent cast.type=LAUNCH device.id=abc empty="" reason="the device closed the connection""#
        )
        let tricky = LogEntry(
            timeMilliseconds: 5, level: .error, subsystem: "RPC", message: "two\nlines\tand \u{1}",
            fields: ["quote": #"say "hi""#, "path": #"C:\x"#, "eq": "a=b"])
        #expect(
            StandardErrorLine.format(tricky)
                == #"1970-01-01T00:00:00.005Z error RPC: two\nlines\tand \u{1} eq="a=b" path="C:\\x" quote="say \"hi\"""#
        )
        #expect(StandardErrorLine.timestamp(-1) == "1969-12-31T23:59:59.999Z")
    }
}

@Suite(.tags(.cpuBound)) struct LogHandlerTests {
    func logs(_ filter: LogFilter = LogFilter(minimum: .info)) -> CastdLogs {
        CastdLogs(filter: filter, output: .discard)
    }

    @Test func recordsThatPassTheFilterAreKept() throws {
        let logs = logs(try LogFilter(level: "info", filters: ["CastChannel*=verbose", "Discovery=none"]))
        let channel = logs.logger("CastChannel")
        let discovery = logs.logger("Discovery")
        let rpc = logs.logger("RPC")
        #expect(channel.logLevel == .trace && rpc.logLevel == .info)
        channel.trace("sent", metadata: ["cast.type": "LAUNCH"])
        rpc.debug("call ok")  // below info: dropped
        rpc.info("listening")
        discovery.critical("silenced, even critical")
        discovery.info("silenced")
        let kept = logs.buffer.recent(10)
        #expect(kept.map(\.message) == ["sent", "listening"])
        #expect(kept.map(\.subsystem) == ["CastChannel", "RPC"])
        #expect(kept.map(\.level) == [.verbose, .info])
        #expect(kept.map(\.sequence) == [1, 2])
        #expect(kept[0].fields == ["cast.type": "LAUNCH"])
        #expect(kept[0].file.hasSuffix("OutputTests.swift") && kept[0].line > 0 && !kept[0].function.isEmpty)
    }

    @Test func loggersFollowTheFilterAsItChanges() throws {
        let logs = logs()
        let channel = logs.logger("CastChannel")
        channel.trace("before")
        try logs.store.update { try $0.set(.verbose, for: "Cast*") }
        channel.trace("after")
        logs.store.reset()
        channel.trace("after reset")
        #expect(logs.buffer.recent(10).map(\.message) == ["after"])
    }

    @Test func theSubsystemKeySwitchesSubsystemsAndOtherMetadataIsKept() throws {
        let logs = logs(try LogFilter(level: "warning", filters: ["CastAuth=debug"]))
        var logger = logs.logger("CastDevice")
        logger[metadataKey: "device.id"] = "tv1"
        logger.debug("dropped as CastDevice")
        var auth = logger
        auth[metadataKey: "subsystem"] = "CastAuth"
        #expect(auth[metadataKey: "subsystem"] == "CastAuth" && logger[metadataKey: "subsystem"] == "CastDevice")
        auth.debug("device authenticated", metadata: ["auth.root": "Cast Root CA", "device.id": "overridden"])
        let kept = logs.buffer.recent(10)
        #expect(kept.map(\.subsystem) == ["CastAuth"])
        #expect(kept.first?.fields == ["device.id": "overridden", "auth.root": "Cast Root CA"])
        // Setting the whole metadata may name the subsystem too; it is never a field.
        var handler = CastdLogHandler(subsystem: "RPC", logs: logs)
        handler.metadata = ["subsystem": "State", "rpc.call": "3"]
        #expect(handler.subsystem == "State" && handler.metadata == ["rpc.call": "3"])
    }

    @Test func settingTheLogLevelIsIgnored() {
        let logs = logs()
        var logger = logs.logger("RPC")
        logger.logLevel = .trace
        #expect(logger.logLevel == .info, "the filter decides, not the component")
        logger.debug("dropped")
        #expect(logs.buffer.recent(10).isEmpty)
    }

    @Test func metadataProvidersAndErrorsBecomeFields() {
        struct Failure: Error, CustomStringConvertible { var description: String { "it broke" } }
        let logs = logs()
        let provider = Logger.MetadataProvider { ["trace.id": "t-1"] }
        let logger = Logger(label: "RPC") { CastdLogHandler(subsystem: $0, logs: logs, metadataProvider: provider) }
        logger.error("failed", error: Failure(), metadata: ["rpc.method": "Load"])
        #expect(logs.buffer.recent(1).first?.fields == ["trace.id": "t-1", "rpc.method": "Load", "error": "it broke"])
    }

    @Test func knownSubsystemsAreCastdsThenOthersThatLogged() {
        let logs = logs()
        logs.logger("Zeta").info("a subsystem castd does not name")
        logs.logger("CastChannel").info("one it does")
        #expect(logs.knownSubsystems == CastdSubsystem.all + ["Zeta"])
        #expect(CastdSubsystem.all.count == Set(CastdSubsystem.all).count)
        for name in [
            "Daemon", "Config", "RPC", "Access", "Discovery", "CastDevice", "CastChannel", "CastAuth", "CastSession",
            "CastMedia", "State",
        ] {
            #expect(CastdSubsystem.all.contains(name), "\(name)")
        }
    }
}
