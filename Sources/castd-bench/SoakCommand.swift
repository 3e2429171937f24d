import CastdSupport
import ArgumentParser
import CastClient
import CastEmulator
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `castd-bench soak` (`make soak`, issue 7): many clients, many mixed requests, two emulated
/// devices whose links drop every few seconds, against castd as a process; writes SOAK.md.
struct SoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract:
            "Soak castd: clients × mixed requests against two emulated devices that drop their links; write SOAK.md.",
        discussion: """
            Run it through `make soak` (scripts/soak.sh), which builds castd and castd-bench in release mode. \
            Criteria (the exit status is 1 when one fails): no lost or duplicated reply, every watcher saw \
            the same events in the same order, castd's resident memory grew by less than 5 % from the warm-up \
            (the first fifth of the requests) to the end, and castd holds as many file descriptors once every \
            client has gone as before they came.

            castd runs with --watcher-queue 4096 unless told otherwise: the soak publishes about 2,000 events a \
            second (a thousand times what a real device does), and castd's default of 256 is a tenth of a second \
            of them, less than a loaded machine may keep castd off the CPU.

            Examples:
              castd-bench soak --bin .build/release                      64 clients × 10,000 requests
              castd-bench soak --quick --output /tmp/soak.md              a smoke run (~20 s)
              castd-bench soak --clients 16 --requests 2000 --depth 8     your own sizes
            """)

    @Option(help: ArgumentHelp("Where castd is. Default: beside castd-bench.", valueName: "dir"))
    var bin: String?

    @Option(help: ArgumentHelp("The Markdown file to write.", valueName: "path"))
    var output = "SOAK.md"

    @Flag(help: "A smoke run: 8 clients × 500 requests, 2 watchers, a drop every 2 s (about 20 s).")
    var quick = false

    @Option(help: "Client connections (default 64; --quick: 8).")
    var clients: Int?

    @Option(help: "Requests per client (default 10000; --quick: 500).")
    var requests: Int?

    @Option(help: "Calls each client keeps open at once (pipelined on its connection).")
    var depth = 4

    @Option(help: "Watchers: extra connections, each with a Watch for the whole run (default 8; --quick: 2).")
    var watchers: Int?

    @Option(
        name: .customLong("drop-every"),
        help: ArgumentHelp("Seconds between link drops, the devices in turn (default 4; --quick: 2).", valueName: "s"))
    var dropEvery: Double?

    @Option(help: ArgumentHelp("Seconds after which a call with no status counts as lost.", valueName: "s"))
    var deadline = 60

    @Option(help: "Seed of the request mix.")
    var seed: UInt64 = 7

    @Option(
        name: .customLong("watcher-queue"),
        help: ArgumentHelp(
            "castd's --watcher-queue: events a watcher may fall behind by (0: castd's default, 256).",
            valueName: "events"))
    var watcherQueue = 4096

    @OptionGroup var reportOptions: ReportOptions

    @Flag(name: .customLong("keep-work"), help: "Keep the work directory (castd's log).")
    var keepWork = false

    var parameters: SoakParameters {
        var parameters = SoakParameters()
        parameters.clients = clients ?? (quick ? 8 : 64)
        parameters.requests = requests ?? (quick ? 500 : 10_000)
        parameters.depth = depth
        parameters.watchers = watchers ?? (quick ? 2 : 8)
        parameters.dropInterval = .milliseconds(Int64((dropEvery ?? (quick ? 2 : 4)) * 1000))
        parameters.deadline = .seconds(deadline)
        parameters.seed = seed
        return parameters
    }

    func validate() throws {
        let parameters = self.parameters
        guard parameters.clients > 0, parameters.requests > 0 else {
            throw ValidationError("--clients and --requests must be positive")
        }
        guard (1...128).contains(parameters.depth) else {
            throw ValidationError("--depth must be 1…128 (castd's limit of calls open on one connection)")
        }
        guard parameters.watchers >= 1 else { throw ValidationError("--watchers must be at least 1") }
        guard parameters.dropInterval >= .milliseconds(500) else {
            throw ValidationError("--drop-every must be at least 0.5 s")
        }
        guard deadline >= 1 else { throw ValidationError("--deadline must be at least 1 s") }
    }

    func run() async throws {
        let started = monotonicNanos()
        let binDirectory = bin ?? (selfExecutablePath() as NSString).deletingLastPathComponent
        let work = "/tmp/castd-soak-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        // 0755 whatever the umask: castd binds its socket only in a directory others cannot write.
        try FileManager.default.createDirectory(
            atPath: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        _ = FileManager.default.createFile(atPath: work + "/castd.toml", contents: Data())
        let environment = BenchEnvironment(
            binDirectory: binDirectory, workDirectory: work, python: nil, catt: nil, peersScript: "", quick: quick,
            peerHost: "127.0.0.1")
        guard FileManager.default.isExecutableFile(atPath: environment.castd) else {
            throw ValidationError("\(environment.castd) is not built (swift build -c release), or give --bin")
        }
        let machine = MachineDescription.current(swiftVersion: reportOptions.swiftVersion)
        log("castd-bench soak: \(machine.cores) cores, load \(Proc.loadAverage()); work directory \(work)")

        var command = "castd-bench soak" + (quick ? " --quick" : "")
        let parameters = self.parameters
        var outcome: SoakOutcome
        do {
            outcome = try await Soak(
                environment: environment, parameters: parameters, watcherQueue: watcherQueue > 0 ? watcherQueue : nil
            ).run()
        } catch {
            outcome = SoakOutcome(parameters: parameters)
            outcome.watcherQueue = watcherQueue > 0 ? watcherQueue : nil
            outcome.failure = "\(error)"
            log("soak failed: \(error)")
        }
        if watcherQueue != 4096 { command += " --watcher-queue \(watcherQueue)" }
        let report = SoakReport(
            machine: machine, buildInfo: reportOptions.buildInfo, quick: quick, command: command, outcome: outcome,
            wallSeconds: Double(monotonicNanos() - started) / 1e9)
        try report.markdown().write(toFile: output, atomically: true, encoding: .utf8)
        for criterion in report.criteria {
            log("\(criterion.passed ? "pass" : "FAIL")  \(criterion.name): \(criterion.measured)")
        }
        let keep = keepWork || !report.passed
        if keep {
            log("work directory kept: \(work) (castd's log: \(work)/soak.log)")
        } else {
            try? FileManager.default.removeItem(atPath: work)
        }
        log("wrote \(output) in \(Format.fixed(Double(monotonicNanos() - started) / 1e9, 0)) s")
        if !report.passed { throw ExitCode(1) }
    }
}

