/// One entry of MEDIA_STATUS `status[]`: the state of one media session.
public struct CastMediaStatus: Sendable, Hashable {
    public var mediaSessionID: Int64
    /// "IDLE", "PLAYING", "PAUSED", "BUFFERING", "LOADING"; "UNKNOWN" when absent.
    public var playerState: String
    /// Why the player is idle: "CANCELLED", "INTERRUPTED", "FINISHED", "ERROR".
    public var idleReason: String?
    /// Seconds; 0 when absent or not a finite number.
    public var currentTime: Double
    /// 1 when absent or not a finite number.
    public var playbackRate: Double
    /// Often omitted by devices after the first status: keep the last one per media session.
    public var media: CastMediaInformation?
    public var volume: CastVolume?
    /// The bits of the media commands the receiver supports.
    public var supportedMediaCommands: Int64
    public var activeTrackIDs: [Int64]?
    /// The queue, when the receiver lists it.
    public var items: [CastQueueItem]?
    public var currentItemID: Int64?
    public var loadingItemID: Int64?
    public var preloadedItemID: Int64?
    /// "REPEAT_OFF", "REPEAT_ALL", "REPEAT_SINGLE" or "REPEAT_ALL_AND_SHUFFLE".
    public var repeatMode: String?
    public var breakStatus: CastBreakStatus?
    public var videoInfo: CastVideoInfo?
    public var liveSeekableRange: CastLiveSeekableRange?
    public var customData: JSONValue?
    /// Fields the entry has but that cannot be read (a `currentTime` that is an object, a volume
    /// level that is a word): no news about them, not 0.
    public var unreadable: [CastStatusField]

    public init(
        mediaSessionID: Int64, playerState: String, idleReason: String? = nil, currentTime: Double = 0,
        playbackRate: Double = 1, media: CastMediaInformation? = nil, volume: CastVolume? = nil,
        supportedMediaCommands: Int64 = 0
    ) {
        self.mediaSessionID = mediaSessionID
        self.playerState = playerState
        self.idleReason = idleReason
        self.currentTime = currentTime
        self.playbackRate = playbackRate
        self.media = media
        self.volume = volume
        self.supportedMediaCommands = supportedMediaCommands
        self.unreadable = []
    }

    /// Nil without a `mediaSessionId` (an entry that says there is no media session).
    public init?(json: JSONValue) {
        let f = JSONFields(json)
        guard let id = f.integer("mediaSessionId") else { return nil }
        mediaSessionID = id
        playerState = f.string("playerState") ?? "UNKNOWN"
        idleReason = f.string("idleReason")
        currentTime = f.number("currentTime") ?? 0
        playbackRate = f.number("playbackRate") ?? 1
        media = f.object("media", CastMediaInformation.init(json:))
        volume = CastVolume(json: f.members["volume"])
        supportedMediaCommands = f.integer("supportedMediaCommands") ?? 0
        activeTrackIDs = f.integers("activeTrackIds")
        items = f.objects("items", CastQueueItem.init(json:))
        currentItemID = f.integer("currentItemId")
        loadingItemID = f.integer("loadingItemId")
        preloadedItemID = f.integer("preloadedItemId")
        repeatMode = f.string("repeatMode")
        breakStatus = f.object("breakStatus", CastBreakStatus.init(json:))
        videoInfo = f.object("videoInfo", CastVideoInfo.init(json:))
        liveSeekableRange = f.object("liveSeekableRange", CastLiveSeekableRange.init(json:))
        customData = f.json("customData")
        unreadable = Self.unreadableFields(f)
    }

    private static func unreadableFields(_ f: JSONFields) -> [CastStatusField] {
        var unreadable: [CastStatusField] = []
        if f.unreadableNumber("currentTime") { unreadable.append(.currentTime) }
        if f.unreadableNumber("playbackRate") { unreadable.append(.playbackRate) }
        unreadable += CastStatusField.unreadableVolume(f.members["volume"])
        return unreadable
    }

    /// Playing, paused or buffering: media someone has going.
    public var isActive: Bool { [.playing, .paused, .buffering].contains(state) }
    /// Idle with a reason: the media session is over.
    public var hasEnded: Bool { state == .idle && idleReason != nil }
    /// Over by itself, finished or failed; not stopped, cancelled or interrupted.
    public var endedByItself: Bool { state == .idle && (idleReason == "FINISHED" || idleReason == "ERROR") }

    /// The entries of a MEDIA_STATUS payload: `[]` when there is no media session (`status`
    /// absent, null, an empty array, entries without `mediaSessionId`); nil when `status`
    /// cannot be read (a string or a number, entries whose `mediaSessionId` is not a number).
    public static func read(_ payload: JSONValue) -> [CastMediaStatus]? {
        func unreadable(_ entry: JSONValue) -> Bool { entry.objectValue == nil || entry["mediaSessionId"] != nil }
        switch payload["status"] {
        case nil, .null?:
            return []
        case .array(let items)?:
            let entries = items.compactMap(CastMediaStatus.init(json:))
            return entries.isEmpty && items.contains(where: unreadable) ? nil : entries
        case let object? where object.objectValue != nil:
            if let entry = CastMediaStatus(json: object) { return [entry] }
            return unreadable(object) ? nil : []
        default:
            return nil
        }
    }

