import CastClient
import CastdSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Figure 9: the C client (libcastd-client) and the Python one (the `castd` package) beside
/// castc and CastClient, against the same castd and emulated device as figures 1 to 4.
///
/// Two parts: `castd-c-status` against `castc status`, a process's whole life (as figure 1);
/// and a warm GetStatus from C (`castd-c-bench`, clients/c/bench/warm_call.c) and from Python
/// (benchmarks/python_warm_call.py) against CastClient and the raw socket floor (as figure 3).
struct ClientsFigure {
    let setup: MainSetup
    /// clients/c/build: castd-c-status and castd-c-bench (`make -C clients/c all bench`).
    let cClientDirectory: String?
    /// A Python with the castd package installed (`pip install ./clients/python`).
    let clientPython: String?
    /// benchmarks/python_warm_call.py
    let pythonScript: String

    private var environment: BenchEnvironment { setup.environment }

    func run() async throws -> Figure {
        let one = environment.runs(200, quick: 10)
        let warmup = environment.runs(3000, quick: 300)
        let calls = environment.runs(30000, quick: 1000)
        let rounds = environment.quick ? 1 : 5
        var figure = Figure(
            number: 9, title: "Clients in C and Python",
            method: """
                The same castd and emulated device as figures 1 to 4, media playing. **One-shot:** \
                `castd-c-status` (clients/c/examples/status.c: connect, one GetStatus, print a line per device, \
                exit; linked to `libcastd-client.so` and libprotobuf-c) beside `castc status`, timed as figure 1 \
                times castc (just before `posix_spawn` to just after `waitpid`), \(one) runs each, interleaved \
                with \(one) runs of `/bin/true` (each round runs the three in a rotating order, so that the load \
                of other processes falls on all three alike). castd-c-status is the floor of a one-shot client: \
                a C process, one dynamic library and protobuf-c, no runtime to start. **Warm call:** \
                `GetStatus` on a connection already open, one call at a time, as figure 3 measures it: \
                \(warmup) calls untimed on each connection, then timed calls, \(calls) per client in all, in \
                \(rounds) round\(rounds == 1 ? "" : "s") of \(calls / rounds) that take turns (Swift, C, Python, \
                Python sync, floor), each round on a fresh connection. Swift: `CastdClient.status()` in the \
                driver, call → decoded response. C: `castd-c-bench` (clients/c/bench/warm_call.c), \
                `castd_status` + `castd_free` of the response, in a process of its own. Python: \
                `benchmarks/python_warm_call.py` in a process of its own, `await client.get_status()` in its \
                asyncio loop (`castd.connect`), and the same through `castd.connect_sync` (whose calls run on \
                the client's own loop thread). Each program times its calls with its monotonic clock and prints \
                them once done. The floor: the same bytes, blocking ping-pong over a Unix socket with \
                `castd-bench floor-server` (figure 3's floor).
                """)
        var window = LoadWindow(live: [setup.daemon.pid])
        try await setup.ensurePlaying()

        let cDirectory = cClientDirectory.map { ($0 as NSString).standardizingPath }
        let cStatusTool = cDirectory.map { $0 + "/castd-c-status" }
        let cBenchTool = cDirectory.map { $0 + "/castd-c-bench" }
        func missingC(_ tool: String?) -> String? {
            guard let tool else {
                return "not given (`--c-client-dir`); `make bench` builds clients/c (`make -C clients/c all bench`)"
            }
            return FileManager.default.isExecutableFile(atPath: tool)
                ? nil : "\(tool) is not built (`make -C clients/c all bench`)"
        }

        // One-shot: castd-c-status beside castc status.
        if let missing = missingC(cStatusTool) {
            figure.problems.append("castd-c-status was not measured: \(missing).")
        } else if let cStatusTool {
            do {
                let (rows, note) = try await oneShot(cStatus: cStatusTool, runs: one)
                figure.rows += rows
                figure.notes.append(note)
            } catch {
                figure.problems.append("castd-c-status against castc status could not be measured: \(error)")
            }
        }

        // Warm call.
        let status = try await setup.controller.status()
        let (requestBytes, responseBytes) = try RPCFigure.frameSizes(status: status)
        var python: String?
        if let clientPython {
            if let problem = await pythonProblem(clientPython) {
                figure.problems.append("The Python client was not measured: \(problem).")
            } else {
                python = clientPython
            }
        } else {
            figure.problems.append(
                "The Python client was not measured: no Python given (`--client-python`); `make bench` installs "
                    + "./clients/python in .build/venv-bench.")
        }
        var cBench: String?
        if let missing = missingC(cBenchTool) {
            figure.problems.append("The C client's warm call was not measured: \(missing).")
        } else {
            cBench = cBenchTool
        }

        let floorSocket = environment.workDirectory + "/floor9.sock"
        let floorServer = try LongProcess(
            [
                selfExecutablePath(), "floor-server", "--socket", floorSocket, "--request-bytes",
                "\(requestBytes)", "--response-bytes", "\(responseBytes)",
            ],
            log: environment.workDirectory + "/floor-server9.log")
        var swift: [UInt64] = []
        var c: [UInt64] = []
        var pythonAsync: [UInt64] = []
        var pythonSync: [UInt64] = []
        var floor: [UInt64] = []
        do {
            try await waitUntil("the floor server") { SocketProbe.accepts(floorSocket) }
            let perRound = calls / rounds
            for round in 0..<rounds {
                log("figure 9: warm calls, round \(round + 1) of \(rounds)")
                swift += try await swiftLatencies(warmup: warmup, calls: perRound)
                if let tool = cBench {
                    do {
                        c += try await external(
                            [tool, "--socket", setup.socket, "--warmup", "\(warmup)", "--calls", "\(perRound)"],
                            name: "castd-c-bench", calls: perRound)
                    } catch {
                        figure.problems.append("The C client's warm call failed: \(error)")
                        cBench = nil
                        c = []
                    }
                }
                if let interpreter = python {
                    do {
                        let argv = [
                            interpreter, pythonScript, "--socket", setup.socket, "--warmup", "\(warmup)", "--calls",
                            "\(perRound)",
                        ]
                        pythonAsync += try await external(argv, name: "python_warm_call.py", calls: perRound)
                        pythonSync += try await external(
                            argv + ["--sync"], name: "python_warm_call.py --sync", calls: perRound)
                    } catch {
                        figure.problems.append("The Python client's warm call failed: \(error)")
                        python = nil
                        pythonAsync = []
                        pythonSync = []
                    }
                }
                floor += try await onThread {
                    try FloorClient.latency(
                        socket: floorSocket, requestBytes: requestBytes, responseBytes: responseBytes,
                        warmup: warmup, calls: perRound
                    ).sorted
                }
            }
        } catch {
            await floorServer.stop()
            throw error
        }
        await floorServer.stop()

        let floorSamples = Samples(floor)
        let swiftSamples = Samples(swift)
        figure.rows.append(.distribution("GetStatus, warm: Swift (`CastdClient.status()`)", swiftSamples))
        let cSamples = c.isEmpty ? nil : Samples(c)
        if let cSamples {
            figure.rows.append(.distribution("GetStatus, warm: C (`castd_status`, libcastd-client)", cSamples))
        }
        let pythonSamples = pythonAsync.isEmpty ? nil : Samples(pythonAsync)
        let pythonSyncSamples = pythonSync.isEmpty ? nil : Samples(pythonSync)
        if let pythonSamples {
            figure.rows.append(
                .distribution("GetStatus, warm: Python (`await client.get_status()`, asyncio)", pythonSamples))
        }
        if let pythonSyncSamples {
            figure.rows.append(
                .distribution("GetStatus, warm: Python (`castd.connect_sync`, loop thread)", pythonSyncSamples))
        }
        figure.rows.append(.distribution("floor: the same bytes, blocking ping-pong over a Unix socket", floorSamples))
        let clients: [(String, Samples?)] = [
            ("Swift", swiftSamples), ("C", cSamples), ("Python (asyncio)", pythonSamples),
            ("Python (sync)", pythonSyncSamples),
        ]
        for (name, samples) in clients {
            guard let samples else { continue }
            var note = "p90 \(Format.ratio(Double(samples.p90) / Double(floorSamples.p90)))"
            note += ", p99 \(Format.ratio(Double(samples.p99) / Double(floorSamples.p99)))"
            if name != "Swift" {
                note += "; its median is \(Format.ratio(Double(samples.median) / Double(swiftSamples.median))) Swift's"
            }
            figure.rows.append(
                .value(
                    "\(name) : floor (medians)", Format.ratio(Double(samples.median) / Double(floorSamples.median)),
                    note: note))
        }
        figure.notes.append(
            "One call: \(requestBytes) bytes to castd, \(responseBytes) bytes back (a message frame and a status frame)."
        )
        window.finish(live: [setup.daemon.pid])
        figure.load = window
        return figure
    }

