import CastClient
import CastDiscovery
import CastdSupport
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Figure 8: castd under an mDNS flood (security issue M1): what fake announcements cost castd
/// in CPU and memory, and what it keeps once they leave.
struct FloodFigure {
    let environment: BenchEnvironment

    /// The device ids castd lists, from its Watch stream.
    private final class Listing: Sendable {
        private let state = Locked<(ids: Set<String>, snapshot: Bool)>(([], false))

        func record(_ event: CastdEvent) {
            state.withLock { state in
                switch event.kind {
                case .snapshot(let snapshot)?:
                    state.snapshot = true
                    state.ids = Set(snapshot.devices.map(\.id))
                case .deviceAdded(let device)?: state.ids.insert(device.id)
                case .deviceRemoved(let device)?: state.ids.remove(device.id)
                default: break
                }
            }
        }

        var count: Int { state.withLock { $0.ids.count } }
        var hasSnapshot: Bool { state.withLock { $0.snapshot } }
    }

    func run() async throws -> Figure {
        // Avahi's cache (4,096 records by default) holds about 1,350 services per interface, and
        // no browser is told of more: the steps stop below that.
        let step = environment.quick ? 250 : 200
        let steps = environment.quick ? 2 : 6
        let waves = environment.quick ? 2 : 10
        let waveSize = environment.quick ? 250 : 500
        var figure = Figure(
            number: 8, title: "mDNS flood: fake announcements against castd",
            method: """
                castd with mDNS discovery on (the system's Avahi) and `--max-mdns-services 16384 --max-mdns-services-per-host 16384` (the flood comes from one host), so that the bound \
                does not stop the flood early. (Avahi's own cache, 4,096 records by default, holds about 1,350 \
                services per interface: no browser is told of more, so the steps stop at 1,200.) The driver publishes fake `_googlecast._tcp` services through Avahi's \
                D-Bus API (one entry group each, a fresh id each, as a LAN host can announce them) and watches castd \
                list them. First, \(steps) steps of \(step) ids held at once (\(step * steps) in all): castd's CPU per \
                id listed at each step (flat if the cost is linear: before the fix it grew with the ids already held), \
                then all are withdrawn at once while the driver times `GetStatus` (castd must keep answering). Then \
                \(waves) waves of \(waveSize) ids, each announced and withdrawn: castd's resident memory after each \
                wave has left (it must come back, not grow by wave). CPU is castd's own (user + system, from \
                /proc), not Avahi's.
                """)
        guard DiscoveryFigure.avahiRuns() else {
            figure.problems.append(
                "not measured: no avahi-daemon answers (`avahi-daemon --check`). `make bench` starts one on loopback "
                    + "(scripts/avahi-loopback.sh, as root) when none runs.")
            return figure
        }
        let daemon = try await Daemon.start(
            environment, name: "flood",
            arguments: [
                "--max-mdns-services", "16384", "--max-mdns-services-per-host", "16384",
            ])
        let client: CastdClient
        do {
            client = try await daemon.connect()
        } catch {
            await daemon.stop()
            throw error
        }
        let listing = Listing()
        var window = LoadWindow(live: [daemon.pid])
        var logger = Logger(label: "castd-bench.flood")
        logger.logLevel = .error
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await event in client.watch() { listing.record(event) }
                }
                try await waitUntil("castd's first snapshot") { listing.hasSnapshot }
                let baseline = listing.count
                let rssBefore = daemon.rssKiB ?? 0

