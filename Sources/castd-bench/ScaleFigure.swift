import CastClient
import CastEmulator
import Foundation

/// Figure 5: castd holding 1, 50 and 200 devices: memory and idle CPU.
struct ScaleFigure {
    let environment: BenchEnvironment
    let authority: EmulatorDeviceAuthority

    struct Level {
        var devices: Int
        var rssKiB: Int
        /// Of it: the heap and other private memory, and pages of the executable and libraries.
        var anonymousKiB: Int
        var fileKiB: Int
        var peakKiB: Int
        var threads: Int
        var idleCPUPercent: Double
        var idleSeconds: Double
        var connectSeconds: Double
    }

    func run() async throws -> Figure {
        var figure = Figure(
            number: 5, title: "Scale: devices held by one castd",
            method: """
                N emulated devices in the driver, each on its own loopback port (127.0.0.1), given to a fresh \
                castd as `--device NAME=127.0.0.1:PORT` with discovery off. The driver asks each device's app \
                availability once (GetAppAvailability), which makes castd connect to it (TCP, TLS, device \
                authentication, the receiver's status): castd keeps every link it has opened. With all N linked, \
                the driver disconnects, waits 3 s, reads castd's resident memory (VmRSS, /proc/PID/status), then \
                its CPU time (utime + stime, /proc/PID/stat) over an idle window long enough for several \
                heartbeats (castd PINGs a silent device after 5 s, and the emulators PING castd). CPU is given \
                as a share of one core. Memory per device is the growth from 1 device, divided by the devices \
                added.
                """)
        let maximum = environment.quick ? 10 : 200
        let levels = environment.quick ? [0, 1, 5, 10] : [0, 1, 50, 200]
        let idle: Duration = environment.quick ? .seconds(3) : .seconds(15)

        var window = LoadWindow(live: [])
        var emulators: [HostedEmulator] = []
        do {
            for index in 0..<maximum {
                emulators.append(
                    try await HostedEmulator.start(name: "Scale \(index + 1)", authority: authority, tapped: false))
            }
        } catch {
            for emulator in emulators { await emulator.shutdown() }
            throw error
        }
        var results: [Level] = []
        do {
            for count in levels {
                results.append(try await measure(Array(emulators.prefix(count)), idle: idle))
            }
        } catch {
            for emulator in emulators { await emulator.shutdown() }
            throw error
        }
        for emulator in emulators { await emulator.shutdown() }
        window.finish(live: [])
        figure.load = window

        let one = results.first { $0.devices == 1 }
        for level in results {
            let label = "\(level.devices) device\(level.devices == 1 ? "" : "s")"
            var note =
                "\(Format.mebibytes(kibibytes: level.anonymousKiB)) anonymous (heap), \(Format.mebibytes(kibibytes: level.fileKiB)) of the executable and libraries; peak \(Format.mebibytes(kibibytes: level.peakKiB)), \(level.threads) threads"
            if level.devices > 0 { note += "; all linked in \(Format.fixed(level.connectSeconds, 2)) s" }
            let isTop = level.devices == maximum
            figure.rows.append(
                .value(
                    "\(label): resident memory", Format.mebibytes(kibibytes: level.rssKiB),
                    target: isTop && !environment.quick ? "≤ 60 MB" : "",
                    met: isTop && !environment.quick ? Double(level.rssKiB) * 1024 <= 60_000_000 : nil, note: note))
            figure.rows.append(
                .value(
                    "\(label): CPU when idle", "\(Format.fixed(level.idleCPUPercent, 2)) % of a core",
                    target: isTop && !environment.quick ? "≤ 2 %" : "",
                    met: isTop && !environment.quick ? level.idleCPUPercent <= 2 : nil,
                    note: "over \(Format.fixed(level.idleSeconds, 0)) s"))
            if let one, level.devices > 1 {
                let perDevice = Double(level.rssKiB - one.rssKiB) / Double(level.devices - 1)
                let anonymousPerDevice = Double(level.anonymousKiB - one.anonymousKiB) / Double(level.devices - 1)
                figure.rows.append(
                    .value(
                        "\(label): memory per device", "\(Format.significant(perDevice)) KiB",
                        note:
                            "(RSS(\(level.devices)) − RSS(1)) / \(level.devices - 1); anonymous memory alone: \(Format.significant(anonymousPerDevice)) KiB"
                    ))
            }
        }
        return figure
    }

    private func measure(_ devices: [HostedEmulator], idle: Duration) async throws -> Level {
        let arguments =
            ["--no-discovery"]
            + devices.enumerated().flatMap { index, device in
                ["--device", "Scale \(index + 1)=\(device.address)"]
            }
        let daemon = try await Daemon.start(environment, name: "scale-\(devices.count)", arguments: arguments)
        do {
            let client = try await daemon.connect()
            let started = monotonicNanos()
            // At most 16 connections at once, as a burst of clients would.
            try await withThrowingTaskGroup(of: Void.self) { group in
                var next = 0
                func add() {
                    let device = devices[next]
                    next += 1
                    group.addTask {
                        _ = try await client.appAvailability(device: device.address, appIDs: ["CC1AD845"])
                    }
                }
                while next < min(16, devices.count) { add() }
                while try await group.next() != nil {
                    if next < devices.count { add() }
                }
            }
            let connectSeconds = Double(monotonicNanos() - started) / 1e9
            let linked = try await client.listDevices().filter { $0.linkState == .connected }.count
            guard linked == devices.count else {
                throw BenchError("only \(linked) of \(devices.count) devices are linked")
            }
            await client.close()
            try await Task.sleep(for: .seconds(3))
            let rss = daemon.rssKiB ?? 0
            let anonymous = Proc.statusValue(daemon.pid, "RssAnon") ?? 0
            let file = Proc.statusValue(daemon.pid, "RssFile") ?? 0
            let cpuBefore = try daemon.cpuSeconds()
            let windowStart = monotonicNanos()
            try await Task.sleep(for: idle)
            let cpu = try daemon.cpuSeconds() - cpuBefore
            let seconds = Double(monotonicNanos() - windowStart) / 1e9
            let level = Level(
                devices: devices.count, rssKiB: rss, anonymousKiB: anonymous, fileKiB: file,
                peakKiB: daemon.peakRSSKiB ?? 0, threads: daemon.threads ?? 0,
                idleCPUPercent: cpu / seconds * 100, idleSeconds: seconds,
                connectSeconds: connectSeconds)
            await daemon.stop()
            return level
        } catch {
            await daemon.stop()
            throw error
        }
    }
}
