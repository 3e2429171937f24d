import CastClient
import CastdSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What figures 1 to 4 share: the emulated "Bench TV" on the ports of a real device (so that
/// pychromecast and catt reach it as they reach a Chromecast), and one castd holding it with
/// the Default Media Receiver playing.
struct MainSetup: Sendable {
    let environment: BenchEnvironment
    let device: HostedEmulator
    let daemon: Daemon
    /// The driver's own client: sets the scene (play before each pause), triggers fan-out.
    let controller: CastdClient

    var socket: String { daemon.socketPath }
    var uuid: String {
        let hex = Array(device.deviceID)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
    }

    static let mediaURL = "http://media.example.invalid/castd-bench/big-buck-bunny.mp4"

    /// Makes sure media plays, and waits for castd to know it (so that the next command starts
    /// from a playing player).
    func ensurePlaying() async throws {
        let status = try await controller.play()
        if status.playerState != .playing {
            try await waitUntil("the media to play") {
                try await controller.requestMediaStatus().playerState == .playing
            }
        }
    }
}

/// Figures 1 and 2: a command's whole life, castc against the Python peers, in one run.
struct StartupFigures {
    let setup: MainSetup

    private var environment: BenchEnvironment { setup.environment }
    private var castcStatus: [String] { [environment.castc, "status", "--socket", setup.socket] }
    private var castcPause: [String] { [environment.castc, "pause", "--socket", setup.socket] }

    /// Runs a short command `count` times on a thread of its own; fails on the first non-zero
    /// exit, with its standard error.
    private func timedRuns(_ argv: [String], count: Int) async throws -> [Spawn.TimedRun] {
        let errors = environment.workDirectory + "/timed.err"
        let runs = try await onThread {
            try (0..<count).map { _ in try Spawn.timed(argv, stderr: .file(errors)) }
        }
        if let failed = runs.first(where: { $0.status != 0 }) {
            let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            throw BenchError("`\(argv.joined(separator: " "))` exited with \(failed.status): \(text.suffix(2000))")
        }
        return runs
    }

    /// A pause command run `count` times, media playing before each: process start to the
    /// PAUSE reaching the emulator, and to the command's exit.
    private func timedPauses(_ argv: [String], count: Int) async throws -> (arrival: Samples, exit: Samples) {
        var arrivals: [UInt64] = []
        var exits: [UInt64] = []
        let errors = environment.workDirectory + "/pause.err"
        for _ in 0..<count {
            try await setup.ensurePlaying()
            let run = try await onThread { try Spawn.timed(argv, stderr: .file(errors)) }
            guard run.status == 0 else {
                let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
                throw BenchError("`\(argv.joined(separator: " "))` exited with \(run.status): \(text.suffix(2000))")
            }
            guard let arrival = setup.device.log.firstPause(after: run.started) else {
                throw BenchError("`\(argv.joined(separator: " "))` exited 0 but no PAUSE reached the emulator")
            }
            arrivals.append(arrival - run.started)
            exits.append(run.elapsed)
        }
        return (Samples(arrivals), Samples(exits))
    }

    /// Checks once that `castc status` shows what the figure claims it shows.
    private func checkStatusOutput() async throws {
        let output = environment.workDirectory + "/castc-status.out"
        let argv = castcStatus
        let run = try await onThread { try Spawn.timed(argv, stdout: .file(output), stderr: .file(output + ".err")) }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard run.status == 0, text.contains("Bench TV"), text.lowercased().contains("playing") else {
            throw BenchError("castc status does not show Bench TV playing (exit \(run.status)):\n\(text)")
        }
    }

    func run() async throws -> (Figure, Figure) {
        var one = Figure(
            number: 1, title: "castc: a command's whole life",
            method: """
                `castc status` and `castc pause` as a shell runs them: timed by the driver from just before \
                `posix_spawn` to just after `waitpid` returns (status), and to the PAUSE arriving at the emulated \
                device (pause; the emulator runs in the driver and stamps each message as its TLS framing decodes \
                it, on the same monotonic clock). castd already holds the device ("Bench TV", an emulated \
                Chromecast on \(setup.device.address)) with the Default Media Receiver playing; before each pause \
                the driver resumes playback through its own CastClient, untimed. `castc status` prints the daemon, \
                the device, its session and the media, as a user sees them. A spawn of `/bin/true`, timed the \
                same way, is the floor of any command.
                """)
        var two = Figure(
            number: 2, title: "The same operations by pychromecast and catt",
            method: """
                pychromecast 14 and catt from PyPI (in `.build/venv-bench`), against the same emulated device in \
                the same run, with castd still connected to it. Each operation connects afresh, as every run of a \
                pychromecast script or a catt command does: pychromecast by host and port \
                (`get_chromecast_from_host`, which reads the device's `eureka_info` over HTTPS first), waiting for \
                the receiver and the media status; `pause` then sends PAUSE. "process" rows start a new Python \
                process per operation (`benchmarks/peers.py once …`) and are timed like castc, from spawn to exit \
                (status) or to the PAUSE at the emulator (pause). "library" rows pay the interpreter and the \
                imports once (`peers.py serve`): timed from writing the command to the script's answer (status) \
                or to the PAUSE at the emulator, leaving out the disconnect that follows. catt is `catt -d HOST \
                status|pause`, timed like castc.
                """)
        let castcRuns = environment.runs(200, quick: 10)
        let pauseRuns = environment.runs(60, quick: 5)
        try await checkStatusOutput()
        _ = try await timedRuns(castcStatus, count: 5)  // warm: the page cache, castd's first calls

        var window = LoadWindow(live: [setup.daemon.pid])
        let spawnFloor = Samples(try await timedRuns(["/bin/true"], count: castcRuns).map(\.elapsed))
        let status = Samples(try await timedRuns(castcStatus, count: castcRuns).map(\.elapsed))
        let pause = try await timedPauses(castcPause, count: pauseRuns)
        window.finish(live: [setup.daemon.pid])
        one.load = window
        one.rows.append(
            .distribution(
                "`castc status`, process start → exit", status, target: "median ≤ 5 ms",
                met: status.median <= 5_000_000))
        one.rows.append(.distribution("`castc pause`, process start → PAUSE at the device", pause.arrival))
        one.rows.append(.distribution("`castc pause`, process start → exit", pause.exit))
        one.rows.append(.distribution("`/bin/true`, spawn → exit (the floor of any command)", spawnFloor))

        // Figure 2.
        var window2 = LoadWindow(live: [setup.daemon.pid])
        let peerRuns = environment.runs(12, quick: 2)
        var peerRows: [Row] = []
        var pychromecastLibraryStatus: Samples?
        if let python = environment.python {
            let script = environment.peersScript
            let host = setup.device.endpoints.host
            let port = "\(setup.device.endpoints.port)"
            do {
                let interpreter = Samples(try await timedRuns([python, "-c", "pass"], count: peerRuns).map(\.elapsed))
                let imports = Samples(
                    try await timedRuns([python, "-c", "import pychromecast"], count: peerRuns).map(\.elapsed))
                let onceStatus = Samples(
                    try await timedRuns([python, script, "once", "status", host, port, setup.uuid], count: peerRuns)
                        .map(\.elapsed))
                let oncePause = try await timedPauses(
                    [python, script, "once", "pause", host, port, setup.uuid], count: peerRuns)
                let library = try await PythonServe.measure(
                    setup: setup, python: python, runs: environment.runs(20, quick: 2))
                pychromecastLibraryStatus = library.status
                peerRows += [
                    .distribution("pychromecast status, library (connect → receiver and media status)", library.status),
                    .distribution("pychromecast pause, library (connect → PAUSE at the device)", library.pause),
                    .distribution("pychromecast status, process (spawn → exit)", onceStatus),
                    .distribution("pychromecast pause, process (spawn → PAUSE at the device)", oncePause.arrival),
                    .distribution("pychromecast pause, process (spawn → exit)", oncePause.exit),
                    .distribution("`python -c pass` (the interpreter alone)", interpreter),
                    .distribution("`python -c 'import pychromecast'`", imports),
                ]
                let libraryRatio = Double(library.status.median) / Double(status.median)
                let processRatio = Double(onceStatus.median) / Double(status.median)
                peerRows.append(
                    .value(
                        "castc status : pychromecast status, library (medians)",
                        "castc \(Format.ratio(libraryRatio)) faster", target: "≥ 100× faster", met: libraryRatio >= 100)
                )
                peerRows.append(
                    .value(
                        "castc status : pychromecast status, process (medians)",
                        "castc \(Format.ratio(processRatio)) faster"))
                peerRows.append(
                    .value(
                        "castc pause : pychromecast pause, library (medians, to PAUSE at the device)",
                        "castc \(Format.ratio(Double(library.pause.median) / Double(pause.arrival.median))) faster"))
                peerRows.append(
                    .value(
                        "castc pause : pychromecast pause, process (medians, to PAUSE at the device)",
                        "castc \(Format.ratio(Double(oncePause.arrival.median) / Double(pause.arrival.median))) faster")
                )
            } catch {
                two.problems.append("pychromecast could not be measured: \(error)")
            }
        } else {
            two.problems.append(
                "pychromecast was not measured: no Python virtualenv (`--python`); `make bench` prepares one.")
        }
        if let catt = environment.catt {
            let host = setup.device.endpoints.host
            do {
                let cattStatus = Samples(
                    try await timedRuns([catt, "-d", host, "status"], count: peerRuns).map(\.elapsed))
                let cattPause = try await timedPauses([catt, "-d", host, "pause"], count: peerRuns)
                peerRows += [
                    .distribution("`catt -d \(host) status` (spawn → exit)", cattStatus),
                    .distribution("`catt -d \(host) pause` (spawn → PAUSE at the device)", cattPause.arrival),
                    .distribution("`catt -d \(host) pause` (spawn → exit)", cattPause.exit),
                    .value(
                        "castc status : catt status (medians)",
                        "castc \(Format.ratio(Double(cattStatus.median) / Double(status.median))) faster"),
                    .value(
                        "castc pause : catt pause (medians, to PAUSE at the device)",
                        "castc \(Format.ratio(Double(cattPause.arrival.median) / Double(pause.arrival.median))) faster"),
                ]
            } catch {
                two.problems.append("catt could not be measured against the emulator: \(error)")
            }
        } else {
            two.problems.append(
                "catt was not measured: not installed (`--catt`); `make bench` installs it in the virtualenv.")
        }
        window2.finish(live: [setup.daemon.pid])
        two.load = window2
        two.rows = peerRows
        if pychromecastLibraryStatus == nil {
            two.notes.append("castc's ratio to pychromecast (target ≥ 100×) could not be computed in this run.")
        }
        two.notes.append(
            "The target (castc ≥ 100× faster than pychromecast's connect-and-status) is judged against the library "
                + "rows, the kinder comparison for pychromecast: they leave out its interpreter start and imports, "
                + "which every real run of a script or of catt pays.")
        return (one, two)
    }
}

/// `peers.py serve`: pychromecast imported once, one fresh connection per operation.
enum PythonServe {
    static func measure(setup: MainSetup, python: String, runs: Int) async throws -> (status: Samples, pause: Samples) {
        let environment = setup.environment
        let process = try LongProcess(
            [
                python, environment.peersScript, "serve", setup.device.endpoints.host, "\(setup.device.endpoints.port)",
                setup.uuid,
            ],
            stdin: .pipe, stdout: .pipe, stderr: .file(environment.workDirectory + "/peers-serve.err"))
        do {
            let result = try await measure(setup: setup, process: process, runs: runs)
            await process.stop()
            process.closePipes()
            return result
        } catch {
            await process.stop()
            process.closePipes()
            throw error
        }
    }

    private static func measure(setup: MainSetup, process: LongProcess, runs: Int) async throws -> (
        status: Samples, pause: Samples
    ) {
        let environment = setup.environment
        let reader = LineReader(fd: process.stdout!)
        let input = process.stdin!
        let ready = await onThread { reader.next() }
        guard ready == "ready" else {
            let text =
                (try? String(contentsOfFile: environment.workDirectory + "/peers-serve.err", encoding: .utf8)) ?? ""
            throw BenchError("peers.py serve did not start: \(ready ?? "EOF") \(text.suffix(1500))")
        }
        /// One operation: (written, answered), after the script has also disconnected.
        @Sendable func operation(_ name: String) throws -> (UInt64, UInt64) {
            let written = monotonicNanos()
            guard writeAll(input, name + "\n") else { throw BenchError("peers.py serve: stdin closed") }
            guard let answer = reader.next() else { throw BenchError("peers.py serve: ended") }
            let answered = monotonicNanos()
            guard answer.hasPrefix("ok") else { throw BenchError("peers.py serve \(name): \(answer)") }
            guard reader.next() == "idle" else { throw BenchError("peers.py serve: no idle after \(name)") }
            return (written, answered)
        }
        _ = try await onThread { try operation("status") }  // warm: first connection, lazy imports
        var status: [UInt64] = []
        for _ in 0..<runs {
            let (written, answered) = try await onThread { try operation("status") }
            status.append(answered - written)
        }
        var pause: [UInt64] = []
        for _ in 0..<runs {
            try await setup.ensurePlaying()
            let (written, _) = try await onThread { try operation("pause") }
            guard let arrival = setup.device.log.firstPause(after: written) else {
                throw BenchError("pychromecast answered the pause but no PAUSE reached the emulator")
            }
            pause.append(arrival - written)
        }
        _ = writeAll(input, "quit\n")
        return (Samples(status), Samples(pause))
    }
}