    /// castd-c-status, castc status and /bin/true, `runs` times each, in a rotating order: the
    /// rows, and a note saying how close castc comes to castd-c-status.
    private func oneShot(cStatus: String, runs: Int) async throws -> ([Row], String) {
        let castcStatus = [environment.castc, "status", "--socket", setup.socket]
        let cStatusArgv = [cStatus, "--socket", setup.socket]
        try await checkShows(cStatusArgv, name: "castd-c-status")
        try await checkShows(castcStatus, name: "castc status")
        let argvs = [cStatusArgv, castcStatus, ["/bin/true"]]
        let errors = environment.workDirectory + "/clients9.err"
        // Warm: the page cache, the dynamic loader's, castd's first calls.
        for argv in argvs { for _ in 0..<5 { _ = try await onThread { try Spawn.timed(argv, stderr: .file(errors)) } } }
        let times = try await onThread {
            var times: [[UInt64]] = Array(repeating: [], count: argvs.count)
            for round in 0..<runs {
                for step in 0..<argvs.count {
                    let which = (round + step) % argvs.count
                    let run = try Spawn.timed(argvs[which], stderr: .file(errors))
                    guard run.status == 0 else {
                        let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
                        throw BenchError(
                            "`\(argvs[which].joined(separator: " "))` exited with \(run.status): \(text.suffix(2000))")
                    }
                    times[which].append(run.elapsed)
                }
            }
            return times
        }
        let c = Samples(times[0])
        let castc = Samples(times[1])
        let spawn = Samples(times[2])
        let ratio = Double(castc.median) / Double(c.median)
        let difference = Int64(castc.median) - Int64(c.median)
        let differenceP90 = Int64(castc.p90) - Int64(c.p90)
        func moreOrLess(_ nanoseconds: Int64) -> String {
            Format.fixed(Double(nanoseconds.magnitude) / 1e6, 2) + " ms " + (nanoseconds >= 0 ? "more" : "less")
        }
        let note =
            ("How close castc comes to the floor of a one-shot client: `castc status` takes \(Format.ratio(ratio)) "
                + "the time of `castd-c-status` (medians), \(moreOrLess(difference)) (p90: "
                + "\(Format.ratio(Double(castc.p90) / Double(c.p90))), \(moreOrLess(differenceP90))). "
                + "Above a bare spawn (`/bin/true`): castd-c-status \(milliseconds(Int64(c.median) - Int64(spawn.median))), "
                + "castc \(milliseconds(Int64(castc.median) - Int64(spawn.median))).")
        let rows: [Row] = [
            .distribution("`castd-c-status`, process start → exit (the C floor of a one-shot client)", c),
            .distribution("`castc status`, process start → exit", castc),
            .distribution("`/bin/true`, spawn → exit (the floor of any command)", spawn),
            .value(
                "castc status : castd-c-status (medians)", Format.ratio(ratio),
                note: "castc \(milliseconds(difference)) (p90 \(milliseconds(differenceP90)))"),
        ]
        return (rows, note)
    }

