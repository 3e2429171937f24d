import CastClient
import Foundation
import NIOCore

/// How hard the soak pushes.
struct SoakParameters: Sendable {
    var clients = 64
    var requests = 10_000
    /// Calls each client keeps open at once.
    var depth = 4
    var watchers = 8
    /// A device's links are cut this often, the devices in turn.
    var dropInterval: Duration = .seconds(4)
    /// The first cut as the clients start, not an interval later: a short run (a test's) then
    /// always has links cut while its calls are under way.
    var dropAtStart = false
    /// A call with no status after this long is lost.
    var deadline: Duration = .seconds(60)
    var seed: UInt64 = 7

    var total: Int { clients * requests }
}

/// A device of the soak: how requests name it, and how to cut castd's links to it (returns
/// how many links were cut).
struct SoakDevice: Sendable {
    var selector: String
    var dropLinks: @Sendable () async -> Int
}

struct SoakDrop: Sendable {
    var device: String
    /// Seconds since the first client connected.
    var at: Double
    var linksCut: Int
}

/// A watcher's connection while the soak runs.
struct SoakWatcher: Sendable {
    let channel: any Channel
    let result: EventLoopFuture<SoakWatcherResult>
    let progress: SoakWatcherProgress
}

/// The soak's load against a castd at `socket`, whoever runs it: `castd-bench soak` (castd a
/// process of its own) and the tests (castd in their process) go through the same phases.
struct SoakLoad: Sendable {
    let socket: String
    let parameters: SoakParameters
    let devices: [SoakDevice]
    let progress: SoakProgress

    init(socket: String, parameters: SoakParameters, devices: [SoakDevice]) {
        self.socket = socket
        self.parameters = parameters
        self.devices = devices
        progress = SoakProgress(total: parameters.total)
    }

    /// Phase 1: the watchers connect and each gets its snapshot.
    func startWatchers() async throws -> [SoakWatcher] {
        var watchers: [SoakWatcher] = []
        for _ in 0..<parameters.watchers {
            let progress = SoakWatcherProgress()
            let (channel, result) = try await SoakConnection.watcher(socket: socket, progress: progress)
            watchers.append(SoakWatcher(channel: channel, result: result, progress: progress))
        }
        try await waitUntil("\(watchers.count) watchers' snapshots") {
            watchers.allSatisfy { $0.progress.hasSnapshot }
        }
        return watchers
    }

    /// Phase 2: every client makes its requests while the devices' links are cut in turn; returns
    /// once every call has ended (by a status, or lost at its deadline) and the drops stopped.
    ///
    /// A link is cut only once `observer` (the first watcher) has seen castd report every earlier
    /// cut and every device connected again: a cut while castd is still setting a link up
    /// (TLS done, the device's status not yet in) ends a connection attempt, which castd retries
    /// without ever reporting the device connected, so the drops and castd's reports could not
    /// be matched one to one.
    func runClients(observer: SoakWatcherProgress?) async throws -> (
        tally: SoakTally, drops: [SoakDrop], seconds: Double
    ) {
        let started = monotonicNanos()
        let devices = self.devices
        let interval = parameters.dropInterval
        let dropAtStart = parameters.dropAtStart
        let dropper = Task {
            var drops: [SoakDrop] = []
            var turn = 0
            var wait = !dropAtStart
            while !Task.isCancelled {
                if wait {
                    do { try await Task.sleep(for: interval) } catch { break }
                }
                wait = true
                if let observer {
                    let cutSoFar = drops.filter { $0.linksCut > 0 }.count
                    let settled = { observer.linkDrops >= cutSoFar && observer.reconnections == observer.linkDrops }
                    // Waits in steps of the drop interval, so cancelling stops it.
                    var waited = 0
                    while !settled() && !Task.isCancelled && waited < 100 {
                        do { try await Task.sleep(for: interval) } catch { break }
                        waited += 1
                    }
                    if !settled() { continue }
                }
                let device = devices[turn % devices.count]
                turn += 1
                let at = Double(monotonicNanos() - started) / 1e9
                let cut = await device.dropLinks()
                drops.append(SoakDrop(device: device.selector, at: at, linksCut: cut))
                log(
                    "soak: \(Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))) cut \(cut) link(s) of \(device.selector)"
                )
            }
            return drops
        }
        var results: [EventLoopFuture<SoakTally>] = []
        do {
            for index in 0..<parameters.clients {
                let plan = SoakClientPlan(
                    seed: parameters.seed &* 1_000_003 &+ UInt64(index), requests: parameters.requests,
                    depth: parameters.depth, devices: devices.map(\.selector), deadline: parameters.deadline)
                results.append(try await SoakConnection.client(socket: socket, plan: plan, progress: progress))
            }
        } catch {
            dropper.cancel()
            _ = await dropper.value
            throw error
        }
        var tally = SoakTally()
        var failure: (any Error)?
        for result in results {
            do {
                tally.merge(try await result.get())
            } catch {
                failure = failure ?? error
            }
        }
        let seconds = Double(monotonicNanos() - started) / 1e9
        dropper.cancel()
        let drops = await dropper.value
        progress.finish()
        if let failure { throw failure }
        return (tally, drops, seconds)
    }

    /// Phase 3: castd has seen every link the drops cut go down and come back, as the first
    /// watcher's device events say (a drop is noticed a moment after the device cut it).
    func awaitRelinks(after drops: [SoakDrop], watchers: [SoakWatcher]) async throws {
        let cut = drops.filter { $0.linksCut > 0 }.count
        guard let first = watchers.first else { return }
        try await waitUntil("castd to report \(cut) link losses and reconnections", timeout: .seconds(60)) {
            first.progress.linkDrops >= cut && first.progress.reconnections >= cut
        }
    }

    /// Phase 4: a last watcher's snapshot gives the sequence castd has reached; once every
    /// watcher has read that far, each cancels its Watch, and their logs are compared through
    /// that sequence.
    func stopWatchers(_ watchers: [SoakWatcher]) async throws -> (
        results: [SoakWatcherResult], comparison: WatchComparison
    ) {
        let probeProgress = SoakWatcherProgress()
        let (probe, probeResult) = try await SoakConnection.watcher(socket: socket, progress: probeProgress)
        try await waitUntil("the probe watcher's snapshot") { probeProgress.hasSnapshot }
        probe.pipeline.fireUserInboundEventTriggered(SoakStopWatching())
        let through = try await probeResult.get().log.snapshotSequence ?? 0
        // A watcher that never gets there is reported by the comparison (too few events).
        try? await waitUntil("every watcher to read through sequence \(through)", timeout: .seconds(30)) {
            watchers.allSatisfy { ($0.progress.sequence ?? 0) >= through }
        }
        for watcher in watchers { watcher.channel.pipeline.fireUserInboundEventTriggered(SoakStopWatching()) }
        // castd answers a cancel at once; a watcher it does not answer is closed, which ends its
        // result too (as a connection lost before its Watch ended).
        let answered: Bool
        do {
            try await waitUntil("every Watch to end", timeout: .seconds(30)) {
                watchers.allSatisfy { $0.progress.ended }
            }
            answered = true
        } catch {
            answered = false
        }
        if !answered { for watcher in watchers { watcher.channel.close(promise: nil) } }
        var results: [SoakWatcherResult] = []
        for watcher in watchers { results.append(try await watcher.result.get()) }
        return (results, WatchComparison.compare(results.map(\.log), through: through))
    }
}
