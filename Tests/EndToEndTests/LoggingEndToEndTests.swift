import CastdSupport
import CastTestSupport
import CastdAPI
import Foundation
import SwiftProtobuf
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// castd's logging, with the real programs: castd's flags, `castc log-level` and `castc logs`,
/// stderr, and the journal's native protocol. A cast-emulator is given to castd with --device
/// (no mDNS needed).
@Suite(.serialized)
struct LoggingEndToEndTests {
    struct Setup {
        var directory: String
        var deviceName: String
        var port: Int
        var launch: (String, [String], [String: String]) throws -> ChildProcess
        var socket: String { directory + "/castd.sock" }
        var environment: [String: String] { ["CASTD_SOCKET": socket] }

        /// castd's arguments: the socket, no discovery, the emulator as a static device whose
        /// root castd trusts.
        var castdArguments: [String] {
            [
                "--mode", "user", "--socket", socket, "--no-discovery", "--state-directory", directory + "/state",
                "--trust-root", directory + "/authority/root.pem", "--device", "\(deviceName)=127.0.0.1:\(port)",
            ]
        }

        func castc(_ arguments: [String]) async throws -> CommandResult {
            try await run("castc", arguments, environment: environment)
        }

        /// Starts castd (through `wrapper` if given: a command line that ends by running castd's)
        /// and waits until it answers.
        func startCastd(
            _ extra: [String] = [], environment: [String: String] = [:], wrapper: [String] = []
        ) async throws -> ChildProcess {
            let castd = productsDirectory.appendingPathComponent("castd").path
            let command = wrapper + [castd] + castdArguments + extra
            let process = try launch(command[0], Array(command.dropFirst()), environment)
            try await eventually(timeout: processStartTimeout, "castd to answer") {
                try process.checkRunning()
                return try await castc(["status"]).status == 0
            }
            return process
        }

        /// The records castd kept, oldest first.
        func records() async throws -> [CastdLogRecord] {
            let result = try await castc(["logs", "--json", "-n", "1000"])
            #expect(result.status == 0, "\(result)")
            return try result.stdout.split(separator: "\n").map { try CastdLogRecord(jsonString: String($0)) }
        }
    }