/// Everything a soak run measured.
struct SoakOutcome: Sendable {
    var parameters: SoakParameters
    /// castd's --watcher-queue, if the soak set it.
    var watcherQueue: Int?
    /// Why the run could not finish, if it could not.
    var failure: String?

    var tally = SoakTally()
    var watcherTally = SoakTally()
    var watchers: [SoakWatcherResult] = []
    var comparison: WatchComparison?
    var drops: [SoakDrop] = []
    var seconds = 0.0
    var load: LoadWindow?

    /// castd's resident memory (KiB): with the devices linked, before any client; at each tenth
    /// of the requests (1…10); once every client had gone; its peak.
    var rssBaseline = 0
    var rssAtTenth: [Int: Int] = [:]
    var rssAfter = 0
    var rssPeakSampled = 0
    var rssHighWater = 0
    var rssSamples = 0
    var fdsBefore: [Int32: String] = [:]
    var fdsAfter: [Int32: String] = [:]
    var fdSettleSeconds: Double?
    var castdCPUSeconds = 0.0
    var castdRunning = false
    var devicesRelinked = false
    var castdLogWarnings: [String] = []

    init(parameters: SoakParameters) {
        self.parameters = parameters
    }

    /// The warm-up: castd's memory still rises through the first tenth of the requests (its
    /// allocator's arenas fill as every thread takes a share of the load), then stays flat.
    static let warmUpTenths = 2
    var warmRSS: Int? { rssAtTenth[Self.warmUpTenths] }
    var endRSS: Int? { rssAtTenth[10] }
    var drift: Double? {
        guard let warmRSS, let endRSS, warmRSS > 0 else { return nil }
        return Double(endRSS - warmRSS) / Double(warmRSS)
    }
    /// Reconnections castd reported to the first watcher, over every device.
    var reconnections: Int { watchers.first.map { $0.log.reconnections.values.reduce(0, +) } ?? 0 }
    var reportedDrops: Int { watchers.first.map { $0.log.linkDrops.values.reduce(0, +) } ?? 0 }
}