    /// The entries of a MEDIA_STATUS payload; none when `status` is absent or cannot be read.
    public static func entries(in payload: JSONValue) -> [CastMediaStatus] { read(payload) ?? [] }

    public var json: JSONValue {
        var o = JSONMembers([
            "mediaSessionId": .number(Double(mediaSessionID)),
            "playerState": .string(playerState),
            "currentTime": .number(currentTime),
            "playbackRate": .number(playbackRate),
            "supportedMediaCommands": .number(Double(supportedMediaCommands)),
        ])
        o.put("idleReason", idleReason)
        o.put("media", media?.json)
        o.put("volume", volume?.json)
        o.put("activeTrackIds", activeTrackIDs)
        o.put("items", items?.map(\.json))
        o.put("currentItemId", currentItemID)
        o.put("loadingItemId", loadingItemID)
        o.put("preloadedItemId", preloadedItemID)
        o.put("repeatMode", repeatMode)
        o.put("breakStatus", breakStatus?.json)
        o.put("videoInfo", videoInfo?.json)
        o.put("liveSeekableRange", liveSeekableRange?.json)
        o.put("customData", customData)
        return o.json
    }
}

/// Where an ad break is (BreakStatus in MEDIA_STATUS).
public struct CastBreakStatus: Sendable, Hashable {
    public var breakID: String?
    public var breakClipID: String?
    public var currentBreakTime: Double?
    public var currentBreakClipTime: Double?
    /// Seconds into the clip after which it may be skipped; nil: never.
    public var whenSkippable: Double?

    public init() {}

    public init(json: JSONValue) {
        let f = JSONFields(json)
        breakID = f.string("breakId")
        breakClipID = f.string("breakClipId")
        currentBreakTime = f.number("currentBreakTime")
        currentBreakClipTime = f.number("currentBreakClipTime")
        whenSkippable = f.number("whenSkippable")
    }

    public var json: JSONValue {
        var o = JSONMembers()
        o.put("breakId", breakID)
        o.put("breakClipId", breakClipID)
        o.put("currentBreakTime", currentBreakTime)
        o.put("currentBreakClipTime", currentBreakClipTime)
        o.put("whenSkippable", whenSkippable)
        return o.json
    }
}

/// The video being played (VideoInformation).
public struct CastVideoInfo: Sendable, Hashable {
    public var width: Int64?
    public var height: Int64?
    /// "sdr", "hdr", "dv".
    public var hdrType: String?

    public init() {}

    public init(json: JSONValue) {
        let f = JSONFields(json)
        width = f.integer("width")
        height = f.integer("height")
        hdrType = f.string("hdrType")
    }

    public var json: JSONValue {
        var o = JSONMembers()
        o.put("width", width)
        o.put("height", height)
        o.put("hdrType", hdrType)
        return o.json
    }
}

/// The part of a live stream one can seek in (LiveSeekableRange).
public struct CastLiveSeekableRange: Sendable, Hashable {
    public var start: Double?
    public var end: Double?
    public var isMovingWindow: Bool?
    public var isLiveDone: Bool?

    public init() {}

    public init(json: JSONValue) {
        let f = JSONFields(json)
        start = f.number("start")
        end = f.number("end")
        isMovingWindow = f.bool("isMovingWindow")
        isLiveDone = f.bool("isLiveDone")
    }

    public var json: JSONValue {
        var o = JSONMembers()
        o.put("start", start)
        o.put("end", end)
        o.put("isMovingWindow", isMovingWindow)
        o.put("isLiveDone", isLiveDone)
        return o.json
    }
}

/// A field of RECEIVER_STATUS or MEDIA_STATUS that a device can send in a form castd cannot read;
/// named as in the payload.
public enum CastStatusField: String, Sendable, Hashable {
    case applications
    case currentTime
    case playbackRate
    case volume
    case volumeLevel = "volume.level"
    case volumeMuted = "volume.muted"

    /// What cannot be read of a `volume` member: the whole of it when it is not an object, else
    /// a `level` (that is not a number) and a `muted` (not a bool).
    static func unreadableVolume(_ volume: JSONValue?) -> [CastStatusField] {
        guard let volume, !volume.isNull else { return [] }
        guard volume.objectValue != nil else { return [.volume] }
        let v = JSONFields(volume)
        var unreadable: [CastStatusField] = []
        if v.unreadableNumber("level") { unreadable.append(.volumeLevel) }
        if let muted = v.members["muted"], !muted.isNull, muted.boolValue == nil { unreadable.append(.volumeMuted) }
        return unreadable
    }
}
