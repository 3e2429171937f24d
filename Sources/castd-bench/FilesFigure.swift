import CastClient
import CastEmulator
import CastdSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Figure 11: the user's own files, served by castd's media server.
struct FilesFigure {
    let environment: BenchEnvironment
    let authority: EmulatorDeviceAuthority

    static let fileBytes = 1 << 30
    static let readers = 8

    func run() async throws -> Figure {
        var figure = Figure(
            number: 11, title: "Your own files: castd's media server",
            method: """
                A castd of its own with one emulated device that fetches media as a TV does (`--fetch-media`: the \
                start of the file at LOAD, BUFFERING until it has it). A file of 1 GiB (random bytes, in the page \
                cache: a second read of it is from memory) is loaded with `castc load FILE --no-autoplay`, so that \
                the device reads only its first 64 KiB. **Throughput:** a reader of the bench's own fetches the URL \
                castd gave the device, whole, over loopback, and has the kernel discard the body (`recv` with \
                `MSG_TRUNC`: curl, copying every byte out, was the bottleneck of both servers): one reader, then 8 \
                at once (the aggregate: bytes over the wall time of all 8); the same file served by `python3 -m \
                http.server` is fetched the same way in the same run, interleaved (castd, Python, castd, …). Each \
                server's CPU time (user and system, /proc/PID/stat) over a one-reader fetch, per GiB. The floor: \
                the same file from a blocking `sendfile(2)` loop on a thread of the bench (a minimal HTTP head, \
                nothing else), fetched the same way: what the kernel spends on TCP over loopback. \
                castd's resident memory (VmRSS) is sampled \
                every 20 ms while its 8 readers stream. **castc load → the device:** `castc load FILE` on a 10 MiB \
                file, from just before posix_spawn to the LOAD reaching the device (the emulator's tap), and to the \
                device's MEDIA_STATUS that leaves BUFFERING (it has fetched the file's first 64 KiB from castd).
                """)
        let device = try await HostedEmulator.start(name: "Files TV", authority: authority, fetchMedia: true)
        defer { Task { await device.shutdown() } }
        let daemon = try await Daemon.start(
            environment, name: "files",
            arguments: ["--no-discovery", "--device", "Files TV=\(device.address)"])
        defer { Task { await daemon.stop() } }
        let big = environment.workDirectory + "/files-1GiB.mp4"
        let size = environment.quick ? 64 << 20 : Self.fileBytes
        try Self.write(path: big, bytes: size)
        defer { try? FileManager.default.removeItem(atPath: big) }
        let small = environment.workDirectory + "/files-10MiB.mp4"
        try Self.write(path: small, bytes: 10 << 20)
        let pythonServer = try await PythonFileServer.start(directory: environment.workDirectory)
        defer { Task { await pythonServer.process.stop() } }

        var window = LoadWindow(live: [daemon.pid])
        let url = try await load(big, daemon: daemon, device: device)
        let pythonURL = "http://127.0.0.1:\(pythonServer.port)/files-1GiB.mp4"
        let floor = try SendfileFloor(path: big)
        defer { floor.stop() }
        let floorURL = "http://127.0.0.1:\(floor.port)/"
        let rounds = environment.runs(5, quick: 1)
        var castd = Fetches()
        var python = Fetches()
        var bare = Fetches()
        var rssBefore = daemon.rssKiB ?? 0
        var rssPeak = 0
        let pythonPID = pythonServer.process.pid
        // Once through each, untimed: the file in the page cache, both servers warm.
        _ = try await Self.fetch(url, readers: 1, bytes: size, server: daemon.pid)
        _ = try await Self.fetch(pythonURL, readers: 1, bytes: size, server: pythonPID)
        rssBefore = daemon.rssKiB ?? rssBefore
        for _ in 0..<rounds {
            castd.one.append(try await Self.fetch(url, readers: 1, bytes: size, server: daemon.pid))
            python.one.append(try await Self.fetch(pythonURL, readers: 1, bytes: size, server: pythonPID))
            var floorFetch = try await Self.fetch(floorURL, readers: 1, bytes: size, server: nil)
            floorFetch.cpuSeconds = floor.lastCPUSeconds
            bare.one.append(floorFetch)
            let sampler = RSSSampler(pid: daemon.pid)
            castd.many.append(try await Self.fetch(url, readers: Self.readers, bytes: size, server: daemon.pid))
            rssPeak = max(rssPeak, await sampler.stop())
            python.many.append(try await Self.fetch(pythonURL, readers: Self.readers, bytes: size, server: pythonPID))
        }
        let gb = { (value: Double) in Format.fixed(value / 1e9, 2) + " GB/s" }
        let ratio = { (castd: Double, python: Double) in Format.fixed(castd / python, 1) + "×" }
        figure.rows.append(
            .value(
                "1 reader: castd", gb(castd.oneRate), target: "≥ 1 GB/s and ≥ 3× Python",
                met: castd.oneRate >= 1e9 && castd.oneRate >= 3 * python.oneRate,
                note:
                    "Python \(gb(python.oneRate)): \(ratio(castd.oneRate, python.oneRate)); a bare sendfile loop \(gb(bare.oneRate))"
            ))
        figure.rows.append(
            .value(
                "8 readers: castd, all together", gb(castd.manyRate), target: "≥ 3× Python",
                met: castd.manyRate >= 3 * python.manyRate,
                note: "Python \(gb(python.manyRate)): \(ratio(castd.manyRate, python.manyRate))"))
        let gib = Double(size) / Double(1 << 30)
        figure.rows.append(
            .value(
                "The server's CPU time per GiB sent (1 reader): castd",
                Format.fixed(castd.oneCPU / gib, 2) + " s",
                note:
                    "Python \(Format.fixed(python.oneCPU / gib, 2)) s (castd spends \(ratio(python.oneCPU, castd.oneCPU)) less); a bare sendfile loop \(Format.fixed(bare.oneCPU / gib, 2)) s"
            ))
        figure.rows.append(
            .value(
                "castd's resident memory, 8 readers streaming",
                "\(Format.fixed(Double(rssPeak) / 1024, 1)) MiB at most (\(Format.fixed(Double(rssBefore) / 1024, 1)) MiB before)",
                target: "flat: no growth with the file's size", met: rssPeak - rssBefore < 16 * 1024,
                note: "the file is \(size >> 20) MiB"))

        var toLoad: [UInt64] = []
        var toFetched: [UInt64] = []
        for _ in 0..<environment.runs(20, quick: 3) {
            let (load, fetched) = try await timedLoad(small, daemon: daemon, device: device)
            toLoad.append(load)
            toFetched.append(fetched)
        }
        figure.rows.append(.distribution("castc load FILE → LOAD at the device", Samples(toLoad)))
        figure.rows.append(.distribution("castc load FILE → the device has the first 64 KiB", Samples(toFetched)))
        window.finish(live: [daemon.pid])
        figure.load = window
        return figure
    }

