import CastDevices
import CastdAPI
import Testing

/// The hub's ordering and lag rules, without sockets.
struct StateStoreTests {
    func device(_ id: String, _ name: String) -> (String, (inout CastdDevice) -> Void) {
        (id, { $0.friendlyName = name })
    }

    @Test func snapshotFirstThenDeltasInOrder() async throws {
        let hub = CastdStateStore()
        hub.updateDevice(id: "a") { $0.friendlyName = "A" }
        let subscription = hub.watch()
        var iterator = subscription.makeAsyncIterator()
        hub.updateDevice(id: "b") { $0.friendlyName = "B" }
        hub.updateDevice(id: "a") { $0.friendlyName = "A2" }
        hub.updateDevice(id: "a") { $0.friendlyName = "A2" }  // no change: no event
        hub.removeDevice(id: "b")
        let snapshot = try #require(await iterator.next())
        guard case .snapshot(let s)? = snapshot.kind else { Issue.record("no snapshot first"); return }
        #expect(s.devices.map(\.id) == ["a"])
        var kinds: [String] = []
        var sequences: [UInt64] = []
        for _ in 0..<3 {
            let event = try #require(await iterator.next())
            sequences.append(event.sequence)
            switch event.kind {
            case .deviceAdded(let d)?: kinds.append("added \(d.id)")
            case .deviceUpdated(let d)?: kinds.append("updated \(d.friendlyName)")
            case .deviceRemoved(let d)?: kinds.append("removed \(d.id)")
            default: kinds.append("other")
            }
        }
        #expect(kinds == ["added b", "updated A2", "removed b"])
        #expect(sequences == [snapshot.sequence + 1, snapshot.sequence + 2, snapshot.sequence + 3])
    }

    @Test func aSlowWatcherLagsAloneAndGetsAFreshSnapshot() async throws {
        let hub = CastdStateStore(watcherQueueLimit: 4)
        let slow = hub.watch()
        let fast = hub.watch()
        var fastIterator = fast.makeAsyncIterator()
        _ = await fastIterator.next()  // snapshot
        for i in 0..<20 {
            hub.updateDevice(id: "d\(i)") { $0.friendlyName = "D\(i)" }
            #expect(await fastIterator.next()?.sequence == UInt64(i + 1))
        }
        var slowIterator = slow.makeAsyncIterator()
        var lagged = false
        var last: CastdEvent?
        // The slow watcher rebuilds the same state from its last snapshot and the deltas after it.
        var devices: Set<String> = []
        while last?.sequence != hub.sequence, let event = await slowIterator.next() {
            switch event.kind {
            case .lagged?: lagged = true
            case .snapshot(let s)?: devices = Set(s.devices.map(\.id))
            case .deviceAdded(let d)?: devices.insert(d.id)
            default: break
            }
            last = event
        }
        #expect(lagged)
        #expect(devices.count == 20)
        #expect(last?.sequence == 20)
    }

    @Test func endedSessionsLeaveTheSnapshot() {
        let hub = CastdStateStore()
        var session = CastdSession()
        session.deviceID = "tv"
        session.state = .started
        hub.updateSession(session)
        #expect(hub.snapshot().sessions.count == 1)
        session.state = .ended
        hub.updateSession(session)
        #expect(hub.snapshot().sessions.isEmpty)
    }
}
