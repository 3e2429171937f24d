import CastDevices
import CastdAPI
import Testing

/// One fold (`CastdState.apply`) for castd's store and every client: a watcher that folds what
/// it is sent holds what castd holds, and the rules of each event are the ones clients read.
struct StateFoldTests {
    func session(_ device: String, _ state: Castd_V1_SessionState) -> CastdSession {
        var session = CastdSession()
        session.deviceID = device
        session.sessionID = "s-\(device)"
        session.state = state
        return session
    }

    func media(_ device: String, session: Int64, playing: Bool = true) -> CastdMediaStatus {
        var status = CastdMediaStatus()
        status.deviceID = device
        status.mediaSessionID = session
        status.playerState = playing ? .playing : .idle
        status.media.contentID = session == 0 ? "" : "https://example.com/\(device).mp4"
        return status
    }

    /// A watcher that folds every event it is sent holds, at the end, exactly the state a new
    /// watcher's snapshot gives: castd's store keeps its state with the same fold.
    @Test func aWatcherThatFoldsItsEventsHoldsWhatCastdHolds() async throws {
        let store = CastdStateStore()
        let subscription = store.watch()
        var iterator = subscription.makeAsyncIterator()
        store.updateDevice(id: "a") { $0.friendlyName = "A" }
        store.updateDevice(id: "b") { $0.friendlyName = "B" }
        store.updateSession(session("a", .started))
        store.updateMedia(media("a", session: 7))
        var change = Castd_V1_QueueChange()
        change.deviceID = "a"
        change.mediaSessionID = 7
        change.kind = .inserted
        change.itemIds = [3]
        change.order = [1, 3, 2]
        store.updateQueue([change], media: nil)
        store.updateSession(session("b", .started))
        store.updateMedia(media("b", session: 9))
        store.updateSession(session("b", .ended))  // b's media stays while b is listed
        store.removeDevice(id: "b")  // then goes with it: no session holds it
        store.updateMedia(media("a", session: 0, playing: false))  // plays nothing: not kept
        let last = store.sequence

        var folded = CastdState()
        while folded.sequence < last {
            let event = try #require(await iterator.next())
            folded.apply(event)
        }
        var fresh = store.watch().makeAsyncIterator()
        let first = try #require(await fresh.next())
        guard case .snapshot(let snapshot)? = first.kind else {
            Issue.record("a watcher's first event is not a snapshot: \(first)")
            return
        }
        let castds = CastdState(snapshot, sequence: first.sequence)
        #expect(folded == castds)
        #expect(folded.devices.keys.sorted() == ["a"] && folded.media.isEmpty)
        #expect(folded.sessions.keys.sorted() == ["a"] && folded.castState == .connected)
    }

    @Test func eachEventsRule() {
        var state = CastdState()
        var added = CastdEvent()
        var device = CastdDevice()
        device.id = "tv"
        added.kind = .deviceAdded(device)
        #expect(state.applyReportingDevices(added) == ["tv"])

        var started = CastdEvent()
        started.kind = .session(session("tv", .started))
        state.apply(started)
        var playing = CastdEvent()
        playing.kind = .media(media("tv", session: 4))
        state.apply(playing)

        // A queue change of another media session leaves the order castd said alone.
        var stale = Castd_V1_QueueChange()
        stale.deviceID = "tv"
        stale.mediaSessionID = 3
        stale.order = [9]
        var queue = CastdEvent()
        queue.kind = .queue(stale)
        #expect(state.applyReportingDevices(queue).isEmpty && state.media["tv"]?.queueItemIds == [])
        stale.mediaSessionID = 4
        queue.kind = .queue(stale)
        #expect(state.applyReportingDevices(queue) == ["tv"] && state.media["tv"]?.queueItemIds == [9])

        // The device goes, but its session holds its media.
        var removed = CastdEvent()
        removed.kind = .deviceRemoved(device)
        state.apply(removed)
        #expect(state.devices["tv"] == nil && state.media["tv"] != nil)

        // Transferred: the session moves.
        var transfer = Castd_V1_SessionTransfer()
        transfer.fromDeviceID = "tv"
        transfer.toDeviceID = "speaker"
        transfer.session = session("speaker", .started)
        var moved = CastdEvent()
        moved.kind = .transferred(transfer)
        #expect(state.applyReportingDevices(moved) == ["tv", "speaker"])
        #expect(state.sessions["tv"] == nil && state.sessions["speaker"]?.sessionID == "s-speaker")

        // A failed resume is not a live session.
        var failed = CastdEvent()
        failed.kind = .session(session("speaker", .resumeFailed))
        state.apply(failed)
        #expect(state.sessions.isEmpty)
    }
}
