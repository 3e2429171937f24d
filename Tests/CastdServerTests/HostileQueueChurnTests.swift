import CastClient
import CastEmulator
import CastTestSupport
import CastdAPI
import CastdSupport
import Foundation
import Testing

/// A device that churns a 2,500-item queue (issue 34): each round it replaces every other item
/// without a QUEUE_CHANGE and says so only by a MEDIA_STATUS naming ids castd lacks, so castd
/// asks for the order and finds 1,250 items removed and 1,250 runs of one inserted. Said run
/// by run, each change carrying the whole order, that was 1,250 events and about 3 M ids a
/// round under the store's lock; castd now says it as one REORDERED. castd runs as its own
/// process; its RSS and another client's GetStatus times are measured while the device churns.
@Suite(.serialized)
struct HostileQueueChurnTests {
    @Test func aDeviceThatChurnsALongQueueCostsCastdOneEventARound() async throws {
        var configuration = EmulatorConfiguration()
        configuration.name = "Churner"
        configuration.queueWindow = 3
        try await withTemporaryDirectory { directory in
            try await withEmulator(configuration) { emulator, endpoints in
                try emulator.deviceAuthority().writeRoot(to: directory + "/root.pem")
                let socket = directory + "/castd.sock"
                try await withProcesses { launch in
                    let castd = try launch(
                        "castd",
                        [
                            "--mode", "user", "--socket", socket, "--state-directory", directory + "/state",
                            "--no-discovery", "--trust-root", directory + "/root.pem",
                            "--device", "Churner=\(endpoints.host):\(endpoints.port)",
                        ], [:])
                    try await eventually(timeout: .seconds(20), "castd to listen") {
                        (try? await CastdClient.withConnection(socketPath: socket) { try await $0.status() }) != nil
                    }
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        try await churn(castd: castd, socket: socket, client: client, emulator: emulator)
                    }
                }
            }
        }
    }

    func churn(castd: ChildProcess, socket: String, client: CastdClient, emulator: CastDeviceEmulator)
        async throws
    {
        _ = try await QueueFixture.loadTracks(2_500, with: client)
        try await eventually(timeout: .seconds(60), "castd to hold the whole queue") {
            try await client.queue().items.count == 2_500
        }
        // A watcher that counts the queue events (and the ids they carry).
        let counts = Locked((events: 0, ids: 0, lagged: 0, snapshots: 0))
        let watching = Task {
            try await CastdClient.withConnection(socketPath: socket) { watcher in
                for try await event in watcher.watch() {
                    counts.withLock { counts in
                        switch event.kind {
                        case .queue(let change):
                            counts.events += 1
                            counts.ids += change.order.count + change.itemIds.count
                        case .lagged: counts.lagged += 1
                        case .snapshot: counts.snapshots += 1
                        default: break
                        }
                    }
                }
            }
        }
        defer { watching.cancel() }
        try await eventually(timeout: .seconds(20), "the watcher's snapshot") { counts.withLock { $0.snapshots } > 0 }
        let rssBefore = try #require(HostileDeviceFloodTests.residentBytes(castd.pid))
        var peak = rssBefore
        let statusTimes = Locked<[Duration]>([])
        let rounds = 10
        let clock = ContinuousClock()
        for round in 1...rounds {
            let order = try emulator.churnQueue().map(Int64.init)
            // Another client meanwhile; each call bounded, so that a castd stalled by the
            // churn fails here rather than passing late.
            try await CastdClient.withConnection(socketPath: socket) { other in
                try await eventually(timeout: .seconds(60), "round \(round): castd to follow the churned order") {
                    let started = clock.now
                    let status = try await other.status()
                    statusTimes.withLock { $0.append(clock.now - started) }
                    return status.media.first?.queueItemIds == order
                }
            }
            peak = max(peak, HostileDeviceFloodTests.residentBytes(castd.pid) ?? 0)
        }
        #expect(castd.isRunning)
        try await eventually(timeout: .seconds(30), "the watcher to hear of every round") {
            counts.withLock { $0.events } >= rounds
        }
        let seen = counts.withLock { $0 }
        let sorted = statusTimes.withLock { $0 }.sorted()
        let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        print(
            """
            queue churn: \(rounds) rounds of 1,250 replaced items in a 2,500-item queue; \
            \(seen.events) queue events carrying \(seen.ids) ids, \(seen.lagged) lagged; castd RSS \
            before \(HostileDeviceFloodTests.mebibytes(rssBefore)), peak \(HostileDeviceFloodTests.mebibytes(peak)); \
            another client's GetStatus: \(sorted.count) calls, median \(sorted[sorted.count / 2]), p99 \(p99)
            """)
        // One REORDERED a round (a few at most), not a change per run.
        #expect(seen.events <= rounds * 8, "\(seen.events) queue events for \(rounds) rounds")
        #expect(seen.ids <= rounds * 8 * 5_000, "\(seen.ids) ids in the queue events")
        #expect(seen.lagged == 0, "the watcher lagged")
    }
}
