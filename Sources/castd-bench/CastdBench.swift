import ArgumentParser
import CastClient
import CastEmulator
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

@main
struct CastdBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "castd-bench",
        abstract:
            "Measure castd against pychromecast and catt, and against the limits of the machine; write BENCHMARKS.md.",
        discussion: """
            Run it through `make bench` (scripts/bench.sh), which builds everything in release mode, prepares \
            the Python peers and passes the paths. The figures:
              1  castc status / castc pause: process start to exit, and to the PAUSE at the device
              2  the same by pychromecast (library and process) and catt, in the same run
              3  warm GetStatus latency and throughput (1, 8, 64 clients) against a raw Unix-socket floor
              4  fan-out of a MEDIA_STATUS to 1, 10 and 100 watchers
              5  memory and idle CPU with 0, 1, 50 and 200 devices
              6  socket-activated cold start (systemd-socket-activate)
              7  discovery: avahi-publish to castd's device list
              8  an mDNS flood: castd's CPU per fake id, and its memory once they leave
              9  the C and Python clients: castd-c-status beside castc status (process start to exit), and a
                 warm GetStatus from C and Python beside CastClient and the socket floor
              10 cast-mpris: a change at the device to the PropertiesChanged signal, and its cost
              11 your own files: castd's media server against python3 -m http.server (1 and 8 readers of 1 GiB),
                 its memory meanwhile, and castc load FILE to the device's first fetch

            Examples:
              castd-bench --bin .build/release --python .build/venv-bench/bin/python --catt .build/venv-bench/bin/catt \
                --c-client-dir clients/c/build --client-python .build/venv-bench/bin/python
              castd-bench --quick --only 1,3        a smoke run of two figures

            `castd-bench soak` (make soak) is the soak test: clients, mixed requests and link drops, into SOAK.md.
            """,
        subcommands: [Run.self, SoakCommand.self, CallsCommand.self, FloorServerCommand.self],
        defaultSubcommand: Run.self
    )
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run the figures (the default).")

    @Option(help: ArgumentHelp("Where castd and castc are. Default: beside castd-bench.", valueName: "dir"))
    var bin: String?

    @Option(help: ArgumentHelp("The Markdown file to write.", valueName: "path"))
    var output = "BENCHMARKS.md"

    @Option(help: ArgumentHelp("A Python with pychromecast 14 (figure 2).", valueName: "path"))
    var python: String?

    @Option(help: ArgumentHelp("The catt command (figure 2).", valueName: "path"))
    var catt: String?

    @Option(help: ArgumentHelp("The peers script.", valueName: "path"))
    var peers = "benchmarks/peers.py"

    @Option(
        name: .customLong("c-client-dir"),
        help: ArgumentHelp(
            "Where the C client's castd-c-status and castd-c-bench are (`make -C clients/c all bench`: clients/c/build; figure 9).",
            valueName: "path"))
    var cClientDirectory: String?

    @Option(
        name: .customLong("client-python"),
        help: ArgumentHelp(
            "A Python with the castd package installed (`pip install ./clients/python`; figure 9).", valueName: "path"))
    var clientPython: String?

    @Option(
        name: .customLong("python-warm-call"),
        help: ArgumentHelp("The Python client's warm-call script (figure 9).", valueName: "path"))
    var pythonWarmCall = "benchmarks/python_warm_call.py"

    @Option(
        name: .customLong("closing-note"),
        help: ArgumentHelp(
            "A Markdown file appended to the report as it is (the hand-written analysis).", valueName: "path"))
    var closingNote = "benchmarks/closing-note.md"

    @Flag(help: "Few samples and short windows: a smoke run of the suite (about a minute).")
    var quick = false

    @Option(help: ArgumentHelp("Only these figures, e.g. 1,3,5.", valueName: "list"))
    var only: String?

    @Option(
        name: .customLong("peer-host"),
        help: ArgumentHelp(
            "The loopback address where the emulated device of figures 1-4 listens on 8009, 8008 and 8443 (the ports pychromecast and catt expect). Others are tried if it is taken.",
            valueName: "address"))
    var peerHost = "127.0.0.3"

    @OptionGroup var reportOptions: ReportOptions

    @Flag(name: .customLong("keep-work"), help: "Keep the work directory (logs of castd and the peers).")
    var keepWork = false

    func validate() throws {
        if let only {
            for part in only.split(separator: ",") {
                guard let number = Int(part), (1...11).contains(number) else {
                    throw ValidationError("--only takes figure numbers 1 to 11, like 1,3,5")
                }
            }
        }
    }

    var figures: Set<Int> {
        guard let only else { return Set(1...11) }
        return Set(only.split(separator: ",").compactMap { Int($0) })
    }

    func run() async throws {
        let started = monotonicNanos()
        let binDirectory = bin ?? (selfExecutablePath() as NSString).deletingLastPathComponent
        let work = "/tmp/castd-bench-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        // 0755 whatever the umask: castd binds its socket only in a directory others cannot write.
        try FileManager.default.createDirectory(
            atPath: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        _ = FileManager.default.createFile(atPath: work + "/castd.toml", contents: Data())
        defer {
            if keepWork {
                print("work directory kept: \(work)")
            } else {
                try? FileManager.default.removeItem(atPath: work)
            }
        }
        var environment = BenchEnvironment(
            binDirectory: binDirectory, workDirectory: work, python: python, catt: catt, peersScript: peers,
            quick: quick, peerHost: peerHost)
        for tool in [environment.castd, environment.castc] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw ValidationError("\(tool) is not built (swift build -c release), or give --bin")
        }
        if let python, !FileManager.default.isExecutableFile(atPath: python) { environment.python = nil }
        if let catt, !FileManager.default.isExecutableFile(atPath: catt) { environment.catt = nil }

        let machine = MachineDescription.current(swiftVersion: reportOptions.swiftVersion)
        var overall = LoadWindow(live: [])
        log("castd-bench: \(machine.cores) cores, load \(overall.loadBefore); work directory \(work)")
        let authority = try EmulatorDeviceAuthority.loadOrCreate(directory: environment.authorityDirectory)
        var results: [Figure] = []
        let wanted = figures

        // Figures 1-4, 9 and 10 share the emulated Bench TV and one castd holding it.
        if !wanted.isDisjoint(with: [1, 2, 3, 4, 9, 10]) {
            do {
                let setup = try await startMainSetup(environment, authority: authority)
                do {
                    if !wanted.isDisjoint(with: [1, 2]) {
                        log("figures 1 and 2: castc, pychromecast, catt")
                        let (one, two) = try await StartupFigures(setup: setup).run()
                        if wanted.contains(1) { results.append(one) }
                        if wanted.contains(2) { results.append(two) }
                    }
                    if wanted.contains(3) {
                        log("figure 3: RPC latency and throughput")
                        results.append(try await figure(3, "Warm RPC") { try await RPCFigure(setup: setup).run() })
                    }
                    if wanted.contains(4) {
                        log("figure 4: fan-out")
                        results.append(try await figure(4, "Fan-out") { try await FanoutFigure(setup: setup).run() })
                    }
                    if wanted.contains(9) {
                        log("figure 9: the C and Python clients")
                        results.append(
                            try await figure(9, "Clients in C and Python") {
                                try await ClientsFigure(
                                    setup: setup, cClientDirectory: cClientDirectory, clientPython: clientPython,
                                    pythonScript: pythonWarmCall
                                ).run()
                            })
                    }
                    if wanted.contains(10) {
                        log("figure 10: cast-mpris")
                        results.append(
                            try await figure(10, "The desktop's media controls (cast-mpris)") {
                                try await MPRISFigure(setup: setup).run()
                            })
                    }
                } catch {
                    results.append(
                        Figure(number: 1, title: "Figures 1-4, 9 and 10", method: "", problems: ["failed: \(error)"]))
                }
                await setup.controller.close()
                await setup.daemon.stop()
                await setup.device.shutdown()
            } catch {
                results.append(
                    Figure(
                        number: 1, title: "Figures 1-4, 9 and 10", method: "", problems: ["could not set up: \(error)"])
                )
            }
        }
        if wanted.contains(5) {
            log("figure 5: scale")
            results.append(
                try await figure(5, "Scale") {
                    try await ScaleFigure(environment: environment, authority: authority).run()
                })
        }
        if !wanted.isDisjoint(with: [6, 7]) {
            let device = try await HostedEmulator.start(name: "Bench TV", authority: authority, tapped: false)
            if wanted.contains(6) {
                log("figure 6: socket-activated cold start")
                results.append(
                    try await figure(6, "Cold start") {
                        try await ColdStartFigure(environment: environment, deviceAddress: device.address).run()
                    })
            }
            if wanted.contains(7) {
                log("figure 7: discovery")
                results.append(
                    try await figure(7, "Discovery") {
                        try await DiscoveryFigure(environment: environment, device: device).run()
                    })
            }
            await device.shutdown()
        }
        if wanted.contains(11) {
            log("figure 11: your own files")
            results.append(
                try await figure(11, "Your own files") {
                    try await FilesFigure(environment: environment, authority: authority).run()
                })
        }
        if wanted.contains(8) {
            log("figure 8: mDNS flood")
            results.append(try await figure(8, "mDNS flood") { try await FloodFigure(environment: environment).run() })
        }
        overall.finish(live: [])

        let note = try? String(contentsOfFile: closingNote, encoding: .utf8)
        var command = "castd-bench" + (quick ? " --quick" : "")
        if let only { command += " --only \(only)" }
        let report = Report(
            machine: machine, buildInfo: reportOptions.buildInfo, quick: quick, command: command, overall: overall,
            figures: results.sorted { $0.number < $1.number }, closingNote: note,
            wallSeconds: Double(monotonicNanos() - started) / 1e9)
        try report.markdown().write(toFile: output, atomically: true, encoding: .utf8)
        log("wrote \(output) in \(Format.fixed(Double(monotonicNanos() - started) / 1e9, 0)) s")
    }

    /// A figure that failed is reported as such, and the run goes on.
    private func figure(_ number: Int, _ title: String, _ body: () async throws -> Figure) async throws -> Figure {
        do {
            return try await body()
        } catch {
            log("figure \(number) failed: \(error)")
            return Figure(number: number, title: title, method: "", problems: ["failed: \(error)"])
        }
    }

    /// The emulated Bench TV on the ports of a real device, castd holding it, media playing.
    private func startMainSetup(
        _ environment: BenchEnvironment, authority: EmulatorDeviceAuthority
    ) async throws -> MainSetup {
        var device: HostedEmulator?
        var refusals: [String] = []
        let candidates = [environment.peerHost] + (4...9).map { "127.0.0.\($0)" }.filter { $0 != environment.peerHost }
        for host in candidates {
            do {
                device = try await HostedEmulator.start(
                    name: "Bench TV", host: host, port: 8009, httpPort: 8008, httpsPort: 8443, authority: authority)
                break
            } catch {
                refusals.append("\(host): \(error)")
            }
        }
        guard let device else {
            throw BenchError("no loopback address had 8009, 8008 and 8443 free: \(refusals.joined(separator: "; "))")
        }
        if device.endpoints.host != environment.peerHost {
            log("\(environment.peerHost) is taken; the emulated device listens on \(device.endpoints.host)")
        }
        let daemon: Daemon
        do {
            daemon = try await Daemon.start(
                environment, name: "main", arguments: ["--no-discovery", "--device", "Bench TV=\(device.address)"])
        } catch {
            await device.shutdown()
            throw error
        }
        do {
            let controller = try await daemon.connect()
            _ = try await controller.startSession()
            _ = try await controller.load(
                CastdMediaInformation(url: MainSetup.mediaURL, contentType: "video/mp4", title: "Big Buck Bunny"))
            let setup = MainSetup(environment: environment, device: device, daemon: daemon, controller: controller)
            try await setup.ensurePlaying()
            return setup
        } catch {
            await daemon.stop()
            await device.shutdown()
            throw error
        }
    }
}

