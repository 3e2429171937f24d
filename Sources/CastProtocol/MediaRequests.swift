/// What a sender asks of the media namespace, typed: each case writes its own request (`type`,
/// `requestId`, the media session it is about, and its own fields). The only place castd writes
/// a media request's JSON.
public enum MediaRequest: Sendable, Hashable {
    /// LOAD: starts a new media session.
    case load(MediaLoad)
    /// QUEUE_LOAD: starts a new media session with a queue.
    case queueLoad(QueueLoad)
    case getStatus
    case play
    case pause
    case stop
    case skipAd
    /// SEEK to `position` seconds, or by `position` seconds when `relative`; then play or pause
    /// if `resume` says so.
    case seek(position: Double, relative: Bool, resume: ResumeState?)
    case setPlaybackRate(Double)
    /// EDIT_TRACKS_INFO: the active tracks (nil leaves them) and the text track style (nil
    /// leaves it).
    case editTracks(activeTrackIDs: [Int64]?, textTrackStyle: CastTextTrackStyle?)
    /// SET_VOLUME on the media namespace: the stream's volume.
    case setStreamVolume(level: Double?, muted: Bool?)
    /// QUEUE_INSERT `items` (without item ids) before item `before` (nil: at the end).
    case queueInsert(items: [CastQueueItem], before: Int64?, playNow: Bool)
    case queueRemove(itemIDs: [Int64])
    /// QUEUE_REORDER `itemIDs` before item `before` (nil: to the end).
    case queueReorder(itemIDs: [Int64], before: Int64?)
    case queueUpdate(QueueUpdate)
    /// QUEUE_GET_ITEM_IDS: every item id of the queue, in order (answered by QUEUE_ITEM_IDS).
    case queueGetItemIDs
    /// QUEUE_GET_ITEMS: these items, with their media (answered by QUEUE_ITEMS).
    case queueGetItems(itemIDs: [Int64])

    /// PLAYBACK_START or PLAYBACK_PAUSE after a seek.
    public enum ResumeState: String, Sendable, Hashable {
        case play = "PLAYBACK_START"
        case pause = "PLAYBACK_PAUSE"
    }

    /// The request's `type`.
    public var type: String {
        switch self {
        case .load: "LOAD"
        case .queueLoad: "QUEUE_LOAD"
        case .getStatus: "GET_STATUS"
        case .play: "PLAY"
        case .pause: "PAUSE"
        case .stop: "STOP"
        case .skipAd: "SKIP_AD"
        case .seek: "SEEK"
        case .setPlaybackRate: "SET_PLAYBACK_RATE"
        case .editTracks: "EDIT_TRACKS_INFO"
        case .setStreamVolume: "SET_VOLUME"
        case .queueInsert: "QUEUE_INSERT"
        case .queueRemove: "QUEUE_REMOVE"
        case .queueReorder: "QUEUE_REORDER"
        case .queueUpdate: "QUEUE_UPDATE"
        case .queueGetItemIDs: "QUEUE_GET_ITEM_IDS"
        case .queueGetItems: "QUEUE_GET_ITEMS"
        }
    }

    /// What a request that starts a media session (LOAD, QUEUE_LOAD) plays first, for a log line;
    /// nil for the others.
    public var contentID: String? {
        switch self {
        case .load(let load): load.contentID
        case .queueLoad(let load): load.contentID
        default: nil
        }
    }

    /// The request as the device reads it. `mediaSessionID` is the media session it is about
    /// (nil for LOAD, QUEUE_LOAD and a GET_STATUS that asks about whatever is loaded).
    public func payload(requestID: Int64, mediaSessionID: Int64? = nil) -> JSONValue {
        var o: [String: JSONValue]
        switch self {
        case .load(let load): o = load.fields
        case .queueLoad(let load): o = load.fields
        case .getStatus, .play, .pause, .stop, .skipAd, .queueGetItemIDs: o = [:]
        case .queueGetItems(let itemIDs):
            o = ["itemIds": Self.ids(itemIDs)]
        case .seek(let position, let relative, let resume):
            o = [relative ? "relativeTime" : "currentTime": .number(position)]
            if let resume { o["resumeState"] = .string(resume.rawValue) }
        case .setPlaybackRate(let rate):
            o = ["playbackRate": .number(rate)]
        case .editTracks(let activeTrackIDs, let style):
            o = [:]
            if let activeTrackIDs { o["activeTrackIds"] = Self.ids(activeTrackIDs) }
            if let style { o["textTrackStyle"] = style.json }
        case .setStreamVolume(let level, let muted):
            o = ["volume": CastVolume(level: level, muted: muted).json]
        case .queueInsert(let items, let before, let playNow):
            o = ["items": .array(items.map(\.json))]
            if let before { o["insertBefore"] = .number(Double(before)) }
            if playNow { o["currentItemIndex"] = 0 }
        case .queueRemove(let itemIDs):
            o = ["itemIds": Self.ids(itemIDs)]
        case .queueReorder(let itemIDs, let before):
            o = ["itemIds": Self.ids(itemIDs)]
            if let before { o["insertBefore"] = .number(Double(before)) }
        case .queueUpdate(let update):
            o = update.fields
        }
        o["type"] = .string(type)
        o["requestId"] = .number(Double(requestID))
        if let mediaSessionID { o["mediaSessionId"] = .number(Double(mediaSessionID)) }
        return .object(o)
    }