/// One soak run: the devices, castd, the setup, the load, the readings.
struct Soak {
    let environment: BenchEnvironment
    let parameters: SoakParameters
    let watcherQueue: Int?

    static let deviceNames = ["Soak TV 1", "Soak TV 2"]
    static let mediaURL = "http://media.example.invalid/castd-soak/big-buck-bunny.mp4"

    func run() async throws -> SoakOutcome {
        let authority = try EmulatorDeviceAuthority.loadOrCreate(directory: environment.authorityDirectory)
        var devices: [HostedEmulator] = []
        do {
            for name in Self.deviceNames {
                devices.append(try await HostedEmulator.start(name: name, authority: authority, tapped: false))
            }
        } catch {
            for device in devices { await device.shutdown() }
            throw error
        }
        var arguments = ["--no-discovery"]
        for (name, device) in zip(Self.deviceNames, devices) { arguments += ["--device", "\(name)=\(device.address)"] }
        if let watcherQueue { arguments += ["--watcher-queue", "\(watcherQueue)"] }
        let daemon: Daemon
        do {
            daemon = try await Daemon.start(environment, name: "soak", arguments: arguments)
        } catch {
            for device in devices { await device.shutdown() }
            throw error
        }
        do {
            let outcome = try await run(daemon: daemon, devices: devices)
            await daemon.stop()
            for device in devices { await device.shutdown() }
            return outcome
        } catch {
            await daemon.stop()
            for device in devices { await device.shutdown() }
            throw error
        }
    }

    private func run(daemon: Daemon, devices: [HostedEmulator]) async throws -> SoakOutcome {
        let controller = try await daemon.connect()
        do {
            let outcome = try await run(daemon: daemon, devices: devices, controller: controller)
            await controller.close()
            return outcome
        } catch {
            await controller.close()
            throw error
        }
    }

