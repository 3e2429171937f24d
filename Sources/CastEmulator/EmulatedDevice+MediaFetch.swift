import CastProtocol

/// A device that fetches its media (``EmulatorConfiguration/fetchMedia``): an item that becomes
/// current stays BUFFERING until the emulator has fetched the start of its content and its text
/// tracks; then it plays (the LOAD is answered), or, when a fetch failed, the session ends IDLE
/// ERROR and the LOAD fails with LOAD_FAILED MEDIA_NETWORK (103), as on a real receiver that
/// cannot reach the URL. The fetching itself is the emulator's (`MediaFetchControl`).
extension EmulatedDevice {
    /// Holds `session`'s new current item BUFFERING for its fetch (MediaPlayer.holdForFetch);
    /// records the URLs left alone.
    mutating func holdForFetch(_ session: inout MediaPlayer, at now: Duration, _ outcome: inout DeviceOutcome) {
        for record in session.holdForFetch(at: now) {
            history.record(record)
            outcome.fetchRecords.append(record)
            let reason = record.notFetched ?? ""
            outcome.note(.info, "media session \(session.mediaSessionID): not fetched: \(reason): \(record.url)")
        }
    }

    /// The fetch for `entry` of media session `mediaSessionID` ended, with `failure` or well.
    /// Ignored when that item is no longer the one waiting.
    mutating func mediaFetched(mediaSessionID: Int, entry: Int, failure: MediaFault?, now: Duration) -> DeviceOutcome {
        var outcome = DeviceOutcome()
        guard let transportID = running?.transportID, var session = player, session.mediaSessionID == mediaSessionID,
            let waiting = session.fetch, waiting.entry == entry
        else { return outcome }
        let deadlineBefore = nextDeadline
        let name = "media session \(mediaSessionID)"
        if let failure {
            player = nil
            outcome.note(.info, "\(name): \(failure.verb) \(session.current.contentID) (\(failure)) → IDLE (ERROR)")
            broadcastStatus(session.idleEntry(reason: "ERROR"), transportID, &outcome)
            if var (command, record) = waiting.load {
                record.result = .loadFailed
                history.record(record)
                let failed = loadFailed(command.requestID, itemID: session.current.itemID, code: failure.code)
                command.now = now
                reply(failed, to: command, &outcome)
            }
        } else {
            session.mediaArrived(at: now)
            player = session
            outcome.note(.info, "\(name): media of item \(session.current.itemID) fetched → \(session.playerState)")
            if var (command, record) = waiting.load {
                record.result = .loaded
                history.record(record)
                command.now = now
                replyAndBroadcastStatus(command, includeMedia: true, &outcome)
            } else {
                broadcastStatus(session.statusEntry(at: now, includeMedia: true), transportID, &outcome)
            }
        }
        if nextDeadline != deadlineBefore { outcome.playbackChanged = true }
        return outcome
    }

    /// A LOAD still waiting for its media is answered LOAD_CANCELLED: another load, a STOP or a
    /// jump to another item came first.
    mutating func cancelLoad(awaiting fetch: PendingMediaFetch?, _ outcome: inout DeviceOutcome) {
        guard case (let command, var record)? = fetch?.load else { return }
        record.result = .loadCancelled
        history.record(record)
        reply(["type": "LOAD_CANCELLED", "requestId": command.requestID], to: command, &outcome)
    }
}