    /// `castc load FILE --no-autoplay` on the device: the URL castd serves it at.
    private func load(_ path: String, daemon: Daemon, device: HostedEmulator) async throws -> String {
        let run = try await onThread {
            try Spawn.timed([environment.castc, "--socket", daemon.socketPath, "load", path, "--no-autoplay"])
        }
        guard run.status == 0 else { throw BenchError("castc load \(path) exited with \(run.status)") }
        let client = try await CastdClient.connect(socketPath: daemon.socketPath)
        defer { Task { await client.close() } }
        guard let url = try await client.status().media.first?.media.contentID, url.hasPrefix("http://") else {
            throw BenchError("castd gave the device no URL for \(path)")
        }
        return url
    }

    /// One `castc load FILE`: to the LOAD at the device, and to the status that leaves BUFFERING.
    private func timedLoad(_ path: String, daemon: Daemon, device: HostedEmulator) async throws -> (UInt64, UInt64) {
        let run = try await onThread {
            try Spawn.timed([environment.castc, "--socket", daemon.socketPath, "load", path, "--no-autoplay"])
        }
        guard run.status == 0 else { throw BenchError("castc load \(path) exited with \(run.status)") }
        var load: UInt64?
        var fetched: UInt64?
        try await waitUntil("the device to take the file and fetch its start") {
            let entries = device.log.since(run.started)
            load = entries.first { $0.direction == .received && $0.isMedia && $0.type == "LOAD" }?.time
            guard let load else { return false }
            fetched =
                entries.first {
                    $0.time >= load && $0.direction == .sent && $0.isMedia && $0.type == "MEDIA_STATUS"
                        && ($0.playerState == "PAUSED" || $0.playerState == "PLAYING")
                }?
                .time
            return fetched != nil
        }
        return (load! - run.started, fetched! - run.started)
    }

