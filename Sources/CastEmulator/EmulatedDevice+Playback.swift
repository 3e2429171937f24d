import CastProtocol

/// Playback over time: items start, end and follow each other; ad breaks come and go. The
/// device has no clock: ``nextDeadline`` says when something happens next, ``advance(to:)``
/// makes it happen.
extension EmulatedDevice {
    /// When the media session changes on its own next (an item or ad clip ends, a mid-roll
    /// starts, an ad becomes skippable, the next item is preloaded), if it is playing.
    var nextDeadline: Duration? { player?.nextEvent?.time }

    /// Lets time pass: every event due by `now` happens in order, each told to every sender.
    mutating func advance(to now: Duration) -> DeviceOutcome {
        var outcome = DeviceOutcome()
        let deadlineBefore = nextDeadline
        // Bounded, so that a huge jump of the clock over a repeating queue cannot spin forever.
        for _ in 0..<1000 {
            guard let transportID = running?.transportID, var session = player, let (time, event) = session.nextEvent,
                time <= now
            else { break }
            session.settle(at: time)
            player = session
            happen(event, at: time, transportID, &outcome)
        }
        if nextDeadline != deadlineBefore { outcome.playbackChanged = true }
        return outcome
    }

    private mutating func happen(
        _ event: MediaPlayer.Event, at time: Duration, _ transportID: String, _ outcome: inout DeviceOutcome
    ) {
        guard var session = player else { return }
        var includeMedia = false
        switch event {
        case .clipSkippable:
            session.ad?.skippableAnnounced = true
            outcome.note(
                .info, "media session \(session.mediaSessionID): ad clip \(session.ad?.clip.id ?? "") is skippable")
        case .clipEnded:
            player = session
            if endClip(at: time, transportID, &outcome) { return }
            guard let ended = player else { return }
            session = ended
            includeMedia = session.ad == nil  // the break is now marked watched in the media
        case .breakReached(let adBreak):
            session.position = adBreak.position
            session.ad = AdPlayback(adBreak: adBreak)
            outcome.note(.info, "media session \(session.mediaSessionID): break \(adBreak.id) at \(adBreak.position) s")
        case .preload:
            session.preloadAnnounced = true
        case .contentEnded:
            session.position = session.contentEnd
            if let postRoll = session.unwatchedBreaks.first(where: \.isPostRoll) {
                session.ad = AdPlayback(adBreak: postRoll)
                outcome.note(.info, "media session \(session.mediaSessionID): post-roll break \(postRoll.id)")
            } else {
                player = session
                finishCurrentItem(at: time, transportID, &outcome)
                return
            }
        }
        player = session
        broadcastStatus(session.statusEntry(at: time, includeMedia: includeMedia), transportID, &outcome)
    }

    /// Ends the current ad clip (played out or skipped). Returns true when that also ended the
    /// item (a post-roll), whose consequences have then been sent.
    mutating func endClip(at time: Duration, _ transportID: String, _ outcome: inout DeviceOutcome) -> Bool {
        guard var session = player, let ending = session.endClip(at: time) else { return false }
        player = session
        guard case .breakEnded(let adBreak) = ending else { return false }
        outcome.note(.info, "media session \(session.mediaSessionID): break \(adBreak.id) watched")
        guard adBreak.isPostRoll else { return false }
        finishCurrentItem(at: time, transportID, &outcome)
        return true
    }

    /// The current item has played out: what comes next follows the repeat mode. REPEAT_OFF:
    /// the next item, or IDLE FINISHED after the last; REPEAT_ALL: the next, wrapping around;
    /// REPEAT_SINGLE: the same item again; REPEAT_ALL_AND_SHUFFLE: the next, and after the last
    /// the queue is shuffled and starts again from the first item of the new order.
    mutating func finishCurrentItem(at time: Duration, _ transportID: String, _ outcome: inout DeviceOutcome) {
        guard var session = player else { return }
        let count = session.items.count
        let next: Int?
        switch session.repeatMode {
        case .single: next = session.currentIndex
        case .off: next = session.currentIndex + 1 < count ? session.currentIndex + 1 : nil
        case .all: next = (session.currentIndex + 1) % count
        case .allAndShuffle:
            if session.currentIndex + 1 < count {
                next = session.currentIndex + 1
            } else {
                session.shuffle(restart: true)
                next = 0
            }
        }
        guard let next else {
            player = nil
            outcome.note(.info, "media session \(session.mediaSessionID): reached its end → IDLE (FINISHED)")
            broadcastStatus(session.idleEntry(reason: "FINISHED"), transportID, &outcome)
            return
        }
        player = session
        guard enterItem(at: next, position: nil, transportID, now: time, &outcome), let started = player else { return }
        outcome.note(
            .info, "media session \(started.mediaSessionID): item \(started.current.itemID) → \(started.playerState)")
        broadcastStatus(started.statusEntry(at: time, includeMedia: true), transportID, &outcome)
    }

    /// Makes the item at `index` current: a BUFFERING broadcast naming it in `loadingItemId`,
    /// then it plays (or waits, paused, if it does not autoplay; `autoplay` overrides the
    /// item's). Content the device cannot play ends the session instead (IDLE ERROR, broadcast)
    /// and returns false.
    mutating func enterItem(
        at index: Int, position: Double?, autoplay: Bool? = nil, _ transportID: String, now: Duration,
        _ outcome: inout DeviceOutcome
    ) -> Bool {
        guard var session = player else { return false }
        cancelLoad(awaiting: session.fetch, &outcome)
        session.start(itemAt: index, at: now, position: position, autoplay: autoplay)
        if isUnplayable(session.current) {
            player = nil
            outcome.note(
                .info,
                "media session \(session.mediaSessionID): cannot play \(session.current.contentType ?? "") → IDLE (ERROR)"
            )
            broadcastStatus(session.idleEntry(reason: "ERROR"), transportID, &outcome)
            return false
        }
        if settings.fetchMedia { holdForFetch(&session, at: now, &outcome) }
        var loading = session
        loading.playerState = MediaPlayer.buffering
        broadcastStatus(
            loading.statusEntry(at: now, includeMedia: true, loadingItemID: session.current.itemID), transportID,
            &outcome
        )
        player = session
        return true
    }
}