    private static func ids(_ ids: [Int64]) -> JSONValue { .array(ids.map { .number(Double($0)) }) }
}

/// LOAD's own fields: the media and how to start it.
public struct MediaLoad: Sendable, Hashable {
    public var media: CastMediaInformation
    public var autoplay: Bool
    /// Where to start, in seconds.
    public var currentTime: Double
    /// nil: the receiver's own rate.
    public var playbackRate: Double?
    public var activeTrackIDs: [Int64]
    public var credentials: String?
    public var credentialsType: String?
    public var customData: JSONValue?

    public init(
        media: CastMediaInformation, autoplay: Bool = true, currentTime: Double = 0, playbackRate: Double? = nil,
        activeTrackIDs: [Int64] = [], credentials: String? = nil, credentialsType: String? = nil,
        customData: JSONValue? = nil
    ) {
        self.media = media
        self.autoplay = autoplay
        self.currentTime = currentTime
        self.playbackRate = playbackRate
        self.activeTrackIDs = activeTrackIDs
        self.credentials = credentials
        self.credentialsType = credentialsType
        self.customData = customData
    }

    var fields: [String: JSONValue] {
        var o: [String: JSONValue] = [
            "media": media.json, "autoplay": .bool(autoplay), "currentTime": .number(currentTime),
        ]
        if let playbackRate { o["playbackRate"] = .number(playbackRate) }
        if !activeTrackIDs.isEmpty { o["activeTrackIds"] = .array(activeTrackIDs.map { .number(Double($0)) }) }
        if let credentials { o["credentials"] = .string(credentials) }
        if let credentialsType { o["credentialsType"] = .string(credentialsType) }
        if let customData { o["customData"] = customData }
        return o
    }

    /// The content id, for a log line.
    public var contentID: String { media.contentID ?? "" }
}

/// QUEUE_LOAD's own fields.
public struct QueueLoad: Sendable, Hashable {
    /// The items, without item ids (the receiver gives them).
    public var items: [CastQueueItem]
    public var startIndex: Int
    public var repeatMode: CastRepeatMode
    /// Where to start in the first item played, in seconds; nil: its start.
    public var currentTime: Double?
    public var customData: JSONValue?

    public init(
        items: [CastQueueItem], startIndex: Int = 0, repeatMode: CastRepeatMode = .off, currentTime: Double? = nil,
        customData: JSONValue? = nil
    ) {
        self.items = items
        self.startIndex = startIndex
        self.repeatMode = repeatMode
        self.currentTime = currentTime
        self.customData = customData
    }

    var fields: [String: JSONValue] {
        var o: [String: JSONValue] = [
            "items": .array(items.map(\.json)), "startIndex": .number(Double(startIndex)),
            "repeatMode": .string(repeatMode.rawValue),
        ]
        if let currentTime { o["currentTime"] = .number(currentTime) }
        if let customData { o["customData"] = customData }
        return o
    }

    /// The first item's content id, for a log line.
    public var contentID: String { items.first?.media?.contentID ?? "" }
}

/// QUEUE_UPDATE's own fields: jump to an item or by an offset, change the repeat mode, update
/// items. What is nil is left as it is.
public struct QueueUpdate: Sendable, Hashable {
    public var currentItemID: Int64?
    public var jump: Int32?
    public var repeatMode: CastRepeatMode?
    /// The items, with their item ids.
    public var items: [CastQueueItem]
    /// Where to start in the item jumped to, in seconds.
    public var currentTime: Double?

    public init(
        currentItemID: Int64? = nil, jump: Int32? = nil, repeatMode: CastRepeatMode? = nil, items: [CastQueueItem] = [],
        currentTime: Double? = nil
    ) {
        self.currentItemID = currentItemID
        self.jump = jump
        self.repeatMode = repeatMode
        self.items = items
        self.currentTime = currentTime
    }

    /// The ids of the items it updates.
    public var itemIDs: [Int64] { items.compactMap(\.itemID) }

    /// Whether it moves to another item (and so supersedes an older move still waiting).
    public var moves: Bool { currentItemID != nil || jump != nil }

    var fields: [String: JSONValue] {
        var o: [String: JSONValue] = [:]
        if let currentItemID { o["currentItemId"] = .number(Double(currentItemID)) }
        if let jump { o["jump"] = .number(Double(jump)) }
        if let repeatMode { o["repeatMode"] = .string(repeatMode.rawValue) }
        if !items.isEmpty { o["items"] = .array(items.map(\.json)) }
        if let currentTime { o["currentTime"] = .number(currentTime) }
        return o
    }
}
