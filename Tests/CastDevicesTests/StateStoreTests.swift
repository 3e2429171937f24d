import CastDevices
import CastdAPI
import Testing

/// The store's ordering and lag rules, without sockets.
struct StateStoreTests {
    func device(_ id: String, _ name: String) -> (String, (inout CastdDevice) -> Void) {
        (id, { $0.friendlyName = name })
    }

    @Test func snapshotFirstThenDeltasInOrder() async throws {
        let store = CastdStateStore()
        store.updateDevice(id: "a") { $0.friendlyName = "A" }
        let subscription = store.watch()
        var iterator = subscription.makeAsyncIterator()
        store.updateDevice(id: "b") { $0.friendlyName = "B" }
        store.updateDevice(id: "a") { $0.friendlyName = "A2" }
        store.updateDevice(id: "a") { $0.friendlyName = "A2" }  // no change: no event
        store.removeDevice(id: "b")
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
        let store = CastdStateStore(watcherQueueLimit: 4)
        // A device first, so that the cast state stays NOT_CONNECTED: one event per device.
        store.updateDevice(id: "seed") { $0.friendlyName = "Seed" }
        let start = store.sequence
        let slow = store.watch()
        let fast = store.watch()
        var fastIterator = fast.makeAsyncIterator()
        _ = await fastIterator.next()  // snapshot
        for i in 0..<20 {
            store.updateDevice(id: "d\(i)") { $0.friendlyName = "D\(i)" }
            #expect(await fastIterator.next()?.sequence == start + UInt64(i + 1))
        }
        var slowIterator = slow.makeAsyncIterator()
        var lagged = false
        var last: CastdEvent?
        // The slow watcher rebuilds the same state from its last snapshot and the deltas after it.
        var devices: Set<String> = []
        while last?.sequence != store.sequence, let event = await slowIterator.next() {
            switch event.kind {
            case .lagged?: lagged = true
            case .snapshot(let s)?: devices = Set(s.devices.map(\.id))
            case .deviceAdded(let d)?: devices.insert(d.id)
            default: break
            }
            last = event
        }
        #expect(lagged)
        #expect(devices.count == 21)
        #expect(last?.sequence == start + 20)
    }

    @Test func endedSessionsLeaveTheSnapshot() {
        let store = CastdStateStore()
        var session = CastdSession()
        session.deviceID = "tv"
        session.state = .started
        store.updateSession(session)
        #expect(store.snapshot().sessions.count == 1)
        session.state = .ended
        store.updateSession(session)
        #expect(store.snapshot().sessions.isEmpty)
    }

    /// The Cast SDK's cast state, castd's and each device's, through every value: devices
    /// appear, a session starts, is suspended and resumed, ends, and the device vanishes. Each
    /// change is an event right after the one that caused it.
    @Test func theCastStateFollowsDevicesAndSessions() async throws {
        let store = CastdStateStore()
        #expect(store.castState == .noDevicesAvailable)
        #expect(store.snapshot().castState == .noDevicesAvailable)
        let subscription = store.watch()
        var events = subscription.makeAsyncIterator()
        _ = await events.next()  // snapshot

        /// The next events, as words: "castd X←Y", "device tv X", "session X", "added tv".
        func next(_ count: Int) async -> [String] {
            var words: [String] = []
            for _ in 0..<count {
                switch await events.next()?.kind {
                case .castState(let change)?: words.append("castd \(change.state)←\(change.previous)")
                case .deviceAdded(let device)?: words.append("added \(device.id) \(device.castState)")
                case .deviceUpdated(let device)?: words.append("device \(device.id) \(device.castState)")
                case .deviceRemoved(let device)?: words.append("removed \(device.id)")
                case .session(let session)?: words.append("session \(session.state)")
                default: words.append("other")
                }
            }
            return words
        }

        store.updateDevice(id: "tv") { $0.friendlyName = "TV" }
        #expect(await next(2) == ["added tv notConnected", "castd notConnected←noDevicesAvailable"])
        store.updateDevice(id: "radio") { $0.friendlyName = "Radio" }
        #expect(await next(1) == ["added radio notConnected"], "a second device changes nothing")

        var session = CastdSession()
        session.deviceID = "tv"
        let steps: [(CastdSessionState, CastdCastState, [String])] = [
            (.starting, .connecting, ["device tv connecting", "castd connecting←notConnected"]),
            (.started, .connected, ["device tv connected", "castd connected←connecting"]),
            (.suspended, .connecting, ["device tv connecting", "castd connecting←connected"]),
            (.resuming, .connecting, []),
            (.resumed, .connected, ["device tv connected", "castd connected←connecting"]),
            (.ending, .connected, []),
            (.ended, .notConnected, ["device tv notConnected", "castd notConnected←connected"]),
        ]
        for (state, castState, events) in steps {
            session.state = state
            store.updateSession(session)
            #expect(await next(1 + events.count) == ["session \(state)"] + events)
            #expect(store.device(id: "tv")?.castState == castState, "\(state)")
            #expect(store.castState == castState, "\(state)")
        }
        #expect(store.device(id: "radio")?.castState == .notConnected)

        store.removeDevice(id: "radio")
        #expect(await next(1) == ["removed radio"])
        store.removeDevice(id: "tv")
        #expect(await next(2) == ["removed tv", "castd noDevicesAvailable←notConnected"])
        #expect(store.snapshot().castState == .noDevicesAvailable)
    }

    /// A device known after its session started (found again by mDNS) is listed connected.
    @Test func aDeviceListedDuringItsSessionIsConnected() {
        let store = CastdStateStore()
        var session = CastdSession()
        session.deviceID = "tv"
        session.state = .started
        store.updateSession(session)
        #expect(store.castState == .connected)
        store.updateDevice(id: "tv") { $0.friendlyName = "TV" }
        #expect(store.device(id: "tv")?.castState == .connected)
        #expect(store.snapshot().castState == .connected)
    }
}
