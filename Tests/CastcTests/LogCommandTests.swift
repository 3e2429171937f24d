import CastTestSupport
import CastdSupport
import ArgumentParser
import CastClient
import Foundation
import Testing

@testable import castc

@Suite(.tags(.cpuBound)) struct LogLevelCommandTests {
    @Test func withoutArgumentsItOnlyAsks() throws {
        let command = try parse(["log-level"], as: LogLevelCommand.self)
        #expect(command.requests.isEmpty)
    }

    @Test func aLevelAloneSetsTheMinimum() throws {
        let requests = try parse(["log-level", "NOTICE"], as: LogLevelCommand.self).requests
        #expect(requests.count == 1)
        #expect(requests[0].level == .notice && requests[0].pattern.isEmpty && !requests[0].reset)
        #expect(try parse(["log-level", "trace"], as: LogLevelCommand.self).requests[0].level == .verbose)
        #expect(try parse(["log-level", "assert"], as: LogLevelCommand.self).requests[0].level == .critical)
    }

    @Test func aLevelWithPatternsSetsEachPattern() throws {
        let requests = try parse(["log-level", "verbose", "CastChannel*", "Cast*Session"], as: LogLevelCommand.self)
            .requests
        #expect(requests.map(\.pattern) == ["CastChannel*", "Cast*Session"])
        #expect(requests.allSatisfy { $0.level == .verbose && !$0.reset })
    }

    @Test func unsetAndResetComeFirst() throws {
        let command = try parse(
            ["log-level", "debug", "Discovery*", "--unset", "CastChannel*", "--reset", "--unset", "RPC"],
            as: LogLevelCommand.self)
        let requests = command.requests
        #expect(requests.map(\.pattern) == ["CastChannel*", "RPC", "Discovery*"])
        #expect(requests.map(\.level) == [.unspecified, .unspecified, .debug])
        #expect(requests.map(\.reset) == [true, false, false])
        let reset = try parse(["log-level", "--reset"], as: LogLevelCommand.self).requests
        #expect(reset.count == 1 && reset[0].reset && reset[0].level == .unspecified && reset[0].pattern.isEmpty)
    }

    @Test func badLevelsAndPatternsAreUsageErrors() {
        #expect(usageError(["log-level", "loud"]).contains("unknown log level 'loud'"))
        #expect(usageError(["log-level", "loud"]).contains("verbose, debug, info"))
        #expect(usageError(["log-level", "debug", "Cast Channel"]).contains("white space"))
        #expect(usageError(["log-level", "debug", "Cast[AB"]).contains("without its ']'"))
        #expect(usageError(["log-level", "--unset", ""]).contains("cannot be empty"))
        #expect(usageError(["log-level", "debug", "RPC", "--unset", "RPC"]).contains("both set and unset"))
        #expect(usageError(["log-level", "--device", "TV"]).contains("--device does not apply"))
    }
}

