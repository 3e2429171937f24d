/// One entry of MEDIA_STATUS `status[]`: the state of one media session.
public struct CastMediaStatus: Sendable, Hashable, JSONRecord {
    public var mediaSessionID: Int64 = 0
    /// "IDLE", "PLAYING", "PAUSED", "BUFFERING", "LOADING" (``state``); "UNKNOWN" when absent.
    public var playerState = "UNKNOWN"
    /// Why the player is idle: "CANCELLED", "INTERRUPTED", "FINISHED", "ERROR".
    public var idleReason: String?
    /// Seconds; 0 when absent or not a finite number.
    public var currentTime: Double = 0
    /// 1 when absent or not a finite number.
    public var playbackRate: Double = 1
    /// Often omitted by devices after the first status: keep the last one per media session.
    public var media: CastMediaInformation?
    public var volume: CastVolume?
    /// The bits of the media commands the receiver supports.
    public var supportedMediaCommands: Int64 = 0
    public var activeTrackIDs: [Int64]?
    /// The queue, when the receiver lists it.
    public var items: [CastQueueItem]?
    public var currentItemID: Int64?
    public var loadingItemID: Int64?
    public var preloadedItemID: Int64?
    /// "REPEAT_OFF", "REPEAT_ALL", "REPEAT_SINGLE" or "REPEAT_ALL_AND_SHUFFLE" (``repetition``).
    public var repeatMode: String?
    public var breakStatus: CastBreakStatus?
    public var videoInfo: CastVideoInfo?
    public var liveSeekableRange: CastLiveSeekableRange?
    public var customData: JSONValue?
    /// Fields the entry has but that cannot be read (a `currentTime` that is an object, a volume
    /// level that is a word): no news about them, not 0.
    public var unreadable: [CastStatusField] = []

    static let members: [JSONMember<Self>] = [
        .integer("mediaSessionId", \.mediaSessionID, default: 0),
        .string("playerState", \.playerState, default: "UNKNOWN"),
        .string("idleReason", \.idleReason), .number("currentTime", \.currentTime, default: 0),
        .number("playbackRate", \.playbackRate, default: 1), .record("media", \.media),
        JSONMember(
            key: "volume", read: { $0.volume = CastVolume(json: $1.members["volume"]) },
            write: { $1.put("volume", $0.volume?.json) }),
        .integer("supportedMediaCommands", \.supportedMediaCommands, default: 0),
        .integers("activeTrackIds", \.activeTrackIDs), .records("items", \.items),
        .integer("currentItemId", \.currentItemID), .integer("loadingItemId", \.loadingItemID),
        .integer("preloadedItemId", \.preloadedItemID), .string("repeatMode", \.repeatMode),
        .record("breakStatus", \.breakStatus), .record("videoInfo", \.videoInfo),
        .record("liveSeekableRange", \.liveSeekableRange), .json("customData", \.customData),
    ]

    init() {}

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
    }

    /// Nil without a `mediaSessionId` (an entry that says there is no media session).
    public init?(json: JSONValue) {
        let f = JSONFields(json)
        guard f.integer("mediaSessionId") != nil else { return nil }
        self.init(reading: json)
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

    public var json: JSONValue { writing() }
}

/// Where an ad break is (BreakStatus in MEDIA_STATUS).
public struct CastBreakStatus: Sendable, Hashable, JSONRecord {
    public var breakID: String?
    public var breakClipID: String?
    public var currentBreakTime: Double?
    public var currentBreakClipTime: Double?
    /// Seconds into the clip after which it may be skipped; nil: never.
    public var whenSkippable: Double?

    static let members: [JSONMember<Self>] = [
        .string("breakId", \.breakID), .string("breakClipId", \.breakClipID),
        .number("currentBreakTime", \.currentBreakTime), .number("currentBreakClipTime", \.currentBreakClipTime),
        .number("whenSkippable", \.whenSkippable),
    ]

    public init() {}

    public init(json: JSONValue) { self.init(reading: json) }

    public var json: JSONValue { writing() }
}

/// The video being played (VideoInformation).
public struct CastVideoInfo: Sendable, Hashable, JSONRecord {
    public var width: Int64?
    public var height: Int64?
    /// "sdr", "hdr", "dv".
    public var hdrType: String?

    static let members: [JSONMember<Self>] = [
        .integer("width", \.width), .integer("height", \.height), .string("hdrType", \.hdrType),
    ]

    public init() {}

    public init(json: JSONValue) { self.init(reading: json) }

    public var json: JSONValue { writing() }
}

/// The part of a live stream one can seek in (LiveSeekableRange).
public struct CastLiveSeekableRange: Sendable, Hashable, JSONRecord {
    public var start: Double?
    public var end: Double?
    public var isMovingWindow: Bool?
    public var isLiveDone: Bool?

    static let members: [JSONMember<Self>] = [
        .number("start", \.start), .number("end", \.end), .bool("isMovingWindow", \.isMovingWindow),
        .bool("isLiveDone", \.isLiveDone),
    ]

    public init() {}

    public init(json: JSONValue) { self.init(reading: json) }

    public var json: JSONValue { writing() }
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
