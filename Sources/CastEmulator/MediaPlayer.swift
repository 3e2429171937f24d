import CastProtocol

/// A media session: its queue, the current item and where its playback stands. Pure: time is
/// passed in; the device turns changes into messages.
///
/// Time is kept as a position at `since`: content seconds while the content plays, the current
/// ad clip's seconds while a break plays (content time stays at the break's position then).
/// Content advances at `playbackRate`, ad clips at 1.
struct MediaPlayer {
    static let playing = "PLAYING"
    static let paused = "PAUSED"
    static let buffering = "BUFFERING"
    static let idle = "IDLE"

    /// PAUSE | SEEK | STREAM_VOLUME | STREAM_MUTE | EDIT_TRACKS | PLAYBACK_RATE | STREAM_TRANSFER:
    /// what the Default Media Receiver reports for a single item.
    static let baseMediaCommands: Int64 = 274_447
    /// How far back a LIVE stream can be sought: a window of the last hour.
    static let liveWindow = 3600.0

    /// Where the live edge of a LIVE item was when it started; it moves with the clock.
    struct LiveEdge {
        var edge: Double
        var at: Duration
        /// The position playback joined the stream at.
        var joinedAt: Double
    }

    var mediaSessionID: Int
    /// The queue in play order (`orderId` is the index).
    var items: [MediaQueueItem]
    var currentIndex: Int
    var repeatMode = RepeatMode.off
    var playerState: String
    /// Content position (or ad clip position while a break plays) at `since`.
    var position: Double
    var since: Duration
    var playbackRate = 1.0
    var volumeLevel = 1.0
    var muted = false
    var ad: AdPlayback?
    /// Whether the status naming the preloaded next item has been broadcast.
    var preloadAnnounced = false
    var live: LiveEdge?
    /// How many times the queue has been shuffled: the shuffle's seed moves on each time.
    var shuffles = 0
    /// Whether the device has a screen: video content reports `videoInfo` then.
    var hasDisplay = true
    /// Set: statuses carry only this many items around the current one.
    var queueWindow: Int?
    /// Counts the queue's changes (QUEUE_CHANGE's `sequenceNumber`).
    var queueSequence = 0
    /// Counts the times an item became current, so that a fetch can tell which entry it was for.
    var entries = 0
    /// Counts SEEKs: a device fetching its media reads where each one lands.
    var seeks = 0
    /// Set: the current item is BUFFERING until its media has been fetched.
    var fetch: PendingMediaFetch?

    init(mediaSessionID: Int, items: [MediaQueueItem], startIndex: Int, now: Duration) {
        self.mediaSessionID = mediaSessionID
        self.items = items
        self.currentIndex = startIndex
        self.playerState = Self.buffering
        self.position = 0
        self.since = now
    }

    var current: MediaQueueItem {
        get { items[currentIndex] }
        set { items[currentIndex] = newValue }
    }

    var duration: Double { current.duration }

    /// Where the content ends: its duration, or for a LIVE item `duration` seconds after the
    /// position it was joined at (a live stream's times are not counted from 0).
    var contentEnd: Double {
        live.map { $0.joinedAt + duration } ?? duration
    }
    var media: [String: JSONValue] { current.media }

    // MARK: time

    func elapsed(at now: Duration) -> Double {
        playerState == Self.playing ? max(0, (now - since).seconds) : 0
    }

    /// The content's current time (frozen at the break's position while a break plays).
    func currentTime(at now: Duration) -> Double {
        guard ad == nil else { return position }
        var time = min(contentEnd, position + elapsed(at: now) * playbackRate)
        if let edge = liveEdge(at: now) { time = min(time, edge) }
        return time
    }

    /// Seconds into the current ad clip, if a break plays.
    func clipTime(at now: Duration) -> Double? {
        ad.map { min($0.clip.duration, $0.clipPosition + elapsed(at: now)) }
    }

    /// Folds the time played so far into the position, before a change of state or rate.
    mutating func settle(at now: Duration) {
        if var playing = ad {
            playing.clipPosition = clipTime(at: now) ?? 0
            ad = playing
        } else {
            position = currentTime(at: now)
        }
        since = now
    }

    func liveEdge(at now: Duration) -> Double? {
        live.map { $0.edge + max(0, (now - $0.at).seconds) }
    }

    /// Where a SEEK may go: 0…duration, or the live window of a LIVE item.
    func seekableRange(at now: Duration) -> ClosedRange<Double> {
        if let edge = liveEdge(at: now) {
            let end = min(edge, contentEnd)
            return min(end, max(0, edge - Self.liveWindow))...end
        }
        return 0...duration
    }

    // MARK: items

