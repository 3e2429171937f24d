import CastTestSupport
import CastdAPI
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import SwiftProtobuf
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// castd as a Linux service: who may call it (real uids and groups, through setpriv), its
/// notifications to the service manager, SIGTERM, configuration errors, and per-uid limits.
/// castd and cast-emulator run as real processes; the emulator is given to castd by address
/// (no mDNS), so these tests may run beside the ones that use Avahi.
@Suite(.serialized)
struct SystemServiceTests {
    /// uids and gids that exist only in these tests: the kernel needs no /etc/passwd entry to
    /// run a process as them.
    static let stranger: UInt32 = 4242
    static let controller: UInt32 = 4243
    static let reader: UInt32 = 4244
    static let controlGroup: UInt32 = 4301
    static let readGroup: UInt32 = 4300

    struct Daemon {
        var directory: String
        var socket: String
        var castd: ChildProcess
        var emulatorHTTP: Int
        var emulatorLog: String
        var environment: [String: String] { ["CASTD_SOCKET": socket] }

        func castc(_ arguments: [String], timeout: Duration = .seconds(20)) async throws -> CommandResult {
            try await run("castc", arguments, environment: environment, timeout: timeout)
        }

        /// castc run as another uid, with only the given groups.
        func castc(uid: UInt32, groups: [UInt32], _ arguments: [String]) async throws -> CommandResult {
            let castc = productsDirectory.appendingPathComponent("castc").path
            let groupArguments =
                groups.isEmpty ? ["--clear-groups"] : ["--groups", groups.map(String.init).joined(separator: ",")]
            return try await run(
                "/usr/bin/setpriv", ["--reuid", "\(uid)", "--regid", "\(uid)"] + groupArguments + [castc] + arguments,
                environment: environment)
        }

        func status() async throws -> CastdStatusResponse {
            let result = try await castc(["status", "--json"])
            #expect(result.status == 0, "\(result)")
            var options = JSONDecodingOptions()
            options.ignoreUnknownFields = true
            return try CastdStatusResponse(jsonString: result.stdout, options: options)
        }
    }

