import CastdSupport
import CastClient
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Figure 7: from `avahi-publish` to the device in castd's list.
struct DiscoveryFigure {
    let environment: BenchEnvironment
    /// The device the announcements point at (castd lists a discovered device without
    /// connecting to it; it connects on first use).
    let device: HostedEmulator

    /// When castd's watchers heard of each device id.
    private final class Sightings: Sendable {
        private let state = Locked<(added: [String: UInt64], removed: [String: UInt64], snapshot: Bool)>(
            ([:], [:], false))

        func record(_ event: CastdEvent) {
            let time = monotonicNanos()
            state.withLock { state in
                switch event.kind {
                case .deviceAdded(let device)?: if state.added[device.id] == nil { state.added[device.id] = time }
                case .deviceRemoved(let device)?: state.removed[device.id] = time
                case .snapshot?: state.snapshot = true
                default: break
                }
            }
        }

        func added(_ id: String) -> UInt64? { state.withLock { $0.added[id] } }
        func removed(_ id: String) -> UInt64? { state.withLock { $0.removed[id] } }
        var hasSnapshot: Bool { state.withLock { $0.snapshot } }
    }

    static func avahiRuns() -> Bool {
        guard let run = try? Spawn.timed(["/usr/sbin/avahi-daemon", "--check"]) else { return false }
        return run.status == 0
    }

    func run() async throws -> Figure {
        var figure = Figure(
            number: 7, title: "Discovery: from avahi-publish to castd's list",
            method: """
                castd with mDNS discovery on (the system's Avahi), watched by the driver through `Watch`. Each \
                run publishes a new device with `avahi-publish -s NAME _googlecast._tcp PORT id=… fn=… md=… ca=… …` \
                (the TXT record of the emulated device, with a fresh id and name) and times until castd's \
                `device_added` for that id reaches the watcher: from starting avahi-publish, and from its \
                "Established" line (the service is published: Avahi has finished probing the name on the link, \
                about 0.75 s that mDNS requires). Then avahi-publish is stopped and castd is watched removing the \
                device, before the next run.
                """)
        guard Self.avahiRuns() else {
            figure.problems.append(
                "not measured: no avahi-daemon answers (`avahi-daemon --check`). `make bench` starts one on loopback "
                    + "(scripts/avahi-loopback.sh, as root) when none runs.")
            return figure
        }
        let daemon = try await Daemon.start(environment, name: "discovery", arguments: [])
        let client: CastdClient
        do {
            client = try await daemon.connect()
        } catch {
            await daemon.stop()
            throw error
        }
        let sightings = Sightings()
        var fromSpawn: [UInt64] = []
        var fromEstablished: [UInt64] = []
        var window = LoadWindow(live: [daemon.pid])
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await event in client.watch() { sightings.record(event) }
                }
                try await waitUntil("castd's first snapshot") { sightings.hasSnapshot }
                let runs = environment.runs(12, quick: 2)
                for index in 0..<runs {
                    let (spawned, established, listed) = try await once(index, sightings: sightings)
                    fromSpawn.append(listed - spawned)
                    if let established { fromEstablished.append(listed >= established ? listed - established : 0) }
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
        let published = Samples(fromEstablished)
        figure.rows.append(
            .distribution(
                "avahi-publish \"Established\" → castd lists the device", published, target: "median ≤ 1 s",
                met: !published.isEmpty && published.median <= 1_000_000_000))
        figure.rows.append(.distribution("avahi-publish started → castd lists the device", Samples(fromSpawn)))
        return figure
    }

    /// One announcement: when avahi-publish started, said "Established", and castd listed it.
    private func once(_ index: Int, sightings: Sightings) async throws -> (UInt64, UInt64?, UInt64) {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
        let id = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        let name = "Bench Discovery \(index + 1) \(id.prefix(6))"
        var txt = device.emulator.txtRecord
        txt["id"] = id
        txt["fn"] = name
        let order = ["id", "cd", "rm", "ve", "md", "ic", "fn", "ca", "st", "bs", "nf", "rs"]
        let keys = order.filter { txt[$0] != nil } + txt.keys.filter { !order.contains($0) }.sorted()
        let argv =
            ["/usr/bin/avahi-publish", "-s", "Chromecast-\(id)", "_googlecast._tcp", "\(device.endpoints.port)"]
            + keys.map { "\($0)=\(txt[$0]!)" }
        let spawned = monotonicNanos()
        let publisher = try LongProcess(argv, stdout: .null, stderr: .pipe)
        let reader = LineReader(fd: publisher.stderr!)
        // Reads avahi-publish's standard error until it says "Established" (or ends, when it
        // is stopped).
        async let established = onThread { () -> UInt64? in
            while let line = reader.next() {
                if line.contains("Established") { return monotonicNanos() }
            }
            return nil
        }
        do {
            try await waitUntil("castd to list \(name)", timeout: .seconds(15), poll: .milliseconds(1)) {
                guard publisher.isRunning else {
                    throw BenchError("avahi-publish exited with \(publisher.exitStatus ?? -1)")
                }
                return sightings.added(id) != nil
            }
        } catch {
            await publisher.stop()
            _ = await established
            publisher.closePipes()
            throw error
        }
        let listed = sightings.added(id)!
        await publisher.stop()
        let publishedAt = await established
        publisher.closePipes()
        // Let castd see the goodbye, so that runs do not overlap.
        try? await waitUntil("castd to drop \(name)", timeout: .seconds(10)) { sightings.removed(id) != nil }
        return (spawned, publishedAt, listed)
    }
}
