import CastProtocol

/// One item of a media session's queue: the media as the sender sent it and how to play it.
///
/// A plain LOAD is a queue of one item. Item ids are the device's: increasing and unique within
/// the media session, whatever the sender put in `itemId`.
struct MediaQueueItem {
    var itemID: Int
    /// `media` as sent, with `contentId`, `streamType` and `duration` filled in.
    var media: [String: JSONValue]
    var autoplay: Bool
    /// Where playback of the item starts, in seconds.
    var startTime: Double
    /// How long before the end of the previous item this one is preloaded; nil: not announced.
    var preloadTime: Double?
    var activeTrackIDs: [Int64]
    /// The item's other fields as the sender sent them (`customData`, `playbackDuration`, …).
    var extra: [String: JSONValue]
    /// Whether the sender said how long the media is (else `duration` is the device's default).
    var statesDuration = true

    /// Fields of a queue item that the device owns or that are kept in their own property.
    static let ownFields: Set<String> = [
        "itemId", "media", "autoplay", "startTime", "preloadTime", "activeTrackIds", "orderId",
    ]

    var duration: Double { media["duration"]?.doubleValue ?? 0 }
    var contentID: String { media["contentId"]?.stringValue ?? "" }
    var contentType: String? { media["contentType"]?.stringValue }
    /// A live stream with a moving window: LIVE and an HLS or DASH manifest. A plain file marked
    /// LIVE (pychromecast's default streamType) plays and seeks like any file, as on a real
    /// receiver, whose player goes by the content, not by the sender's label.
    var isLive: Bool {
        guard media["streamType"]?.stringValue == "LIVE" else { return false }
        let manifests: Set<String> = ["application/x-mpegurl", "application/vnd.apple.mpegurl", "application/dash+xml"]
        if let type = bareContentType, manifests.contains(type) { return true }
        let path = contentID.lowercased().split(separator: "?").first ?? ""
        return path.hasSuffix(".m3u8") || path.hasSuffix(".mpd")
    }

    /// Whether `media` as sent says how long it is.
    static func statesDuration(_ media: JSONValue?) -> Bool {
        media?["duration"]?.doubleValue.map { $0 > 0 && $0.isFinite } ?? false
    }

    /// The ids of the media's tracks.
    static func trackIDs(of media: [String: JSONValue]) -> Set<Int64> {
        Set((media["tracks"]?.arrayValue ?? []).compactMap { $0["trackId"]?.intValue })
    }

    /// The content type without parameters, lower-cased (`video/MP4; codecs=…` → `video/mp4`).
    var bareContentType: String? {
        guard let contentType else { return nil }
        let bare = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? contentType
        return bare.filter { !$0.isWhitespace }.lowercased()
    }

    /// Whether the content is video (adaptive streams are assumed to carry video).
    var isVideo: Bool {
        guard let type = bareContentType else { return false }
        return type.hasPrefix("video/")
            || [
                "application/x-mpegurl", "application/vnd.apple.mpegurl", "application/dash+xml",
                "application/vnd.ms-sstr+xml",
            ].contains(type)
    }

    /// Fills in what senders leave out, as the Default Media Receiver does: `contentId` from
    /// `contentUrl` or `entity`; `streamType` BUFFERED unless NONE, BUFFERED or LIVE (catt sends
    /// null, pychromecast LIVE for files); a duration for media that does not say. Nil when there
    /// is no content id at all.
    static func normalizedMedia(_ value: JSONValue?, defaultDuration: Double) -> [String: JSONValue]? {
        guard var media = value?.objectValue else { return nil }
        guard
            let contentID = media["contentId"]?.stringValue ?? media["contentUrl"]?.stringValue
                ?? media["entity"]?.stringValue,
            !contentID.isEmpty
        else { return nil }
        media["contentId"] = .string(contentID)
        let streamType = media["streamType"]?.stringValue ?? ""
        media["streamType"] = .string(["NONE", "BUFFERED", "LIVE"].contains(streamType) ? streamType : "BUFFERED")
        let duration = media["duration"]?.doubleValue.flatMap { $0 > 0 && $0.isFinite ? $0 : nil } ?? defaultDuration
        media["duration"] = .number(duration)
        return media
    }