    /// A cast-emulator in a temporary directory; castd is started by the test.
    func withEmulator<T>(_ body: (Setup) async throws -> T) async throws -> T {
        try await withTemporaryDirectory { directory in
            try await withProcesses { launch in
                let ready = directory + "/emulator.json"
                let name = "Log TV " + String(UInt32.random(in: 0...UInt32.max), radix: 36)
                _ = try launch(
                    "cast-emulator",
                    ["--name", name, "--port", "0", "--ready-file", ready, "--authority", directory + "/authority"], [:]
                )
                try await eventually(timeout: processStartTimeout, "the emulator's ready file") {
                    FileManager.default.fileExists(atPath: ready)
                }
                let info = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: ready)))
                let port = try #require((info as? [String: Any])?["port"] as? Int)
                // Setup keeps `launch` only while `body` runs.
                return try await withoutActuallyEscaping(launch) { launch in
                    try await body(Setup(directory: directory, deviceName: name, port: port, launch: launch))
                }
            }
        }
    }

    // MARK: filters

    /// `castc log-level verbose 'CastChannel*'` makes castd keep CastChannel's verbose records
    /// (every message it sends and receives), which `castc logs` shows, while the other
    /// subsystems stay at the minimum.
    @Test func verboseCastChannelRecordsShowInCastcLogs() async throws {
        try await withEmulator { setup in
            _ = try await setup.startCastd()
            let before = try await setup.records()
            #expect(before.contains { $0.subsystem == "RPC" && $0.message == "listening" }, "\(before)")
            #expect(
                before.allSatisfy { $0.level.rawValue >= CastdLogLevel.info.rawValue }, "info is the default minimum")

            let set = try await setup.castc(["log-level", "verbose", "CastChannel*"])
            #expect(set.status == 0, "\(set)")
            #expect(set.stdout.contains("CastChannel*  verbose") && set.stdout.contains("Subsystems: Daemon"), "\(set)")
            let connect = try await setup.castc(["connect", setup.deviceName])
            #expect(connect.status == 0, "\(connect)")

            let after = try await setup.records()
            let channel = after.filter { $0.subsystem == "CastChannel" }
            #expect(
                channel.contains { $0.level == .verbose && $0.message == "sent" && $0.fields["cast.type"] == "LAUNCH" })
            #expect(
                channel.contains {
                    $0.level == .verbose && $0.message == "received" && $0.fields["cast.type"] == "RECEIVER_STATUS"
                })
            #expect(
                channel.allSatisfy {
                    $0.fields["device.id"] != nil && $0.fields["device.address"] == "127.0.0.1:\(setup.port)"
                })
            // The rest stayed at info: RPC's debug records for these very calls were not kept.
            let others = after.filter { $0.subsystem != "CastChannel" }
            #expect(others.allSatisfy { $0.level.rawValue >= CastdLogLevel.info.rawValue }, "\(others)")
            #expect(others.contains { $0.subsystem == "CastSession" && $0.message == "session started" })
            #expect(
                others.contains {
                    $0.subsystem == "Daemon" && $0.message == "log filter changed: CastChannel* at verbose"
                })

            // Lowering RPC too shows what the minimum had kept out.
            expectSuccess(try await setup.castc(["log-level", "debug", "RPC"]))
            expectSuccess(try await setup.castc(["status"]))
            let rpc = try await setup.records().filter { $0.subsystem == "RPC" && $0.level == .debug }
            #expect(rpc.contains { $0.message == "call ok" && $0.fields["rpc.method"] == "GetStatus" }, "\(rpc)")

            // The human form.
            let human = try await setup.castc(["logs", "-n", "1000"])
            #expect(human.stdout.contains(" verbose  CastChannel  sent  "), "\(human.stdout)")
        }
    }

    /// A media URL's query, fragment and user are the loader's secrets (signed URLs, tokens):
    /// no record castd keeps, at any level, and nothing `castc logs` shows carries them; the
    /// scheme, host and path do show, so that a user can tell what was loaded.
    @Test func secretsInAMediaURLStayOutOfTheLog() async throws {
        try await withEmulator { setup in
            _ = try await setup.startCastd()
            expectSuccess(try await setup.castc(["log-level", "verbose", "*"]))
            let url =
                "https://someone:hunter2@cdn.example.com/films/movie.mp4?X-Amz-Signature=s3cr3tsig&token=abc123#t=tok456"
            let load = try await setup.castc(["load", url, "--device", setup.deviceName, "--content-type", "video/mp4"])
            #expect(load.status == 0, "\(load)")

            let records = try await setup.records()
            let human = try await setup.castc(["logs", "-n", "1000"])
            let everything = records.map { "\($0)" }.joined(separator: "\n") + human.stdout
            for secret in ["hunter2", "someone", "s3cr3tsig", "abc123", "tok456", "X-Amz-Signature"] {
                #expect(!everything.contains(secret), "the log shows \(secret)")
            }
            let loaded = try #require(records.first { $0.subsystem == "CastMedia" && $0.message == "LOAD" })
            #expect(
                loaded.fields["media.content"]
                    == "https://cdn.example.com/films/movie.mp4 (user, query, fragment not logged)",
                "\(loaded)")
        }
    }

    /// `castc logs -f` prints a record castd logs after it started following.
    @Test func castcLogsFollowPrintsNewRecords() async throws {
        try await withEmulator { setup in
            let castd = try await setup.startCastd()
            let follower = try ChildProcess(
                "castc", ["logs", "-f", "-n", "1", "--json"], directory: setup.directory, environment: setup.environment
            )
            defer { follower.signal(SIGKILL) }
            // The newest recent record is printed once the follower is in place.
            try await eventually("castc logs -f to print the newest record") { follower.stdout.contains("\n") }
            let first = try CastdLogRecord(jsonString: String(follower.stdout.split(separator: "\n")[0]))

            expectSuccess(try await setup.castc(["log-level", "debug", "Discovery*"]))
            try await eventually("the follower to print the change") { follower.stdout.contains("log filter changed") }
            follower.signal(SIGINT)
            #expect(try await follower.waitForExit() == 0)
            let records = try follower.stdout.split(separator: "\n").map { try CastdLogRecord(jsonString: String($0)) }
            let change = try #require(records.first { $0.message.hasPrefix("log filter changed") })
            #expect(change.message == "log filter changed: Discovery* at debug")
            #expect(
                change.level == .notice && change.subsystem == "Daemon" && change.fields["rpc.method"] == "SetLogFilter"
            )
            #expect(change.sequence > first.sequence)
            #expect(records.map(\.sequence) == records.map(\.sequence).sorted())
            #expect(castd.isRunning)
        }
    }

    /// A follower ends like a watcher when castd stops: UNAVAILABLE, saying why.
    @Test func sigtermEndsLogFollowers() async throws {
        try await withEmulator { setup in
            let castd = try await setup.startCastd()
            let follower = try ChildProcess(
                "castc", ["logs", "-f", "-n", "1"], directory: setup.directory, environment: setup.environment)
            defer { follower.signal(SIGKILL) }
            try await eventually("castc logs -f to start") { follower.stdout.contains("\n") }
            castd.signal(SIGTERM)
            #expect(try await follower.waitForExit() == 14)
            #expect(follower.stderr.contains("castd is shutting down"), "\(follower.stderr)")
            let status = try await castd.waitForExit(timeout: .seconds(8))
            #expect(status == 0, "castd exited \(status):\n\(castd.stderr.suffix(4000))")
        }
    }

    /// --log-level and --log-filter on castd's command line make the startup filter, which
    /// `castc log-level --reset` returns to.
    @Test func castdsLogFlags() async throws {
        try await withEmulator { setup in
            // The later, narrower pattern makes the exception.
            let castd = try await setup.startCastd([
                "--log-level", "warning", "--log-filter", "RPC=debug", "--log-filter", "Cast*=verbose",
                "--log-filter", "CastAuth=error",
            ])
            let shown = try await setup.castc(["log-level", "--json"])
            let filter = try CastdLogFilter(jsonString: shown.stdout)
            #expect(filter.minimumLevel == .warning)
            #expect(filter.subsystems.map(\.pattern) == ["RPC", "Cast*", "CastAuth"])
            #expect(filter.subsystems.map(\.level) == [.debug, .verbose, .error])

            expectSuccess(try await setup.castc(["connect", setup.deviceName]))
            let records = try await setup.records()
            #expect(records.contains { $0.subsystem == "RPC" && $0.level == .debug })
            #expect(records.contains { $0.subsystem == "CastChannel" && $0.level == .verbose })
            #expect(records.contains { $0.subsystem == "CastSession" && $0.message == "session started" })
            #expect(!records.contains { $0.subsystem == "CastAuth" }, "CastAuth's debug record is below error")
            #expect(!records.contains { $0.subsystem == "Daemon" }, "the daemon's info records are below warning")
            // The same on stderr, as lines.
            #expect(castd.stderr.contains(" debug RPC: call ok"), "\(castd.stderr)")
            #expect(castd.stderr.contains(" verbose CastChannel: sent"))
            #expect(!castd.stderr.contains(" Daemon: "))

            expectSuccess(try await setup.castc(["log-level", "info"]))
            let reset = try await setup.castc(["log-level", "--reset", "--json"])
            #expect(try CastdLogFilter(jsonString: reset.stdout).minimumLevel == .warning)
        }
    }

    @Test func aBadLogFilterStopsCastdNamingIt() async throws {
        try await withTemporaryDirectory { directory in
            let socket = ["--socket", directory + "/castd.sock", "--no-discovery"]
            let cases: [([String], [String])] = [
                (
                    ["--log-filter", "CastChannel*=loud"],
                    ["'CastChannel*=loud'", "unknown log level 'loud'", "verbose, debug"]
                ),
                (
                    ["--log-filter", "RPC=debug", "--log-filter", "Cast Channel=debug"],
                    ["'Cast Channel=debug'", "white space"]
                ),
                (["--log-filter", "CastChannel"], ["'CastChannel'", "PATTERN=LEVEL"]),
                (["--log-level", "loud"], ["unknown log level 'loud'"]),
            ]
            for (arguments, expected) in cases {
                let result = try await run("castd", socket + arguments)
                #expect(result.status == 64, "\(arguments): \(result)")
                for text in expected { #expect(result.stderr.contains(text), "\(arguments): \(result.stderr)") }
            }
        }
    }

    // MARK: stderr and the journal

    /// Outside systemd, and when JOURNAL_STREAM was inherited but stderr goes elsewhere, castd
    /// writes lines to stderr.
    @Test func castdLogsToStderrUnlessStderrIsTheJournalStream() async throws {
        try await withEmulator { setup in
            var null = stat()
            stat("/dev/null", &null)
            let castd = try await setup.startCastd(environment: ["JOURNAL_STREAM": "\(null.st_dev):\(null.st_ino)"])
            let line = try #require(castd.stderr.split(separator: "\n").first { $0.contains(" Daemon: logging") })
            #expect(
                line.wholeMatch(
                    of:
                        /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info Daemon: logging log\.filter=info log\.output=stderr/
                )
                    != nil, "\(line)")
        }
    }

    /// Under systemd, castd writes journal entries with structured fields. journald does not run
    /// here: castd runs in a mount namespace where a directory with the test's datagram socket
    /// is bound over /run/systemd/journal, so that sd_journal_sendv(3) sends to the test, which
    /// reads journald's native protocol.
    @Test(.enabled("needs `unshare --mount` and mount(2) (root)") { await canUnshareMounts() })
    func underTheJournalCastdSendsStructuredEntries() async throws {
        try await withEmulator { setup in
            let journal = try JournalSocket(directory: setup.directory + "/journal")
            defer { journal.stop() }
            let castd = try await setup.startCastd(
                ["--log-level", "debug", "--log-filter", "CastChannel=verbose"], wrapper: journalWrapper(journal))
            expectSuccess(try await setup.castc(["connect", setup.deviceName]))
            expectSuccess(try await setup.castc(["launch", "E2C0EC40"]))
            let send = try await setup.castc(["send", "urn:x-cast:com.castd.echo", "--json", #"{"type":"two\nlines"}"#])
            #expect(send.status == 0, "\(send)")

            func entry(_ what: String, _ match: @escaping ([String: [String]]) -> Bool) async throws -> [String:
                [String]]
            {
                var found: [String: [String]]?
                try await eventually("a journal entry: \(what)") {
                    found = journal.entries.first(where: match)
                    return found != nil
                }
                return found!
            }
            let connected = try await entry("CastDevice connected") {
                $0["CASTD_SUBSYSTEM"] == ["CastDevice"] && $0["MESSAGE"] == ["connected"]
            }
            #expect(connected["PRIORITY"] == ["6"] && connected["SYSLOG_IDENTIFIER"] == ["castd"])
            #expect(connected["DEVICE_ID"]?.first?.isEmpty == false)
            #expect(connected["DEVICE_ADDRESS"] == ["127.0.0.1:\(setup.port)"])
            #expect(connected["CODE_FILE"]?.first?.hasSuffix("DeviceController+Link.swift") == true)
            #expect(connected["CODE_LINE"]?.first.flatMap { Int($0) } != nil && connected["CODE_FUNC"] != nil)

            let call = try await entry("RPC StartSession") {
                $0["CASTD_SUBSYSTEM"] == ["RPC"] && $0["RPC_METHOD"] == ["StartSession"] && $0["MESSAGE"] == ["call ok"]
            }
            #expect(call["PRIORITY"] == ["7"] && call["RPC_CALL"] != nil && call["RPC_CONNECTION"] != nil)

            // A value with a line break travels in the protocol's binary form, whole.
            let sent = try await entry("the sent message whose type has a line break") {
                $0["CASTD_SUBSYSTEM"] == ["CastChannel"] && $0["MESSAGE"] == ["sent"]
                    && $0["CAST_TYPE"] == ["two\nlines"]
            }
            #expect(sent["CAST_NAMESPACE"] == ["urn:x-cast:com.castd.echo"] && sent["PRIORITY"] == ["7"])

            for fields in journal.entries {
                #expect(fields["MESSAGE"]?.count == 1 && fields["SYSLOG_IDENTIFIER"] == ["castd"], "\(fields)")
                #expect(
                    fields.keys.allSatisfy { $0.wholeMatch(of: /[A-Z0-9][A-Z0-9_]{0,63}/) != nil }, "\(fields.keys)")
            }
            // Nothing of it on stderr: the journal took every record.
            #expect(!castd.stderr.contains("connected") && !castd.stderr.contains("call ok"), "\(castd.stderr)")
        }
    }

    /// The same namespace and socket, but castd's JOURNAL_STREAM names another file than its
    /// stderr (it inherited the variable): it writes lines to stderr, and nothing to the journal.
    @Test(.enabled("needs `unshare --mount` and mount(2) (root)") { await canUnshareMounts() })
    func anInheritedJournalStreamDoesNotSendToTheJournal() async throws {
        try await withEmulator { setup in
            let journal = try JournalSocket(directory: setup.directory + "/journal")
            defer { journal.stop() }
            var null = stat()
            stat("/dev/null", &null)
            let castd = try await setup.startCastd(
                ["--log-level", "debug"],
                wrapper: journalWrapper(journal, journalStream: "\(null.st_dev):\(null.st_ino)"))
            expectSuccess(try await setup.castc(["status"]))
            try await eventually("castd's stderr to have the call") { castd.stderr.contains(" debug RPC: call ok") }
            #expect(castd.stderr.contains("log.output=stderr"))
            #expect(journal.entries.isEmpty, "\(journal.entries)")
        }
    }

    /// `unshare --mount` running castd with `journal`'s directory bound over
    /// /run/systemd/journal (over a tmpfs on /run if the machine has no such directory, so that
    /// nothing is created outside the namespace), and JOURNAL_STREAM naming castd's stderr (or
    /// `journalStream`).
    func journalWrapper(_ journal: JournalSocket, journalStream: String? = nil) -> [String] {
        let script = """
            set -e
            if [ ! -d /run/systemd/journal ]; then
                mount -t tmpfs castd-test /run
                mkdir -p /run/systemd/journal
            fi
            mount --bind "$1" /run/systemd/journal
            if [ -n "$2" ]; then JOURNAL_STREAM="$2"; else JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2); fi
            export JOURNAL_STREAM
            shift 2
            exec "$@"
            """
        return [
            "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", journal.directory,
            journalStream ?? "",
        ]
    }
}