    /// Makes the item at `index` current, at `position` (the item's start time when nil),
    /// playing if `autoplay` (the item's own `autoplay` when nil); an unwatched pre-roll starts
    /// first.
    mutating func start(itemAt index: Int, at now: Duration, position start: Double? = nil, autoplay: Bool? = nil) {
        currentIndex = index
        let item = items[index]
        position = max(0, start ?? item.startTime)
        if !item.isLive {
            // An item that starts at its end would end at once, forever in a repeating queue.
            if start == nil, position >= item.duration { position = 0 }
            position = min(item.duration, position)
        }
        since = now
        ad = nil
        fetch = nil
        entries += 1
        preloadAnnounced = false
        live = item.isLive ? LiveEdge(edge: position, at: now, joinedAt: position) : nil
        playerState = (autoplay ?? item.autoplay) ? Self.playing : Self.paused
        if let preRoll = unwatchedBreaks.first(where: \.isPreRoll) {
            ad = AdPlayback(adBreak: preRoll)
        }
    }

    /// PLAYING or PAUSED as a command asks: at once, or once the media has been fetched.
    mutating func request(_ state: String) {
        if fetch != nil { fetch?.targetState = state } else { playerState = state }
    }

    /// The fetch for the current item ended well: it plays (or pauses) from where it was.
    mutating func mediaArrived(at now: Duration) {
        guard let waiting = fetch else { return }
        fetch = nil
        playerState = waiting.targetState
        since = now
    }

    func index(ofItem id: Int64?) -> Int? {
        guard let id else { return nil }
        return items.firstIndex { Int64($0.itemID) == id }
    }

    /// The item that plays when the current one ends, other than the current one itself.
    var autoAdvanceIndex: Int? {
        switch repeatMode {
        case .single: nil
        case .off, .allAndShuffle: currentIndex + 1 < items.count ? currentIndex + 1 : nil
        case .all: items.count > 1 ? (currentIndex + 1) % items.count : nil
        }
    }

    /// The item `offset` places away in play order; it wraps around in the REPEAT_ALL modes.
    func jumpTarget(_ offset: Int) -> Int? {
        let target = currentIndex + offset
        if items.indices.contains(target) { return target }
        guard repeatMode == .all || repeatMode == .allAndShuffle, !items.isEmpty else { return nil }
        return ((target % items.count) + items.count) % items.count
    }

    var hasNext: Bool { items.count > 1 && jumpTarget(1) != nil }
    var hasPrevious: Bool { items.count > 1 && jumpTarget(-1) != nil }

    /// The next item, once the current one is within that item's `preloadTime` of its end.
    func preloadedItemID(at now: Duration) -> Int? {
        guard ad == nil, let next = autoAdvanceIndex, let preloadTime = items[next].preloadTime,
            contentEnd - currentTime(at: now) <= preloadTime
        else { return nil }
        return items[next].itemID
    }

    // MARK: ad breaks

    var unwatchedBreaks: [AdBreak] {
        AdBreak.breaks(in: media).filter { !$0.isWatched }
    }

    /// Whether SKIP_AD is accepted now.
    func isSkippable(at now: Duration) -> Bool {
        guard let ad, let whenSkippable = ad.clip.whenSkippable, let clipTime = clipTime(at: now) else {
            return false
        }
        return clipTime >= whenSkippable
    }

    enum ClipEnd {
        case nextClip
        case breakEnded(AdBreak)
    }

    /// Ends the current ad clip (played out or skipped): the break's next clip starts, or the
    /// break is marked watched and the content resumes.
    mutating func endClip(at now: Duration) -> ClipEnd? {
        guard var playing = ad else { return nil }
        since = now
        if playing.clipIndex + 1 < playing.adBreak.clips.count {
            playing.clipIndex += 1
            playing.clipPosition = 0
            playing.skippableAnnounced = false
            ad = playing
            return .nextClip
        }
        AdBreak.markWatched(index: playing.adBreak.index, in: &current.media)
        ad = nil
        return .breakEnded(playing.adBreak)
    }

    // MARK: events

    /// What happens next on its own while playing.
    enum Event {
        case clipSkippable
        case clipEnded
        case breakReached(AdBreak)
        case preload
        case contentEnded
    }

    /// The next event and when it happens; nil when nothing will (paused, buffering).
    var nextEvent: (time: Duration, event: Event)? {
        guard playerState == Self.playing else { return nil }
        func after(_ seconds: Double) -> Duration { since + .seconds(max(0, seconds)) }
        if let ad {
            let end = after(ad.clip.duration - ad.clipPosition)
            if !ad.skippableAnnounced, let skippable = ad.clip.whenSkippable, skippable < ad.clip.duration {
                let time = after(skippable - ad.clipPosition)
                if time < end { return (time, .clipSkippable) }
            }
            return (end, .clipEnded)
        }
        guard playbackRate > 0 else { return nil }
        var next: (time: Duration, event: Event) = (after((contentEnd - position) / playbackRate), .contentEnded)
        let midRoll = unwatchedBreaks.filter { $0.position > position && $0.position < contentEnd }
            .min { $0.position < $1.position }
        if let midRoll {
            let time = after((midRoll.position - position) / playbackRate)
            if time <= next.time { next = (time, .breakReached(midRoll)) }
        }
        if !preloadAnnounced, let index = autoAdvanceIndex, let preloadTime = items[index].preloadTime {
            let time = after((contentEnd - preloadTime - position) / playbackRate)
            if time < next.time { next = (time, .preload) }
        }
        return next
    }