    /// `activeTrackIds` as sent, if every entry is a track of `media`; nil otherwise.
    static func activeTrackIDs(_ value: JSONValue?, in media: [String: JSONValue]) -> [Int64]? {
        guard let value, !value.isNull else { return [] }
        guard let items = value.arrayValue else { return nil }
        let known = trackIDs(of: media)
        var ids: [Int64] = []
        for item in items {
            guard let id = item.intValue, known.contains(id) else { return nil }
            ids.append(id)
        }
        return ids
    }

    /// A queue item from a QUEUE_LOAD / QUEUE_INSERT entry; nil when it is not valid (no media
    /// or content id, active tracks that are not the media's, a negative start time).
    init?(json: JSONValue, itemID: Int, defaultDuration: Double) {
        guard let fields = json.objectValue,
            let media = Self.normalizedMedia(fields["media"], defaultDuration: defaultDuration),
            let tracks = Self.activeTrackIDs(fields["activeTrackIds"], in: media)
        else { return nil }
        let startTime = fields["startTime"]?.doubleValue ?? 0
        guard startTime.isFinite, startTime >= 0 else { return nil }
        self.itemID = itemID
        self.media = media
        self.autoplay = fields["autoplay"]?.lenientBool ?? true
        self.startTime = startTime
        self.preloadTime = fields["preloadTime"]?.doubleValue.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        self.activeTrackIDs = tracks
        self.extra = fields.filter { !Self.ownFields.contains($0.key) }
        self.statesDuration = Self.statesDuration(fields["media"])
    }

    init(
        itemID: Int, media: [String: JSONValue], autoplay: Bool, startTime: Double, activeTrackIDs: [Int64],
        extra: [String: JSONValue] = [:]
    ) {
        self.itemID = itemID
        self.media = media
        self.autoplay = autoplay
        self.startTime = startTime
        self.preloadTime = nil
        self.activeTrackIDs = activeTrackIDs
        self.extra = extra
    }

    /// Applies a QUEUE_UPDATE entry for this item; false (and unchanged) when it is not valid.
    mutating func update(with json: JSONValue, defaultDuration: Double) -> Bool {
        guard let fields = json.objectValue else { return false }
        var updated = self
        if let media = fields["media"] {
            guard let normalized = Self.normalizedMedia(media, defaultDuration: defaultDuration) else { return false }
            updated.media = normalized
            updated.statesDuration = Self.statesDuration(media)
        }
        if let autoplay = fields["autoplay"]?.lenientBool { updated.autoplay = autoplay }
        if let startTime = fields["startTime"]?.doubleValue {
            guard startTime.isFinite, startTime >= 0 else { return false }
            updated.startTime = startTime
        }
        if let preloadTime = fields["preloadTime"]?.doubleValue {
            updated.preloadTime = preloadTime.isFinite && preloadTime >= 0 ? preloadTime : nil
        }
        if let requested = fields["activeTrackIds"] {
            guard let tracks = Self.activeTrackIDs(requested, in: updated.media) else { return false }
            updated.activeTrackIDs = tracks
        } else if fields["media"] != nil {
            let known = Self.trackIDs(of: updated.media)
            updated.activeTrackIDs = updated.activeTrackIDs.filter(known.contains)
        }
        for (key, value) in fields where !Self.ownFields.contains(key) { updated.extra[key] = value }
        self = updated
        return true
    }

    /// The item as MEDIA_STATUS `items[]` lists it; `media` only in a full status.
    func json(orderID: Int, includeMedia: Bool) -> JSONValue {
        var entry = extra
        entry["itemId"] = .number(Double(itemID))
        if includeMedia { entry["media"] = .object(media) }
        entry["autoplay"] = .bool(autoplay)
        entry["startTime"] = .number(startTime)
        if let preloadTime { entry["preloadTime"] = .number(preloadTime) }
        entry["activeTrackIds"] = .array(activeTrackIDs.map { .number(Double($0)) })
        entry["orderId"] = .number(Double(orderID))
        return .object(entry)
    }
}

/// `repeatMode` of a queue.
enum RepeatMode: String {
    case off = "REPEAT_OFF"
    case all = "REPEAT_ALL"
    case single = "REPEAT_SINGLE"
    case allAndShuffle = "REPEAT_ALL_AND_SHUFFLE"
}

extension JSONValue {
    /// A flag as senders send it: a boolean, a number (0 is false), or a string "true" or
    /// "false" in any case ("True", from Python's `str`).
    var lenientBool: Bool? {
        guard case .string(let text) = self else { return boolValue }
        switch text.filter({ !$0.isWhitespace }).lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: return nil
        }
    }
}