/// Whether this process may run `unshare --mount` (root with CAP_SYS_ADMIN, as in CI).
func canUnshareMounts() async -> Bool {
    // In CI a missing privilege is a failure, not a skip: the tests run and fail saying why.
    if runningInCI { return true }
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
    return
        (try? await run("/usr/bin/unshare", ["--mount", "--propagation", "private", "true"], timeout: .seconds(5))
        .status) == 0
}

/// A datagram socket named `socket` in `directory`, standing in for journald's: a thread reads
/// every datagram and parses journald's native protocol (`NAME=value\n`, or `NAME\n`, a 64-bit
/// little-endian length, the value and `\n` for values with line breaks).
final class JournalSocket: Sendable {
    let directory: String
    private let fd: Int32
    private let received = Locked<[[String: [String]]]>([])
    private let stopped = Atomic<Bool>(false)

    init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
        fd = try unixSocket(Int32(SOCK_DGRAM.rawValue), path: directory + "/socket", bindInstead: true)
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let fd = self.fd
        // A thread of its own: recv blocks (up to the timeout), never a cooperative thread.
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while !stopped.load(ordering: .relaxed) {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n > 0 {
                    let entry = Self.parse(buffer[..<n])
                    received.withLock { $0.append(entry) }
                }
            }
            close(fd)
        }
    }

    /// Every entry received so far: each field's values by name.
    var entries: [[String: [String]]] { received.withLock { $0 } }

    func stop() { stopped.store(true, ordering: .relaxed) }

    static func parse(_ datagram: ArraySlice<UInt8>) -> [String: [String]] {
        var fields: [String: [String]] = [:]
        var index = datagram.startIndex
        while index < datagram.endIndex, let newline = datagram[index...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = datagram[index..<newline]
            if let equals = line.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(decoding: line[..<equals], as: UTF8.self)
                fields[name, default: []].append(String(decoding: line[(equals + 1)...], as: UTF8.self))
                index = newline + 1
            } else {
                let name = String(decoding: line, as: UTF8.self)
                let start = newline + 1
                guard start + 8 <= datagram.endIndex else { break }
                var length = 0
                for (shift, byte) in datagram[start..<(start + 8)].enumerated() { length |= Int(byte) << (8 * shift) }
                let value = start + 8
                guard value + length <= datagram.endIndex else { break }
                fields[name, default: []].append(String(decoding: datagram[value..<(value + length)], as: UTF8.self))
                index = value + length + 1  // and the "\n" after the value
            }
        }
        return fields
    }
}