    // MARK: status

    func supportedMediaCommands(at now: Duration) -> Int64 {
        var commands = Self.baseMediaCommands
        if ad != nil { commands &= ~CastMediaCommand.seek }  // no seeking inside an ad
        if isSkippable(at: now) { commands |= CastMediaCommand.skipAd }
        if hasNext { commands |= CastMediaCommand.queueNext }
        if hasPrevious { commands |= CastMediaCommand.queuePrevious }
        if items.count > 1 {
            commands |=
                CastMediaCommand.queueShuffle | CastMediaCommand.queueRepeatAll | CastMediaCommand.queueRepeatOne
        }
        return commands
    }

    var volumeJSON: JSONValue { ["level": .number(volumeLevel), "muted": .bool(muted)] }

    /// One MEDIA_STATUS entry. A full status (`includeMedia`) carries `media` and every item's
    /// media; broadcasts after commands leave them out, as real devices do.
    func statusEntry(at now: Duration, includeMedia: Bool, loadingItemID: Int? = nil) -> JSONValue {
        var entry: [String: JSONValue] = [
            "mediaSessionId": .number(Double(mediaSessionID)),
            "playbackRate": .number(playbackRate),
            "playerState": .string(playerState),
            "currentTime": .number(Self.rounded(currentTime(at: now))),
            "supportedMediaCommands": .number(Double(supportedMediaCommands(at: now))),
            "volume": volumeJSON,
            "activeTrackIds": .array(current.activeTrackIDs.map { .number(Double($0)) }),
            "currentItemId": .number(Double(current.itemID)),
            "repeatMode": .string(repeatMode.rawValue),
            "items": .array(
                windowIndices.map { items[$0].json(orderID: $0, includeMedia: includeMedia) }),
        ]
        if includeMedia { entry["media"] = .object(media) }
        if let loadingItemID { entry["loadingItemId"] = .number(Double(loadingItemID)) }
        if let preloaded = preloadedItemID(at: now) { entry["preloadedItemId"] = .number(Double(preloaded)) }
        if let breakStatus = breakStatus(at: now) { entry["breakStatus"] = breakStatus }
        if hasDisplay, current.isVideo { entry["videoInfo"] = ["width": 1920, "height": 1080, "hdrType": "sdr"] }
        if let edge = liveEdge(at: now) {
            entry["liveSeekableRange"] = [
                "start": .number(Self.rounded(max(0, edge - Self.liveWindow))), "end": .number(Self.rounded(edge)),
                "isMovingWindow": true, "isLiveDone": false,
            ]
        }
        return .object(entry)
    }

    /// The indices of the items a status carries: all, or `queueWindow` of them around the
    /// current one (one before it when it fits, the rest after).
    var windowIndices: Range<Int> {
        guard let window = queueWindow.map({ max(1, $0) }), window < items.count else { return items.indices }
        let start = min(max(0, currentIndex - (window - 1) / 2), items.count - window)
        return start..<(start + window)
    }

    func breakStatus(at now: Duration) -> JSONValue? {
        guard let ad, let clipTime = clipTime(at: now) else { return nil }
        var status: [String: JSONValue] = [
            "breakId": .string(ad.adBreak.id),
            "breakClipId": .string(ad.clip.id),
            "currentBreakTime": .number(Self.rounded(ad.timeBeforeClip + clipTime)),
            "currentBreakClipTime": .number(Self.rounded(clipTime)),
        ]
        if let whenSkippable = ad.clip.whenSkippable { status["whenSkippable"] = .number(whenSkippable) }
        return .object(status)
    }

    /// The last status of a session that has ended: IDLE with the reason, no media (as real
    /// devices send it).
    func idleEntry(reason: String) -> JSONValue {
        [
            "mediaSessionId": .number(Double(mediaSessionID)),
            "playbackRate": .number(playbackRate),
            "playerState": .string(Self.idle),
            "idleReason": .string(reason),
            "currentTime": 0,
            "supportedMediaCommands": .number(Double(Self.baseMediaCommands)),
            "volume": volumeJSON,
            "activeTrackIds": [],
            "currentItemId": .number(Double(current.itemID)),
            "repeatMode": .string(repeatMode.rawValue),
        ]
    }

    /// Milliseconds are enough, and keep the JSON short.
    static func rounded(_ seconds: Double) -> Double {
        (seconds * 1000).rounded() / 1000
    }
}
