import ArgumentParser
import CastClient
import Foundation

struct LogLevelCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "log-level",
        abstract: "Show or change castd's log filter: which subsystems log what.",
        // By hand: --device does not apply (castd has one log filter for every device).
        usage: """
            castc log-level [<level> [<pattern> ...]] [--unset <pattern> ...]
                            [--reset] [--socket <path>] [--json]
            """,
        discussion: """
            Without arguments, shows castd's log filter: the minimum level, each pattern with its \
            level, and castd's subsystems (Castd, RPC, Discovery, CastDevice, CastChannel, \
            CastAuth, CastSession, CastMedia, State, …). castd keeps and writes a record when its \
            level is at least its subsystem's level: that of the last pattern matching the \
            subsystem's name, else the minimum.

            LEVEL alone sets the minimum. LEVEL PATTERN... sets the level of the subsystems each \
            PATTERN matches; a pattern set again is replaced and moves last. Patterns are globs \
            (*, ?, [...]; case-sensitive): quote them for the shell. --unset PATTERN removes a \
            pattern and --reset goes back to the filter castd started with (its configuration \
            and flags); both apply before LEVEL. Changes last until castd restarts. castc prints \
            the filter that results, and notes a pattern that matches no subsystem.

            Levels: verbose (or trace), debug, info, notice, warning, error, critical (or \
            assert), and none, which silences.

            Examples:
              castc log-level
              castc log-level verbose 'CastChannel*'      # every message sent and received
              castc log-level debug 'Cast*Session' Discovery
              castc log-level none Discovery               # silence mDNS
              castc log-level notice                       # the minimum for the rest
              castc log-level --unset 'CastChannel*'
              castc log-level --reset
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(
        help: ArgumentHelp("The level: the minimum, or that of the subsystems PATTERN matches.", valueName: "level"))
    var level: String?

    @Argument(help: ArgumentHelp("Subsystem names or globs, e.g. 'CastChannel*'.", valueName: "pattern"))
    var patterns: [String] = []

    @Option(help: ArgumentHelp("Remove this pattern from the filter. Repeatable.", valueName: "pattern"))
    var unset: [String] = []

    @Flag(help: "Go back to the filter castd started with, before any other change.")
    var reset = false

    func validate() throws {
        if options.device != nil {
            throw ValidationError("--device does not apply: castd has one log filter for every device")
        }
        if let level {
            do { _ = try CastdLogLevel(parsing: level) } catch { throw ValidationError(error.message) }
        }
        for pattern in patterns + unset {
            if let problem = CastdLogPattern.problem(pattern) { throw ValidationError(problem) }
        }
        if let both = unset.first(where: patterns.contains) {
            throw ValidationError("'\(both)' is both set and unset; say one")
        }
    }

    /// The SetLogFilter requests castc sends, in order: the reset rides on the first; empty when
    /// castc only shows the filter.
    var requests: [Castd_V1_SetLogFilterRequest] {
        var requests: [Castd_V1_SetLogFilterRequest] = []
        for pattern in unset {
            var request = Castd_V1_SetLogFilterRequest()
            request.pattern = pattern
            requests.append(request)
        }
        if let level, let parsed = try? CastdLogLevel(parsing: level) {
            for pattern in patterns.isEmpty ? [""] : patterns {
                var request = Castd_V1_SetLogFilterRequest()
                request.level = parsed
                request.pattern = pattern
                requests.append(request)
            }
        }
        if reset {
            if requests.isEmpty { requests.append(Castd_V1_SetLogFilterRequest()) }
            requests[0].reset = true
        }
        return requests
    }

    func run() async throws {
        let requests = requests
        let filter = try await options.withClient { client in
            guard !requests.isEmpty else { return try await client.logFilter() }
            var filter = CastdLogFilter()
            for request in requests {
                filter = try await client.unary(CastdMethods.setLogFilter, request)
            }
            return filter
        }
        for pattern in LogFormatter.unmatched(patterns, known: filter.knownSubsystems) {
            Terminal.writeError("castc: note: '\(pattern)' matches none of castd's subsystems (yet)\n")
        }
        try options.print(filter) { LogFormatter.report(filter) }
    }
}

struct LogsCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Show castd's recent log records; -f follows new ones.",
        usage: GlobalOptions.usage("logs", "[-n <n>] [-f]"),
        discussion: """
            Prints castd's recent log records, oldest first (the last 100, or -n N; castd keeps \
            1000), one line each: the time, level, subsystem, message and fields. -f keeps \
            printing records as castd logs them, until interrupted (Ctrl-C, which exits 0); if \
            castd goes away, castc exits 14 (UNAVAILABLE). --json prints each castd.v1.LogRecord \
            as one JSON object per line.

            castd keeps only the records its log filter lets through: to see more of a \
            subsystem, lower its level first (castc log-level). --device keeps the records about \
            one device (its device.id), among the last N. If castc reads more slowly than castd \
            logs, it says on stderr how many records it skipped.

            Examples:
              castc logs
              castc logs -n 20
              castc logs -f
              castc logs -f --device "Living Room TV"
              castc log-level verbose 'CastChannel*'; castc logs -f -n 0
              castc logs --json | jq -r 'select(.subsystem == "CastSession") | .message'
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(
        name: [.short, .customLong("lines")],
        parsing: .unconditional,
        help: ArgumentHelp("How many recent records to print first.", valueName: "n"))
    var n = 100

    @Flag(name: .shortAndLong, help: "Keep printing new records until interrupted.")
    var follow = false

    func validate() throws {
        if n < 0 { throw ValidationError("-n \(n): give 0 or more records") }
    }

    var request: Castd_V1_StreamLogsRequest {
        var request = Castd_V1_StreamLogsRequest()
        request.recent = UInt32(clamping: n)
        request.follow = follow
        return request
    }

    func run() async throws {
        let json = options.json
        let request = request
        let selector = options.device
        try await options.withClient { client in
            // --device: the ids of the devices it names, as castd knows them now.
            var ids: Set<String>?
            if let selector {
                ids = Set(
                    try DeviceFilter.devices(try await client.listDevices(all: true), matching: selector).map(\.id))
            }
            let deviceIDs = ids
            try await Interrupt.orUntilInterrupted {
                let records = client.logs(recent: Int(request.recent), follow: request.follow)
                try await Self.print(records, json: json, deviceIDs: deviceIDs)
            }
        }
    }

    /// Prints records (with `deviceIDs`, only those about these devices) until the stream ends or
    /// stdout is gone; a gap is noted on stderr first.
    static func print<Records: AsyncSequence>(
        _ records: Records,
        json: Bool,
        deviceIDs: Set<String>? = nil,
        timeZone: TimeZone = .current,
        output: (String) -> Bool = Terminal.streamLine,
        notice: (String) -> Void = { Terminal.writeError($0 + "\n") }
    ) async throws where Records.Element == CastdLogRecord {
        for try await record in records {
            if let deviceIDs, !deviceIDs.contains(record.fields["device.id"] ?? "") { continue }
            if !json, let gap = LogFormatter.gap(record) { notice(gap) }
            let line = json ? try JSONOutput.string(record) : LogFormatter.line(record, timeZone: timeZone)
            guard output(line) else { return }
        }
    }
}
