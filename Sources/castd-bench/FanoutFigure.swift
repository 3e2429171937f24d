import CastdSupport
import CastClient
import Foundation

/// Figure 4: one MEDIA_STATUS from the device to every watcher.
struct FanoutFigure {
    let setup: MainSetup

    /// What the watchers record for the trigger in progress.
    private final class Arrivals: Sendable {
        private struct State {
            var target: CastdPlayerState?
            var times: [UInt64?]
            var received = 0
            var waiter: CheckedContinuation<Void, Never>?
        }
        private let state: Locked<State>

        init(watchers: Int) {
            state = Locked(State(times: Array(repeating: nil, count: watchers)))
        }

        /// Arms for a new trigger: the first media event in `target` state counts.
        func arm(_ target: CastdPlayerState) {
            state.withLock { state in
                state.target = target
                state.times = Array(repeating: nil, count: state.times.count)
                state.received = 0
            }
        }

        func record(watcher: Int, state playerState: CastdPlayerState, at time: UInt64) {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard playerState == state.target, state.times[watcher] == nil else { return nil }
                state.times[watcher] = time
                state.received += 1
                guard state.received == state.times.count else { return nil }
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }

        /// Returns once every watcher has recorded, or after `timeout`; the times recorded.
        func wait(timeout: Duration) async -> [UInt64?] {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await withCheckedContinuation { continuation in
                        let done = self.state.withLock { state -> Bool in
                            if state.received == state.times.count { return true }
                            state.waiter = continuation
                            return false
                        }
                        if done { continuation.resume() }
                    }
                }
                group.addTask { try? await Task.sleep(for: timeout) }
                await group.next()
                group.cancelAll()
                // Release the waiter if the timeout won.
                let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume()
                await group.waitForAll()
            }
            return state.withLock { $0.times }
        }
    }

    func run() async throws -> Figure {
        let environment = setup.environment
        var figure = Figure(
            number: 4, title: "Fan-out: one MEDIA_STATUS to every watcher",
            method: """
                N watchers, each a `CastdClient` on its own connection running `Watch`, in the driver. The driver \
                pauses and resumes the media through its own client, one at a time; for each change the emulated \
                device's tap stamps the first MEDIA_STATUS it writes to castd in the new state, and each watcher \
                stamps the first media event in that state it receives: the latency is the difference, on one \
                clock. Each change goes to every watcher before the next one starts. "all delivered" is, per \
                change, the latency of the last watcher to get it.
                """)
        var window = LoadWindow(live: [setup.daemon.pid])
        let triggers = environment.runs(120, quick: 10)
        for watchers in [1, 10, 100] {
            let (each, last, lost) = try await measure(watchers: watchers, triggers: triggers)
            figure.rows.append(
                .distribution(
                    "\(watchers) watcher\(watchers == 1 ? "" : "s"): each delivery", each,
                    target: watchers == 100 ? "p99 ≤ 5 ms" : "", met: watchers == 100 ? each.p99 <= 5_000_000 : nil))
            figure.rows.append(.distribution("\(watchers) watcher\(watchers == 1 ? "" : "s"): all delivered", last))
            if lost > 0 {
                figure.problems.append("\(watchers) watchers: \(lost) deliveries did not arrive within 5 s")
            }
        }
        window.finish(live: [setup.daemon.pid])
        figure.load = window
        return figure
    }

    /// Latencies of every delivery, of the last delivery per change, and how many never came.
    private func measure(watchers count: Int, triggers: Int) async throws -> (Samples, Samples, Int) {
        try await setup.ensurePlaying()
        var clients: [CastdClient] = []
        for _ in 0..<count { clients.append(try await setup.daemon.connect()) }
        let arrivals = Arrivals(watchers: count)
        let snapshots = Counter()
        var each: [UInt64] = []
        var last: [UInt64] = []
        var lost = 0
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    for try await event in client.watch() {
                        let time = monotonicNanos()
                        switch event.kind {
                        case .media(let media)?:
                            arrivals.record(watcher: index, state: media.playerState, at: time)
                        case .snapshot?:
                            snapshots.add(1)
                        default:
                            break
                        }
                    }
                }
            }
            try await waitUntil("\(count) watchers' snapshots") { snapshots.count >= count }
            var pause = true
            for _ in 0..<triggers {
                let target: CastdPlayerState = pause ? .paused : .playing
                arrivals.arm(target)
                let started = monotonicNanos()
                _ = try await (pause ? setup.controller.pause() : setup.controller.play())
                let times = await arrivals.wait(timeout: .seconds(5))
                let wanted = pause ? "PAUSED" : "PLAYING"
                guard
                    let sent = setup.device.log.since(started).first(where: {
                        $0.direction == .sent && $0.isMedia && $0.type == "MEDIA_STATUS" && $0.playerState == wanted
                    })?.time
                else {
                    throw BenchError("the emulator sent no MEDIA_STATUS \(wanted) after a \(pause ? "pause" : "play")")
                }
                let delivered = times.compactMap { $0 }
                lost += times.count - delivered.count
                each += delivered.map { $0 >= sent ? $0 - sent : 0 }
                if let latest = delivered.max(), delivered.count == times.count { last.append(latest - sent) }
                pause.toggle()
                // A short pause between changes, so that one change's tail does not meet the next.
                try await Task.sleep(for: .milliseconds(2))
            }
            group.cancelAll()
        }
        for client in clients { await client.close() }
        setup.device.log.clear()
        return (Samples(each), Samples(last), lost)
    }
}
