import CastArtwork
import CastClient
import CastMPRIS
import CastdSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Figure 10: cast-mpris, the desktop's media controls. A change on the device (its volume,
/// changed on the emulated device itself as its remote would) until a D-Bus client has the
/// player's PropertiesChanged; then cast-mpris's CPU and memory while nothing plays.
struct MPRISFigure {
    let setup: MainSetup

    private var environment: BenchEnvironment { setup.environment }
    static let dbusDaemon = "/usr/bin/dbus-daemon"

    func run() async throws -> Figure {
        let changes = environment.runs(400, quick: 40)
        let idleSeconds = environment.quick ? 3 : 20
        var figure = Figure(
            number: 10, title: "The desktop's media controls (cast-mpris)",
            method: """
                The same castd and emulated device as figures 1 to 4, media playing. A private session bus \
                (`dbus-daemon --session`), `cast-mpris --socket …` (release build) on it, and a D-Bus client in \
                the driver (sd-bus, a match on the players' PropertiesChanged). **Device → D-Bus:** \(changes) \
                times, the driver changes the volume on the emulated device itself (as its remote would: the \
                device sends RECEIVER_STATUS to castd unasked) and times from just before that change to the \
                moment its client has the PropertiesChanged that carries `Volume`: the device's message to \
                castd, castd's Watch event to cast-mpris, cast-mpris's signal through dbus-daemon. One change \
                at a time. **Artwork:** a 200 KiB image fetched once into a cache of its own (from `python3 -m \
                http.server` on loopback), then `ArtworkCache.file(for:)` timed on each of many hits: the hash \
                of the URL, a look in the directory, the file's access time touched. **Idle:** the media paused (nothing plays), cast-mpris's CPU time (utime + stime, \
                /proc/PID/stat) over \(idleSeconds) s, and its resident memory (VmRSS, /proc/PID/status) then.
                """)
        let tool = environment.binDirectory + "/cast-mpris"
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            figure.problems.append("\(tool) is not built (swift build -c release).")
            return figure
        }
        guard FileManager.default.isExecutableFile(atPath: Self.dbusDaemon) else {
            figure.problems.append("\(Self.dbusDaemon) is missing (apt-get install dbus).")
            return figure
        }
        var window = LoadWindow(live: [setup.daemon.pid])
        try await setup.ensurePlaying()