    /// An emulated "Test TV" (not published) and a castd that uses it by address and trusts its
    /// root; waits until castd answers.
    /// `castdUser`: castd runs as this uid and gid (no other groups), as the system castd runs
    /// as its own user; its socket is then in a directory of its own.
    func withDaemon<T>(
        castdArguments: [String] = [], environment: [String: String] = [:], waitUntilServing: Bool = true,
        castdUser: UInt32? = nil, _ body: (Daemon) async throws -> T
    ) async throws -> T {
        try await withTemporaryDirectory { directory in
            try await withProcesses { launch in
                let ready = directory + "/emulator.json"
                let log = directory + "/emulator.log"
                _ = try launch(
                    "cast-emulator",
                    ["--name", "Test TV", "--port", "0", "--http-port", "0", "--ready-file", ready, "--log", log]
                        + ["--authority", directory + "/authority"],
                    [:])
                try await eventually(timeout: processStartTimeout, "the emulator's ready file") {
                    FileManager.default.fileExists(atPath: ready)
                }
                let readyFile =
                    try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: ready)))
                    as? [String: Any]
                let port = try #require(readyFile?["port"] as? Int)
                let httpPort = try #require(readyFile?["httpPort"] as? Int)
                var socket = directory + "/castd.sock"
                var program = "castd"
                var programArguments: [String] = []
                if let castdUser {
                    let own = directory + "/castd-user"
                    try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true)
                    chown(own, castdUser, castdUser)
                    socket = own + "/castd.sock"
                    program = "/usr/bin/setpriv"
                    programArguments = [
                        "--reuid", "\(castdUser)", "--regid", "\(castdUser)", "--clear-groups",
                        productsDirectory.appendingPathComponent("castd").path,
                    ]
                }
                let castd = try launch(
                    program,
                    programArguments
                        + [
                            "--mode", "user", "--socket", socket, "--no-discovery", "--device",
                            "Test TV=127.0.0.1:\(port)",
                        ]
                        + [
                            "--trust-root", directory + "/authority/root.pem", "--state-directory",
                            directory + "/state",
                        ]
                        + castdArguments,
                    environment)
                let daemon = Daemon(
                    directory: directory, socket: socket, castd: castd, emulatorHTTP: httpPort, emulatorLog: log)
                if waitUntilServing {
                    try await eventually("castd to serve \(socket)") {
                        try await daemon.castc(["devices"]).status == 0
                    }
                }
                return try await body(daemon)
            }
        }
    }

    static func mode(of path: String) -> (mode: mode_t, gid: UInt32) {
        var info = stat()
        _ = stat(path, &info)
        return (info.st_mode & 0o777, info.st_gid)
    }

    // MARK: who may call

    @Test func peerCredentialsDecideWhoMayCall() async throws {
        let groups = ["--control-group", "\(Self.controlGroup)", "--read-group", "\(Self.readGroup)"]
        try await withDaemon(castdArguments: groups) { daemon in
            // Two groups: the file lets everyone reach castd, and castd checks each peer.
            #expect(Self.mode(of: daemon.socket).mode == 0o666)

            let stranger = try await daemon.castc(uid: Self.stranger, groups: [], ["status"])
            #expect(stranger.status == 7, "PERMISSION_DENIED: \(stranger)")
            #expect(stranger.stderr.contains("does not let uid \(Self.stranger)"), "\(stranger)")
            #expect(
                stranger.stderr.contains("members of \(Self.controlGroup)") || stranger.stderr.contains("(control)"))
            try await eventually("castd to log the refusal") {
                daemon.castd.stderr.contains("refused a client")
                    && daemon.castd.stderr.contains("peer.uid=\(Self.stranger)")
            }

            let reader = try await daemon.castc(uid: Self.reader, groups: [Self.readGroup], ["status"])
            #expect(reader.status == 0, "\(reader)")
            #expect(reader.stdout.contains("you may only read"), "\(reader)")
            let readerVolume = try await daemon.castc(uid: Self.reader, groups: [Self.readGroup], ["volume", "30%"])
            #expect(readerVolume.status == 7, "\(readerVolume)")
            #expect(readerVolume.stderr.contains("SetVolume needs control access"), "\(readerVolume)")

            let controller = try await daemon.castc(
                uid: Self.controller, groups: [Self.controlGroup], ["volume", "30%"])
            #expect(controller.status == 0, "\(controller)")
            let device = try #require(try await daemon.status().devices.first)
            #expect(abs(device.receiver.volume.level - 0.3) < 0.001, "the controller's request reached the device")

            // The primary group counts as much as a supplementary one.
            let primary = try await run(
                "/usr/bin/setpriv",
                ["--reuid", "\(Self.controller)", "--regid", "\(Self.controlGroup)", "--clear-groups"]
                    + [productsDirectory.appendingPathComponent("castc").path, "status"],
                environment: daemon.environment)
            #expect(primary.status == 0 && primary.stdout.contains("you may control"), "\(primary)")
        }
    }

    @Test func theSocketsModeAndGroupFollowThePolicy() async throws {
        try await withDaemon { daemon in
            #expect(Self.mode(of: daemon.socket).mode == 0o600, "no groups: castd's user and root only")
            // Another uid cannot even open the socket.
            let stranger = try await daemon.castc(uid: Self.stranger, groups: [], ["status"])
            #expect(stranger.status != 0, "\(stranger)")
        }
        try await withDaemon(castdArguments: ["--control-group", "\(Self.controlGroup)"]) { daemon in
            let (mode, gid) = Self.mode(of: daemon.socket)
            #expect(mode == 0o660 && gid == Self.controlGroup)
            let member = try await daemon.castc(uid: Self.controller, groups: [Self.controlGroup], ["status"])
            #expect(member.status == 0, "\(member)")
        }
    }

    @Test func anActivatedSocketThatDoesNotMatchThePolicyIsReported() async throws {
        try await withTemporaryDirectory { directory in
            let socket = directory + "/castd.sock"
            let castd = productsDirectory.appendingPathComponent("castd").path
            let activator = try ChildProcess(
                "/usr/bin/systemd-socket-activate",
                ["-l", socket, castd, "--mode", "user", "--socket", socket, "--no-discovery", "--state-directory", ""]
                    + ["--control-group", "\(Self.controlGroup)"],
                directory: directory)
            defer { activator.signal(SIGKILL) }
            try await eventually("the activation socket") { FileManager.default.fileExists(atPath: socket) }
            let status = try await run("castc", ["status", "--json"], environment: ["CASTD_SOCKET": socket])
            #expect(status.status == 0, "\(status)")
            var options = JSONDecodingOptions()
            options.ignoreUnknownFields = true
            let parsed = try CastdStatusResponse(jsonString: status.stdout, options: options)
            #expect(parsed.daemon.socketActivated && parsed.daemon.socketPath == socket)
            // systemd-socket-activate made it root's, without the group: castd says so.
            #expect(activator.stderr.contains("cannot open \(socket)"), "\(activator.stderr)")
        }
    }

    @Test func socketsPassedForAnotherProcessAreNotTaken() async throws {
        // LISTEN_FDS meant for another pid (LISTEN_PID): castd binds its own socket instead of
        // taking whatever fd 3 is.
        try await withTemporaryDirectory { directory in
            let socket = directory + "/castd.sock"
            let castd = try ChildProcess(
                "castd", ["--mode", "user", "--socket", socket, "--no-discovery", "--state-directory", ""],
                directory: directory,
                environment: ["LISTEN_FDS": "1", "LISTEN_PID": "1", "LISTEN_FDNAMES": "castd.socket"])
            defer { castd.signal(SIGKILL) }
            try await eventually("castd to serve its own socket") {
                try await run("castc", ["status"], environment: ["CASTD_SOCKET": socket]).status == 0
            }
            let status = try await run("castc", ["status", "--json"], environment: ["CASTD_SOCKET": socket])
            var options = JSONDecodingOptions()
            options.ignoreUnknownFields = true
            let parsed = try CastdStatusResponse(jsonString: status.stdout, options: options)
            #expect(!parsed.daemon.socketActivated && parsed.daemon.socketPath == socket)
        }
    }

    // MARK: limits across uids

    @Test func oneUIDAtItsConnectionLimitDoesNotStopAnother() async throws {
        let arguments = ["--max-connections-per-uid", "2", "--control-group", "\(Self.controlGroup)"]
        try await withDaemon(castdArguments: arguments) { daemon in
            // Two watches hold root's two connections.
            let first = try ChildProcess(
                "castc", ["watch"], directory: daemon.directory, environment: daemon.environment)
            defer { first.signal(SIGKILL) }
            let second = try ChildProcess(
                "castc", ["watch"], directory: daemon.directory, environment: daemon.environment)
            defer { second.signal(SIGKILL) }
            try await eventually("both watches to have their snapshot") {
                first.stdout.contains("snapshot") && second.stdout.contains("snapshot")
            }
            let refused = try await daemon.castc(["status"])
            #expect(refused.status == 8, "RESOURCE_EXHAUSTED: \(refused)")
            #expect(refused.stderr.contains("max_connections_per_uid"), "\(refused)")

            let other = try await daemon.castc(uid: Self.controller, groups: [Self.controlGroup], ["status"])
            #expect(other.status == 0, "another uid is not affected: \(other)")

            first.signal(SIGTERM)
            _ = try await first.waitForExit()
            try await eventually("root's connection to be freed") { try await daemon.castc(["status"]).status == 0 }
        }
    }

    // MARK: the service manager

    @Test func notificationsTellTheServiceManagerWhatCastdIsDoing() async throws {
        try await withTemporaryDirectory { scratch in
            let notify = try DatagramListener(path: scratch + "/notify.sock")
            let environment = ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "300000"]
            try await withDaemon(environment: environment, waitUntilServing: false) { daemon in
                var received: [String] = []
                func receive(until done: ([String]) -> Bool) async throws {
                    let deadline = ContinuousClock.now + .seconds(20)
                    while !done(received), ContinuousClock.now < deadline {
                        if let message = try await notify.receive(timeout: .seconds(2)) { received.append(message) }
                    }
                    #expect(done(received), "received: \(received)")
                }
                try await receive { $0.contains { $0.contains("READY=1") } }
                let ready = try #require(received.first { $0.contains("READY=1") })
                #expect(
                    ready.contains("STATUS=Serving \(daemon.socket): 1 device (0 connected), 0 sessions"), "\(ready)")

                // A client that stays, and a session: each shows in a STATUS line.
                let watch = try ChildProcess(
                    "castc", ["watch"], directory: daemon.directory, environment: daemon.environment)
                defer { watch.signal(SIGKILL) }
                try await receive { $0.contains { $0.contains("1 client") } }
                let connect = try await daemon.castc(["connect", "Test TV"])
                #expect(connect.status == 0, "\(connect)")
                try await receive { $0.contains { $0.contains("1 device (1 connected), 1 session") } }

                // The watchdog is pinged at half of WATCHDOG_USEC, again and again.
                try await receive { $0.filter { $0 == "WATCHDOG=1" }.count >= 3 }

                daemon.castd.signal(SIGTERM)
                try await receive { $0.contains { $0.hasPrefix("STOPPING=1") } }
                #expect(try await daemon.castd.waitForExit() == 0)
            }
        }
    }

    @Test func sigtermAnswersCallsInFlightSavesTheSessionAndLeavesTheAppRunning() async throws {
        try await withDaemon { daemon in
            #expect(try await daemon.castc(["connect", "Test TV"]).status == 0)
            let load = try await daemon.castc(["load", "https://example.com/movie.mp4", "--content-type", "video/mp4"])
            #expect(load.status == 0, "\(load)")
            // The device stops answering for a minute: a pause stays in flight.
            try await EndToEndTests.control(daemon.emulatorHTTP, "/emulator/faults", "{\"replyDelayMs\": 60000}")
            let pause = try ChildProcess(
                "castc", ["pause"], directory: daemon.directory, environment: daemon.environment)
            defer { pause.signal(SIGKILL) }
            try await eventually("the PAUSE to reach the device") {
                let log = (try? String(contentsOfFile: daemon.emulatorLog, encoding: .utf8)) ?? ""
                return log.contains("\"PAUSE\"")
            }

            let signalled = ContinuousClock.now
            daemon.castd.signal(SIGTERM)
            #expect(try await daemon.castd.waitForExit(timeout: .seconds(15)) == 0)
            let stopped = ContinuousClock.now - signalled
            print("castd stopped \(stopped) after SIGTERM with a call in flight")

            // The call in flight got an answer: UNAVAILABLE, castd is shutting down.
            #expect(try await pause.waitForExit() == 14, "\(pause.stderr)")
            #expect(pause.stderr.contains("shutting down"), "\(pause.stderr)")
            // The session is saved for the next castd, and the app still runs on the device.
            let saved = try String(contentsOfFile: daemon.directory + "/state/sessions.json", encoding: .utf8)
            #expect(saved.contains("CC1AD845"), "\(saved)")
            let log = try String(contentsOfFile: daemon.emulatorLog, encoding: .utf8)
            #expect(!log.contains("\"STOP\""), "castd did not stop the app")
            let (data, _) = try await URLSession.shared.data(
                from: URL(string: "http://127.0.0.1:\(daemon.emulatorHTTP)/emulator/state")!)
            let state = String(decoding: data, as: UTF8.self)
            #expect(state.contains("CC1AD845"), "\(state)")
        }
    }

    // MARK: configuration

    @Test func configurationErrorsStopCastdNamingTheKeyAndLine() async throws {
        try await withTemporaryDirectory { directory in
            let bad = directory + "/castd.toml"
            try "socket = \"\(directory)/castd.sock\"\n\n[limits]\nmax_frame_bytes = \"lots\"\n"
                .write(toFile: bad, atomically: true, encoding: .utf8)
            let refused = try await run("castd", ["--config", bad, "--no-discovery"])
            #expect(refused.status == 78, "EX_CONFIG: \(refused)")
            #expect(refused.stderr.contains("\(bad):4: limits.max_frame_bytes: must be an integer"), "\(refused)")
            #expect(!FileManager.default.fileExists(atPath: directory + "/castd.sock"), "castd did not start")

            let check = try await run("castd", ["--check-config", "--config", bad])
            #expect(check.status == 78 && check.stderr.contains(":4: limits.max_frame_bytes"), "\(check)")

            try "socket = \"\(directory)/castd.sock\"\n[limits]\nmax_calls_per_connection = 7\nwatcher_queue = 64\n"
                .write(toFile: bad, atomically: true, encoding: .utf8)
            let good = try await run("castd", ["--check-config", "--config", bad, "--watcher-queue", "500"])
            #expect(good.status == 0, "\(good)")
            #expect(good.stdout.contains("limits.max_calls_per_connection = 7"), "\(good)")
            #expect(good.stdout.contains("limits.watcher_queue = 500"), "a flag overrides the file: \(good)")

            try "[log]\nlevel = \"notice\"\n[log.filters]\n\"CastChannel*\" = \"loud\"\n"
                .write(toFile: bad, atomically: true, encoding: .utf8)
            let filter = try await run("castd", ["--check-config", "--config", bad])
            #expect(filter.status == 78, "\(filter)")
            #expect(filter.stderr.contains("\(bad):3: log.filters: "), "\(filter)")
            #expect(filter.stderr.contains("unknown log level 'loud'"), "\(filter)")

            let range = try await run("castd", ["--check-config", "--watcher-queue", "1"])
            #expect(range.status == 64 && range.stderr.contains("--watcher-queue: 1 is out of range"), "\(range)")
        }
    }

    @Test func theConfigurationFileTakesEffect() async throws {
        try await withTemporaryDirectory { directory in
            let config = directory + "/castd.toml"
            try "[limits]\nmax_calls_per_connection = 7\nidle_timeout_seconds = 0\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            try await withDaemon(castdArguments: ["--config", config]) { daemon in
                let status = try await daemon.status()
                #expect(status.daemon.limits.maxCallsPerConnection == 7)
                #expect(status.daemon.limits.idleTimeoutMs == 0)
                #expect(status.daemon.configPath == config)
                let verbose = try await daemon.castc(["status", "--verbose"])
                #expect(
                    verbose.stdout.contains("7 calls per connection") && verbose.stdout.contains("idle close never"))
            }
        }
    }
}