    private func run(daemon: Daemon, devices: [HostedEmulator], controller: CastdClient) async throws -> SoakOutcome {
        var outcome = SoakOutcome(parameters: parameters)
        outcome.watcherQueue = watcherQueue

        // Each device: a session with the Default Media Receiver, media playing.
        for name in Self.deviceNames {
            _ = try await controller.startSession(device: name)
            var media = CastdMediaInformation(url: Self.mediaURL, contentType: "video/mp4", title: "Big Buck Bunny")
            media.duration = SoakRequestKind.mediaDuration
            _ = try await controller.load(media, device: name)
        }
        try await waitUntilSettled(controller)
        outcome.fdsBefore = Proc.openDescriptors(daemon.pid) ?? [:]
        outcome.rssBaseline = daemon.rssKiB ?? 0
        log(
            "soak: castd holds \(outcome.fdsBefore.count) descriptors and \(Format.mebibytes(kibibytes: outcome.rssBaseline)) with both devices linked"
        )

        let soakDevices = zip(Self.deviceNames, devices).map { name, device in
            SoakDevice(selector: name, dropLinks: { await device.emulator.dropLinks() })
        }
        let load = SoakLoad(socket: daemon.socketPath, parameters: parameters, devices: soakDevices)

        // castd's memory: every second, and at each tenth of the requests.
        let samples = RSSSamples()
        let sampler = Task {
            while !Task.isCancelled {
                if let rss = daemon.rssKiB { samples.add(rss) }
                do { try await Task.sleep(for: .seconds(1)) } catch { break }
            }
        }
        let total = parameters.total
        let marks = Task {
            var readings: [Int: Int] = [:]
            for await tenth in load.progress.marks {
                let rss = daemon.rssKiB ?? 0
                readings[tenth] = rss
                samples.add(rss, counted: false)
                log(
                    "soak: \(tenth * 10) % of \(Format.grouped(total)) requests; castd \(Format.mebibytes(kibibytes: rss))"
                )
            }
            return readings
        }

        let watchers = try await load.startWatchers()
        var window = LoadWindow(live: [daemon.pid])
        let cpuBefore = try daemon.cpuSeconds()
        log(
            "soak: \(parameters.clients) clients × \(Format.grouped(parameters.requests)) requests, \(parameters.watchers) watchers, links cut every \(parameters.dropInterval)"
        )
        let (tally, drops, seconds) = try await load.runClients(observer: watchers.first?.progress)
        outcome.castdCPUSeconds = try daemon.cpuSeconds() - cpuBefore
        window.finish(live: [daemon.pid])
        outcome.load = window
        outcome.tally = tally
        outcome.drops = drops
        outcome.seconds = seconds
        outcome.rssAtTenth = await marks.value
        log("soak: \(Format.grouped(tally.calls)) calls in \(Format.fixed(seconds, 1)) s; \(drops.count) link drops")

        // The devices come back (castd reconnects and resumes each session), then the watchers
        // are compared.
        do {
            try await load.awaitRelinks(after: drops, watchers: watchers)
            try await waitUntilSettled(controller)
            outcome.devicesRelinked = true
        } catch {
            log("soak: \(error)")
        }
        let (results, comparison) = try await load.stopWatchers(watchers)
        outcome.watchers = results
        outcome.comparison = comparison
        for result in results { outcome.watcherTally.merge(result.tally) }

        // Every client and watcher has gone: castd's descriptors settle back (a closed
        // connection is released as castd notices the end of its stream).
        let settleStarted = monotonicNanos()
        let before = outcome.fdsBefore.count
        if (try? await waitUntil(
            "castd's descriptors to settle", timeout: .seconds(30), poll: .milliseconds(20),
            {
                (Proc.openDescriptors(daemon.pid)?.count ?? -1) == before
            })) != nil
        {
            outcome.fdSettleSeconds = Double(monotonicNanos() - settleStarted) / 1e9
        }
        outcome.fdsAfter = Proc.openDescriptors(daemon.pid) ?? [:]
        outcome.rssAfter = daemon.rssKiB ?? 0
        outcome.rssHighWater = daemon.peakRSSKiB ?? 0
        sampler.cancel()
        _ = await sampler.value
        (outcome.rssSamples, outcome.rssPeakSampled) = samples.summary
        outcome.castdRunning = daemon.process.isRunning
        if outcome.castdRunning { _ = try? await controller.status() }
        outcome.castdLogWarnings = castdWarnings(daemon)
        return outcome
    }

    /// Waits until castd has every device linked and every session running (started or
    /// resumed), as castd's status says.
    private func waitUntilSettled(_ controller: CastdClient) async throws {
        try await waitUntil(
            "both devices linked, their sessions running", timeout: .seconds(60), poll: .milliseconds(50)
        ) {
            let status = try await controller.status()
            let linked = status.devices.filter { $0.linkState == .connected }.count
            let running = status.sessions.filter { $0.state == .started || $0.state == .resumed }.count
            return linked == Self.deviceNames.count && running == Self.deviceNames.count
        }
    }

    /// castd's warnings and errors, the first few, for the report.
    private func castdWarnings(_ daemon: Daemon) -> [String] {
        guard let path = daemon.process.logPath, let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            return []
        }
        let lines = text.split(separator: "\n").filter {
            $0.contains(" warning ") || $0.contains(" error ") || $0.contains(" critical ") || $0.contains("Fatal")
        }
        return lines.prefix(10).map(String.init) + (lines.count > 10 ? ["… and \(lines.count - 10) more"] : [])
    }
}

/// castd's resident memory as sampled: how many samples, and the largest.
final class RSSSamples: Sendable {
    private let state = Locked<(count: Int, peak: Int)>((0, 0))

    func add(_ kib: Int, counted: Bool = true) {
        state.withLock { $0 = ($0.count + (counted ? 1 : 0), max($0.peak, kib)) }
    }

    var summary: (count: Int, peak: Int) { state.withLock { $0 } }
}