        let work = environment.workDirectory
        let busLog = work + "/dbus10.out"
        let bus = try LongProcess(
            [Self.dbusDaemon, "--session", "--nofork", "--nopidfile", "--print-address=1"],
            stdout: .file(busLog), stderr: .file(work + "/dbus10.err"))
        var address = ""
        try await waitUntil("dbus-daemon's address") {
            address =
                ((try? String(contentsOfFile: busLog, encoding: .utf8)) ?? "")
                .split(separator: "\n").first.map(String.init) ?? ""
            return !address.isEmpty
        }
        var childEnvironment = ProcessInfo.processInfo.environment
        childEnvironment["DBUS_SESSION_BUS_ADDRESS"] = address
        childEnvironment["XDG_CACHE_HOME"] = work + "/cache10"
        let mprisLog = work + "/cast-mpris10.log"
        let mpris = try LongProcess([tool, "--socket", setup.socket], environment: childEnvironment, log: mprisLog)
        let loop = try BusLoop()
        let loopEnded = Task { await loop.runOnThread(name: "bench-bus") }
        let volumeSignals = Locked<[UInt64]>([])
        var latencies: [UInt64] = []
        do {
            let watch = try await BusSignalWatch.start(
                loop: loop, address: address,
                match: "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                    + "arg0='org.mpris.MediaPlayer2.Player'"
            ) { _, _, changed in
                if changed.contains("Volume") {
                    let now = monotonicNanos()
                    volumeSignals.withLock { $0.append(now) }
                }
            }
            try await waitUntil("cast-mpris's player on the bus") {
                ((try? String(contentsOfFile: mprisLog, encoding: .utf8)) ?? "").contains("on the session bus")
            }
            log("figure 10: \(changes) volume changes on the device")
            for index in 0..<changes {
                let before = volumeSignals.withLock { $0.count }
                // Two levels in turn, each different from the last: every change is news.
                let level = index % 2 == 0 ? 0.35 : 0.65
                let started = monotonicNanos()
                try setup.device.emulator.changeVolumeOnDevice(level: level)
                try await waitUntil("PropertiesChanged with Volume", timeout: .seconds(10), poll: .milliseconds(1)) {
                    volumeSignals.withLock { $0.count > before }
                }
                latencies.append(volumeSignals.withLock { $0[before] } - started)
            }
            watch.close()
            let samples = Samples(latencies)
            figure.rows.append(
                .distribution(
                    "a change on the device → PropertiesChanged at a D-Bus client", samples, target: "p99 ≤ 20 ms",
                    met: samples.p99 <= 20_000_000))

            do {
                let hits = try await artworkHits(count: environment.runs(2000, quick: 200))
                figure.rows.append(
                    .distribution(
                        "artwork from the cache: `ArtworkCache.file(for:)`, a hit", hits, target: "≤ 1 ms",
                        met: hits.p99 <= 1_000_000))
            } catch {
                figure.problems.append("The artwork cache was not measured: \(error)")
            }

            // Idle: nothing plays.
            _ = try await setup.controller.pause()
            try await Task.sleep(for: .seconds(1))
            // One way to read CPU time (Proc, with the kernel's clock tick); a failed read is
            // said as such, not made a figure.
            let ticks = Double(Proc.ticksPerSecond)
            let cpuBefore = Proc.cpuTicks(mpris.pid)
            try await Task.sleep(for: .seconds(idleSeconds))
            let cpuAfter = Proc.cpuTicks(mpris.pid)
            let rss = Proc.statusValue(mpris.pid, "VmRSS")
            if cpuBefore == nil || cpuAfter == nil {
                figure.problems.append("cast-mpris's CPU time could not be read from /proc/\(mpris.pid)/stat")
            }
            if let cpuBefore, let cpuAfter {
                let seconds = Double(cpuAfter - cpuBefore) / ticks
                figure.rows.append(
                    .value(
                        "cast-mpris CPU while nothing plays", "\(Format.fixed(seconds, 2)) s in \(idleSeconds) s",
                        target: "0", met: cpuAfter == cpuBefore,
                        note: "clock ticks of \(Format.fixed(1000 / ticks, 0)) ms"))
            }
            if let rss {
                figure.rows.append(
                    .value(
                        "cast-mpris resident memory", Format.mebibytes(kibibytes: rss), target: "≤ 30 MiB",
                        met: rss <= 30 * 1024))
            }
            try await setup.ensurePlaying()
        } catch {
            await mpris.stop()
            await bus.stop()
            loop.stop()
            await loopEnded.value
            throw error
        }
        await mpris.stop()
        await bus.stop()
        loop.stop()
        await loopEnded.value
        window.finish(live: [setup.daemon.pid])
        figure.load = window
        return figure
    }

    /// `count` cache hits of one image (200 KiB, fetched once from `python3 -m http.server` on
    /// loopback into a cache of its own), each timed: what cast-mpris and `castc artwork` do
    /// for artwork already on disk.
    private func artworkHits(count: Int) async throws -> Samples {
        let directory = environment.workDirectory + "/artwork10"
        let served = directory + "/served"
        try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
        // A PNG's signature and a 512×512 IHDR (the fetcher reads an image's size), then bytes.
        let png: [UInt8] =
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
            + [0, 0, 2, 0, 0, 0, 2, 0] + (0..<204_800).map { UInt8($0 % 251) }
        _ = FileManager.default.createFile(atPath: served + "/cover.png", contents: Data(png))
        let serverLog = directory + "/http.out"
        let server = try LongProcess(
            ["/usr/bin/python3", "-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", served, "0"],
            stdout: .file(serverLog), stderr: .file(directory + "/http.err"))
        defer { Task { await server.stop() } }
        var port = ""
        try await waitUntil("python3 -m http.server's port") {
            let text = (try? String(contentsOfFile: serverLog, encoding: .utf8)) ?? ""
            guard let range = text.range(of: " port ") else { return false }
            port = String(text[range.upperBound...].prefix { $0.isNumber })
            return !port.isEmpty
        }
        let url = "http://127.0.0.1:\(port)/cover.png"
        // The image is served on loopback, which artwork fetches refuse but for tests (and this).
        var fetcher = ArtworkFetcher()
        fetcher.allowsLoopback = true
        let cache = try ArtworkCache(directory: directory + "/cache", fetcher: fetcher)
        _ = try await cache.file(for: url)
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            let started = monotonicNanos()
            _ = try await cache.file(for: url)
            samples.append(monotonicNanos() - started)
        }
        return Samples(samples)
    }
}