                do {
                    // Waves, each announced and withdrawn.
                    var afterWaves: [Int] = []
                    for wave in 0..<waves {
                        let flood = AvahiServiceFlood(serviceType: "_googlecast._tcp", logger: logger)
                        try await flood.publish(Self.fakes(waveSize, tag: "w\(wave)"), timeout: .seconds(300))
                        try await waitUntil("wave \(wave) listed", timeout: .seconds(120)) {
                            listing.count >= baseline + waveSize
                        }
                        flood.withdrawAll()
                        try await waitUntil("wave \(wave) dropped", timeout: .seconds(120)) {
                            listing.count == baseline
                        }
                        afterWaves.append(daemon.rssKiB ?? 0)
                    }
                    // The first wave warms the allocator up (arenas, the store's tables): growth counts from the second.
                    let growth = (afterWaves.last ?? 0) - (afterWaves.dropFirst().first ?? afterWaves.first ?? 0)
                    figure.rows.append(
                        .value(
                            "castd RSS after each of \(waves) waves of \(waveSize)",
                            afterWaves.map { "\($0 / 1024)" }.joined(separator: ", ") + " MiB",
                            target: "no growth by wave (last − second ≤ 1 MiB)", met: growth <= 1024,
                            note: "\(growth >= 0 ? "+" : "")\(growth) KiB from the second wave to the last"))
                } catch {
                    figure.problems.append("the waves: \(error)")
                }
                do {
                    // Held at once, in steps.
                    var perID: [String] = []
                    let held = AvahiServiceFlood(serviceType: "_googlecast._tcp", logger: logger)
                    for index in 0..<steps {
                        let before = try daemon.cpuSeconds()
                        try await held.publish(Self.fakes(step, tag: "s\(index)"), timeout: .seconds(300))
                        let target = baseline + step * (index + 1)
                        try await waitUntil("castd to list \(target) devices", timeout: .seconds(120)) {
                            listing.count >= target
                        }
                        let micros = (try daemon.cpuSeconds() - before) * 1_000_000 / Double(step)
                        perID.append("\(step * (index + 1)): \(Format.fixed(micros / 1000, 2)) ms")
                    }
                    let rssHeld = daemon.rssKiB ?? 0
                    let withdrawStart = try daemon.cpuSeconds()
                    let clock = ContinuousClock()
                    let withdrawn = clock.now
                    held.withdrawAll()
                    var statusNanos: [UInt64] = []
                    while listing.count > baseline {
                        let start = monotonicNanos()
                        _ = try await client.status()
                        statusNanos.append(monotonicNanos() - start)
                        if clock.now - withdrawn > .seconds(900) {
                            throw BenchError("castd did not drop the flood within 900 s")
                        }
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    let withdrawMillis = (try daemon.cpuSeconds() - withdrawStart) * 1000
                    let dropSeconds = Double((clock.now - withdrawn).components.seconds)
                    figure.rows.append(
                        .value(
                            "castd CPU per id listed, by ids held", perID.joined(separator: "; "),
                            note:
                                "no target: below the ~1,350 services Avahi shows at most, a busy machine's noise is larger than the O(n²) term the fix removed"
                        ))
                    figure.rows.append(
                        .value(
                            "castd CPU to drop \(step * steps) ids withdrawn at once",
                            "\(Format.fixed(withdrawMillis, 0)) ms (\(Format.fixed(withdrawMillis * 1000 / Double(step * steps), 0)) µs per id)",
                            note: "Avahi took \(Format.fixed(dropSeconds, 0)) s to report every removal"))
                    figure.rows.append(
                        .distribution(
                            "GetStatus while castd drops them", Samples(statusNanos), target: "p99 ≤ 50 ms",
                            met: !statusNanos.isEmpty && Samples(statusNanos).p99 <= 50_000_000))
                    figure.rows.append(
                        .value(
                            "castd RSS: before, \(step * steps) held, after they left",
                            "\(rssBefore / 1024) MiB, \(rssHeld / 1024) MiB, \((daemon.rssKiB ?? 0) / 1024) MiB"))

                } catch {
                    figure.problems.append("the ids held at once: \(error)")
                }
                group.cancelAll()
            }
        } catch {
            await client.close()
            await daemon.stop()
            throw error
        }
        await client.close()
        window.finish(live: [daemon.pid])
        await daemon.stop()
        figure.load = window
        return figure
    }

    static func fakes(_ count: Int, tag: String) -> [AvahiServiceFlood.Service] {
        let run = UUID().uuidString.prefix(6)
        return (0..<count).map { index in
            AvahiServiceFlood.Service(
                name: "Flood \(tag) \(run) \(index)", port: 8009,
                txt: [
                    "id": "flood\(tag)\(run)\(index)", "fn": "Flood \(index)", "md": "Chromecast", "ca": "4101",
                    "ve": "05", "st": "0", "rs": "",
                ])
        }
    }
}