    /// One fetch of `url` (of `bytes`) by `readers` at once, each whole (``DiscardingReader``):
    /// bytes a second, all together, and the CPU time (user and system) the server `pid` spent.
    static func fetch(_ url: String, readers: Int, bytes: Int, server pid: pid_t?) async throws -> Fetch {
        let ticks = { pid.flatMap { Proc.cpuTicks($0) } ?? 0 }
        let ticksBefore = ticks()
        let started = monotonicNanos()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<readers {
                group.addTask { try await onThread { try DiscardingReader.read(url) } }
            }
            for try await received in group where received != bytes {
                throw BenchError("\(url) sent \(received) bytes, not \(bytes)")
            }
        }
        let seconds = Double(monotonicNanos() - started) / 1e9
        let cpu = Double(ticks() - ticksBefore) / Double(sysconf(Int32(_SC_CLK_TCK)))
        return Fetch(bytesPerSecond: Double(readers) * Double(bytes) / seconds, cpuSeconds: cpu)
    }

    /// One server's fetches: with one reader, and with ``readers`` at once.
    struct Fetches {
        var one: [Fetch] = []
        var many: [Fetch] = []
        static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        var oneRate: Double { Self.median(one.map(\.bytesPerSecond)) }
        var manyRate: Double { Self.median(many.map(\.bytesPerSecond)) }
        var oneCPU: Double { Self.median(one.map(\.cpuSeconds)) }
    }

    struct Fetch {
        var bytesPerSecond: Double
        /// The server's CPU time over the fetch.
        var cpuSeconds: Double
    }

    /// A file of `bytes` random bytes (after an MP4's ftyp box, so that castd sniffs video/mp4).
    static func write(path: String, bytes: Int) throws {
        guard
            let handle = FileHandle(forWritingAtPath: path)
                ?? {
                    FileManager.default.createFile(atPath: path, contents: nil)
                        ? FileHandle(forWritingAtPath: path) : nil
                }()
        else { throw BenchError("cannot write \(path)") }
        defer { try? handle.close() }
        var generator = SplitMix64(seed: 11)
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var written = 0
        while written < bytes {
            for index in stride(from: 0, to: block.count, by: 8) {
                withUnsafeBytes(of: generator.next()) { block.replaceSubrange(index..<index + 8, with: $0) }
            }
            if written == 0 {
                block.replaceSubrange(0..<12, with: [0, 0, 0, 0x18] + Array("ftypisom".utf8))
            }
            try handle.write(contentsOf: block.prefix(bytes - written))
            written += min(block.count, bytes - written)
        }
    }
}

/// Samples a process's resident memory every 20 ms on a thread of its own, until stopped.
final class RSSSampler: Sendable {
    private let state = Locked((stopped: false, peak: 0))
    private let done = Locked<CheckedContinuation<Int, Never>?>(nil)
    private let finished = Locked<Int?>(nil)

    init(pid: pid_t) {
        Thread.detachNewThread { [self] in
            while true {
                let rss = Proc.statusValue(pid, "VmRSS") ?? 0
                let stopped = state.withLock { state in
                    state.peak = max(state.peak, rss)
                    return state.stopped
                }
                if stopped { break }
                usleep(20_000)
            }
            let peak = state.withLock { $0.peak }
            let waiter = done.withLock { waiter in
                defer { waiter = nil }
                return waiter
            }
            finished.withLock { $0 = peak }
            waiter?.resume(returning: peak)
        }
    }

    /// Stops sampling: the most it saw, in KiB.
    func stop() async -> Int {
        state.withLock { $0.stopped = true }
        return await withCheckedContinuation { continuation in
            let peak = finished.withLock { finished -> Int? in
                if finished == nil { done.withLock { $0 = continuation } }
                return finished
            }
            if let peak { continuation.resume(returning: peak) }
        }
    }
}

/// `python3 -m http.server` on loopback, serving `directory`: the peer of figure 11.
struct PythonFileServer {
    let process: LongProcess
    let port: Int

    static func start(directory: String) async throws -> PythonFileServer {
        // Port 0: the kernel picks one, and the server says which on its first line.
        let process = try LongProcess(
            ["/usr/bin/python3", "-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", directory, "0"],
            stdout: .pipe, stderr: .null)
        guard let stdout = process.stdout else { throw BenchError("python3 -m http.server gave no output") }
        let line = try await onThread { () throws -> String in
            let reader = LineReader(fd: stdout)
            guard let line = reader.next() else { throw BenchError("python3 -m http.server exited at once") }
            return line
        }
        // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
        let words = line.split(separator: " ")
        guard let index = words.firstIndex(of: "port"), index + 1 < words.count, let port = Int(words[index + 1]) else {
            await process.stop()
            throw BenchError("python3 -m http.server said: \(line)")
        }
        return PythonFileServer(process: process, port: port)
    }
}