/// A load for profiling castd (see BENCHMARKS.md, "Profiling"): GetStatus calls, back to back,
/// from several connections, optionally with watchers open.
struct CallsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calls",
        abstract: "Make GetStatus calls to a running castd (a load to profile it under).",
        discussion: """
            Example, counting castd's instructions per call with callgrind:
              valgrind --tool=callgrind --callgrind-out-file=castd.cg castd --socket /tmp/c.sock … &
              castd-bench calls --socket /tmp/c.sock --count 200           # warm up
              callgrind_control -z                                          # zero the counters
              castd-bench calls --socket /tmp/c.sock --count 1000
              callgrind_control -d                                          # dump: 1000 calls
            """)

    @Option(help: ArgumentHelp("castd's socket.", valueName: "path"))
    var socket: String

    @Option(help: "Calls per connection.")
    var count = 1000

    @Option(help: "Connections, each making `count` calls one after the other.")
    var connections = 1

    func run() async throws {
        let started = monotonicNanos()
        var clients: [CastdClient] = []
        for _ in 0..<connections { clients.append(try await CastdClient.connect(socketPath: socket)) }
        let count = self.count
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in clients {
                group.addTask { for _ in 0..<count { _ = try await client.status() } }
            }
            try await group.waitForAll()
        }
        for client in clients { await client.close() }
        let seconds = Double(monotonicNanos() - started) / 1e9
        print("\(count * connections) calls in \(Format.fixed(seconds, 3)) s")
    }
}

/// The floor of figure 3, in a process of its own.
struct FloorServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "floor-server", abstract: "The raw Unix-socket echo of figure 3 (started by the driver).",
        shouldDisplay: false)

    @Option var socket: String
    @Option(name: .customLong("request-bytes")) var requestBytes: Int
    @Option(name: .customLong("response-bytes")) var responseBytes: Int

    func run() throws {
        try FloorServer.serve(socket: socket, requestBytes: requestBytes, responseBytes: responseBytes)
    }
}

func log(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// This executable, as /proc/self/exe names it.
func selfExecutablePath() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return CommandLine.arguments[0] }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