@Suite(.tags(.cpuBound)) struct LogsCommandTests {
    @Test func recentAndFollow() throws {
        var request = try parse(["logs"], as: LogsCommand.self).request
        #expect(request.recent == 100 && !request.follow)
        request = try parse(["logs", "-n", "5", "-f"], as: LogsCommand.self).request
        #expect(request.recent == 5 && request.follow)
        request = try parse(["logs", "--lines", "0", "--follow"], as: LogsCommand.self).request
        #expect(request.recent == 0 && request.follow)
        #expect(usageError(["logs", "--lines=-1"]).contains("-n -1: give 0 or more"))
    }

    static func record(
        _ sequence: UInt64, _ level: CastdLogLevel, _ subsystem: String, _ message: String,
        fields: [String: String] = [:],
        dropped: UInt64 = 0
    ) -> CastdLogRecord {
        var record = CastdLogRecord()
        record.sequence = sequence
        record.timeMs = 1_795_860_000_123 + Int64(sequence)
        record.level = level
        record.subsystem = subsystem
        record.message = message
        record.fields = fields
        record.droppedBefore = dropped
        return record
    }

    @Test func humanLines() {
        let utc = TimeZone(identifier: "UTC")!
        let line = LogFormatter.line(
            Self.record(0, .verbose, "CastChannel", "sent", fields: ["cast.type": "LAUNCH", "device.id": "tv1"]),
            timeZone: utc)
        #expect(line == "10:00:00.123 verbose  CastChannel  sent  cast.type=LAUNCH device.id=tv1")
        #expect(
            LogFormatter.line(Self.record(2, .info, "RPC", "listening"), timeZone: utc)
                == "10:00:00.125 info     RPC          listening")
        #expect(
            LogFormatter.line(
                Self.record(1, .critical, "CastSession", "two\nlines", fields: ["reason": "it ended"]), timeZone: utc)
                == #"10:00:00.124 critical CastSession  two\nlines  reason="it ended""#)
    }

    @Test func printsEachRecordAndNotesGaps() async throws {
        let records = [
            Self.record(1, .info, "RPC", "one"), Self.record(9, .notice, "Daemon", "after a gap", dropped: 7),
        ]
        let lines = Locked<[String]>([])
        let notices = Locked<[String]>([])
        try await LogsCommand.print(
            AsyncStream { continuation in
                for record in records { continuation.yield(record) }
                continuation.finish()
            }, json: false, timeZone: TimeZone(identifier: "UTC")!,
            output: { line in
                lines.withLock { $0.append(line) }; return true
            },
            notice: { line in notices.withLock { $0.append(line) } })
        #expect(lines.withLock { $0 }.map { $0.split(separator: " ").last.map(String.init) ?? "" } == ["one", "gap"])
        #expect(notices.withLock { $0 } == ["castc: 7 log records skipped: castc read more slowly than castd logged"])

        lines.withLock { $0.removeAll() }
        try await LogsCommand.print(
            AsyncStream { continuation in
                for record in records { continuation.yield(record) }
                continuation.finish()
            }, json: true,
            output: { line in
                lines.withLock { $0.append(line) }; return true
            })
        let parsed = try lines.withLock { $0 }.map { try CastdLogRecord(jsonString: $0) }
        #expect(parsed == records)
        #expect(lines.withLock { $0 }[1].contains(#""droppedBefore":"7""#))
    }

    @Test func deviceKeepsThatDevicesRecords() async throws {
        let lines = Locked<[String]>([])
        try await LogsCommand.print(
            AsyncStream { continuation in
                continuation.yield(Self.record(1, .info, "CastDevice", "connected", fields: ["device.id": "tv1"]))
                continuation.yield(Self.record(2, .info, "CastDevice", "connected", fields: ["device.id": "tv2"]))
                continuation.yield(Self.record(3, .info, "RPC", "listening"))
                continuation.yield(Self.record(4, .verbose, "CastChannel", "sent", fields: ["device.id": "tv1"]))
                continuation.finish()
            }, json: true, deviceIDs: ["tv1"],
            output: { line in
                lines.withLock { $0.append(line) }; return true
            })
        #expect(try lines.withLock { $0 }.map { try CastdLogRecord(jsonString: $0).sequence } == [1, 4])
    }

    @Test func stopsWhenStdoutIsGone() async throws {
        let printed = Locked(0)
        try await LogsCommand.print(
            AsyncStream { continuation in
                for i in 1...5 { continuation.yield(Self.record(UInt64(i), .info, "RPC", "r\(i)")) }
                continuation.finish()
            }, json: false,
            output: { _ in
                printed.withLock {
                    $0 += 1; return $0 < 2
                }
            })
        #expect(printed.withLock { $0 } == 2)
    }

    @Test func theFilterReport() {
        var filter = CastdLogFilter()
        filter.minimumLevel = .info
        var channel = Castd_V1_SubsystemLevel()
        channel.pattern = "CastChannel*"
        channel.level = .verbose
        var discovery = Castd_V1_SubsystemLevel()
        discovery.pattern = "Discovery"
        discovery.level = .none
        filter.subsystems = [channel, discovery]
        filter.knownSubsystems = [
            "Daemon", "Config", "RPC", "Access", "Discovery", "CastDevice", "CastChannel", "CastAuth", "CastSession",
            "CastMedia", "State",
        ]
        let report = LogFormatter.report(filter)
        #expect(
            report == """
                minimum       info
                CastChannel*  verbose
                Discovery     none
                (the last pattern that matches a subsystem decides its level)

                Subsystems: Daemon, Config, RPC, Access, Discovery, CastDevice, CastChannel,
                  CastAuth, CastSession, CastMedia, State
                """)
        #expect(
            LogFormatter.unmatched(["Cast*Session", "Nothing*", "RPC"], known: filter.knownSubsystems) == ["Nothing*"])
    }
}