    /// "+0.42 ms", "-0.05 ms"
    private func milliseconds(_ nanoseconds: Int64) -> String {
        (nanoseconds >= 0 ? "+" : "−") + Format.fixed(Double(nanoseconds.magnitude) / 1e6, 2) + " ms"
    }

    /// Runs a status command once: it must exit 0 and show Bench TV playing.
    private func checkShows(_ argv: [String], name: String) async throws {
        let output = environment.workDirectory + "/clients9-check.out"
        let run = try await onThread {
            try Spawn.timed(argv, stdout: .file(output), stderr: .file(output + ".err"))
        }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
        guard run.status == 0, text.contains("Bench TV"), text.lowercased().contains("playing") else {
            throw BenchError("\(name) does not show Bench TV playing (exit \(run.status)):\n\(text)\(errors)")
        }
    }

    /// Why `python` cannot run the warm-call script, or nil.
    private func pythonProblem(_ python: String) async -> String? {
        guard FileManager.default.isExecutableFile(atPath: python) else { return "\(python) is not executable" }
        guard FileManager.default.fileExists(atPath: pythonScript) else { return "\(pythonScript) is missing" }
        let errors = environment.workDirectory + "/clients9-python.err"
        let run = try? await onThread { try Spawn.timed([python, "-c", "import castd"], stderr: .file(errors)) }
        guard let run, run.status == 0 else {
            let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            return "`\(python) -c 'import castd'` failed (`pip install ./clients/python`): \(text.suffix(500))"
        }
        return nil
    }

    /// Figure 3's measurement: the driver's CastdClient, one call at a time.
    private func swiftLatencies(warmup: Int, calls: Int) async throws -> [UInt64] {
        let client = try await setup.daemon.connect()
        do {
            for _ in 0..<warmup { _ = try await client.status() }
            var latencies: [UInt64] = []
            latencies.reserveCapacity(calls)
            for _ in 0..<calls {
                let started = monotonicNanos()
                _ = try await client.status()
                latencies.append(monotonicNanos() - started)
            }
            await client.close()
            return latencies
        } catch {
            await client.close()
            throw error
        }
    }

    /// Runs a warm-call program and reads its latencies: one a line, in microseconds.
    private func external(_ argv: [String], name: String, calls: Int) async throws -> [UInt64] {
        let output = environment.workDirectory + "/clients9-latencies.out"
        let errors = environment.workDirectory + "/clients9-latencies.err"
        let run = try await onThread { try Spawn.timed(argv, stdout: .file(output), stderr: .file(errors)) }
        guard run.status == 0 else {
            let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            throw BenchError("\(name) exited with \(run.status): \(text.suffix(2000))")
        }
        let text = try String(contentsOfFile: output, encoding: .utf8)
        var latencies: [UInt64] = []
        latencies.reserveCapacity(calls)
        for line in text.split(separator: "\n") {
            guard let microseconds = Double(line), microseconds >= 0 else {
                throw BenchError("\(name) printed \"\(line.prefix(80))\", not a latency in microseconds")
            }
            latencies.append(UInt64((microseconds * 1000).rounded()))
        }
        guard latencies.count == calls else {
            throw BenchError("\(name) printed \(latencies.count) latencies, not \(calls)")
        }
        return latencies
    }
}
