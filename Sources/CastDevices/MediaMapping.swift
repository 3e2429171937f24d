import CastProtocol
import CastdAPI
import Foundation

// The media namespace's JSON (what devices send and what LOAD and QUEUE_* carry) to and from the
// castd.v1 messages clients see. Reading is lenient — a field of the wrong type reads as unset,
// never fails the message; unknown keys are kept in `extra_json` so nothing is lost on the way
// through. Writing leaves out what is unset, as the SDK does.

// MARK: reading helpers

extension JSONValue {
    fileprivate var string: String { stringValue ?? "" }
    fileprivate var double: Double { doubleValue.flatMap { $0.isFinite ? $0 : nil } ?? 0 }
    fileprivate var uint32: UInt32 { intValue.map { UInt32(clamping: max(0, $0)) } ?? 0 }
    fileprivate var int64: Int64 { intValue ?? 0 }
    fileprivate var bool: Bool { boolValue ?? false }
    fileprivate var ids: [Int64] { (arrayValue ?? []).compactMap(\.intValue) }
    /// The value as JSON text, or "" for absent and null.
    fileprivate var jsonText: String { isNull ? "" : jsonString }
}

private func extraJSON(_ object: [String: JSONValue], known: Set<String>) -> String {
    let extra = object.filter { !known.contains($0.key) }
    return extra.isEmpty ? "" : JSONValue.object(extra).jsonString
}

/// Parses a client's `*_json` field; "" is nil. Throws INVALID_ARGUMENT naming the field.
public func parseClientJSON(_ text: String, field: String) throws -> JSONValue? {
    if text.isEmpty { return nil }
    do {
        return try JSONValue.parse(text)
    } catch {
        throw CastdError(.invalidArgument, "\(field) is not valid JSON: \(error)")
    }
}

/// A JSON object being built for the device; unset values are left out.
struct JSONObjectBuilder {
    var members: [String: JSONValue] = [:]

    init(_ base: [String: JSONValue] = [:]) { members = base }

    mutating func set(_ key: String, _ value: String) { if !value.isEmpty { members[key] = .string(value) } }
    mutating func set(_ key: String, _ value: Double) { if value != 0 { members[key] = .number(value) } }
    mutating func set(_ key: String, _ value: Int64) { if value != 0 { members[key] = .number(Double(value)) } }
    mutating func set(_ key: String, _ value: UInt32) { if value != 0 { members[key] = .number(Double(value)) } }
    mutating func set(_ key: String, _ value: Bool) { if value { members[key] = .bool(true) } }
    mutating func set(_ key: String, _ value: JSONValue?) { if let value { members[key] = value } }
    mutating func set(_ key: String, ids: [Int64]) {
        if !ids.isEmpty { members[key] = .array(ids.map { .number(Double($0)) }) }
    }
    mutating func set(_ key: String, json text: String, field: String) throws {
        set(key, try parseClientJSON(text, field: field))
    }

    var value: JSONValue { .object(members) }
}

// MARK: enums

extension Castd_V1_RepeatMode {
    init?(cast text: String) {
        switch text {
        case "REPEAT_OFF": self = .off
        case "REPEAT_ALL": self = .all
        case "REPEAT_SINGLE": self = .single
        case "REPEAT_ALL_AND_SHUFFLE": self = .allAndShuffle
        default: return nil
        }
    }

    public var castValue: String {
        switch self {
        case .all: return "REPEAT_ALL"
        case .single: return "REPEAT_SINGLE"
        case .allAndShuffle: return "REPEAT_ALL_AND_SHUFFLE"
        default: return "REPEAT_OFF"
        }
    }
}

extension Castd_V1_TrackType {
    init(cast text: String) {
        switch text.uppercased() {
        case "TEXT": self = .text
        case "AUDIO": self = .audio
        case "VIDEO": self = .video
        default: self = .unspecified
        }
    }

    var castValue: String? {
        switch self {
        case .text: return "TEXT"
        case .audio: return "AUDIO"
        case .video: return "VIDEO"
        default: return nil
        }
    }
}

extension Castd_V1_TextTrackSubtype {
    init(cast text: String) {
        switch text.uppercased() {
        case "SUBTITLES": self = .subtitles
        case "CAPTIONS": self = .captions
        case "DESCRIPTIONS": self = .descriptions
        case "CHAPTERS": self = .chapters
        case "METADATA": self = .metadata
        default: self = .unspecified
        }
    }

    var castValue: String? {
        switch self {
        case .subtitles: return "SUBTITLES"
        case .captions: return "CAPTIONS"
        case .descriptions: return "DESCRIPTIONS"
        case .chapters: return "CHAPTERS"
        case .metadata: return "METADATA"
        default: return nil
        }
    }
}

// MARK: metadata

extension CastdMediaMetadata {
    private static let known: Set<String> = [
        "metadataType", "type", "title", "subtitle", "artist", "albumName", "images", "albumArtist", "composer",
        "trackNumber", "discNumber", "seriesTitle", "season", "episode", "originalAirdate", "studio", "releaseDate",
        "location", "latitude", "longitude", "width", "height", "creationDateTime",
    ]

    init(cast json: JSONValue) {
        self.init()
        let object = json.objectValue ?? [:]
        // Any number a device sends: one outside int32 would overflow the encoder (CastdAPI's
        // ProtobufEnumRange.swift), so it reads as generic, as an absent type does.
        metadataType = json["metadataType"]?.intValue.flatMap(Castd_V1_MetadataType.init(checkedRawValue:)) ?? .generic
        title = json["title"]?.string ?? ""
        subtitle = json["subtitle"]?.string ?? ""
        artist = json["artist"]?.string ?? ""
        albumName = json["albumName"]?.string ?? ""
        images = (json["images"]?.arrayValue ?? []).compactMap { image in
            guard let url = image["url"]?.stringValue else { return nil }
            var i = Castd_V1_Image()
            i.url = url
            i.width = image["width"]?.uint32 ?? 0
            i.height = image["height"]?.uint32 ?? 0
            return i
        }
        albumArtist = json["albumArtist"]?.string ?? ""
        composer = json["composer"]?.string ?? ""
        trackNumber = json["trackNumber"]?.uint32 ?? 0
        discNumber = json["discNumber"]?.uint32 ?? 0
        seriesTitle = json["seriesTitle"]?.string ?? ""
        season = json["season"]?.uint32 ?? 0
        episode = json["episode"]?.uint32 ?? 0
        originalAirDate = json["originalAirdate"]?.string ?? ""
        studio = json["studio"]?.string ?? ""
        releaseDate = json["releaseDate"]?.string ?? ""
        location = json["location"]?.string ?? ""
        latitude = json["latitude"]?.double ?? 0
        longitude = json["longitude"]?.double ?? 0
        width = json["width"]?.uint32 ?? 0
        height = json["height"]?.uint32 ?? 0
        creationDateTime = json["creationDateTime"]?.string ?? ""
        extraJson = extraJSON(object, known: Self.known)
    }

    public func castJSON() throws -> JSONValue {
        var o = JSONObjectBuilder()
        if case .object(let extra)? = try parseClientJSON(extraJson, field: "metadata.extra_json") {
            o = JSONObjectBuilder(extra)
        } else if !extraJson.isEmpty {
            throw CastdError(.invalidArgument, "metadata.extra_json must be a JSON object")
        }
        o.members["metadataType"] = .number(Double(metadataType.rawValue))
        o.set("title", title)
        o.set("subtitle", subtitle)
        o.set("artist", artist)
        o.set("albumName", albumName)
        if !images.isEmpty {
            o.members["images"] = .array(
                images.map { image in
                    var i = JSONObjectBuilder()
                    i.members["url"] = .string(image.url)
                    i.set("width", image.width)
                    i.set("height", image.height)
                    return i.value
                })
        }
        o.set("albumArtist", albumArtist)
        o.set("composer", composer)
        o.set("trackNumber", trackNumber)
        o.set("discNumber", discNumber)
        o.set("seriesTitle", seriesTitle)
        o.set("season", season)
        o.set("episode", episode)
        o.set("originalAirdate", originalAirDate)
        o.set("studio", studio)
        o.set("releaseDate", releaseDate)
        o.set("location", location)
        o.set("latitude", latitude)
        o.set("longitude", longitude)
        o.set("width", width)
        o.set("height", height)
        o.set("creationDateTime", creationDateTime)
        return o.value
    }
}

// MARK: tracks and style

extension CastdMediaTrack {
    init(cast json: JSONValue) {
        self.init()
        trackID = json["trackId"]?.int64 ?? 0
        type = Castd_V1_TrackType(cast: json["type"]?.string ?? "")
        subtype = Castd_V1_TextTrackSubtype(cast: json["subtype"]?.string ?? "")
        contentID = json["trackContentId"]?.string ?? ""
        contentType = json["trackContentType"]?.string ?? ""
        name = json["name"]?.string ?? ""
        language = json["language"]?.string ?? ""
        customDataJson = json["customData"]?.jsonText ?? ""
    }

    public func castJSON() throws -> JSONValue {
        var o = JSONObjectBuilder()
        o.members["trackId"] = .number(Double(trackID))
        o.set("type", type.castValue.map(JSONValue.string))
        o.set("subtype", subtype.castValue.map(JSONValue.string))
        o.set("trackContentId", contentID)
        o.set("trackContentType", contentType)
        o.set("name", name)
        o.set("language", language)
        try o.set("customData", json: customDataJson, field: "track \(trackID) custom_data_json")
        return o.value
    }
}

extension CastdTextTrackStyle {
    init(cast json: JSONValue) {
        self.init()
        foregroundColor = json["foregroundColor"]?.string ?? ""
        backgroundColor = json["backgroundColor"]?.string ?? ""
        edgeType = json["edgeType"]?.string ?? ""
        edgeColor = json["edgeColor"]?.string ?? ""
        fontScale = json["fontScale"]?.double ?? 0
        fontFamily = json["fontFamily"]?.string ?? ""
        fontGenericFamily = json["fontGenericFamily"]?.string ?? ""
        fontStyle = json["fontStyle"]?.string ?? ""
        windowType = json["windowType"]?.string ?? ""
        windowColor = json["windowColor"]?.string ?? ""
        windowRoundedCornerRadius = json["windowRoundedCornerRadius"]?.uint32 ?? 0
        customDataJson = json["customData"]?.jsonText ?? ""
    }

    public func castJSON() throws -> JSONValue {
        var o = JSONObjectBuilder()
        o.set("foregroundColor", foregroundColor)
        o.set("backgroundColor", backgroundColor)
        o.set("edgeType", edgeType)
        o.set("edgeColor", edgeColor)
        o.set("fontScale", fontScale)
        o.set("fontFamily", fontFamily)
        o.set("fontGenericFamily", fontGenericFamily)
        o.set("fontStyle", fontStyle)
        o.set("windowType", windowType)
        o.set("windowColor", windowColor)
        o.set("windowRoundedCornerRadius", windowRoundedCornerRadius)
        try o.set("customData", json: customDataJson, field: "text_track_style.custom_data_json")
        return o.value
    }
}

// MARK: ad breaks

extension Castd_V1_AdBreak {
    init(cast json: JSONValue) {
        self.init()
        id = json["id"]?.string ?? ""
        position = json["position"]?.double ?? 0
        duration = json["duration"]?.double ?? 0
        breakClipIds = (json["breakClipIds"]?.arrayValue ?? []).compactMap(\.stringValue)
        isWatched = json["isWatched"]?.bool ?? false
        isEmbedded = json["isEmbedded"]?.bool ?? false
    }

    public func castJSON() -> JSONValue {
        var o = JSONObjectBuilder()
        o.members["id"] = .string(id)
        o.members["position"] = .number(position)
        o.set("duration", duration)
        o.members["breakClipIds"] = .array(breakClipIds.map { .string($0) })
        o.set("isWatched", isWatched)
        o.set("isEmbedded", isEmbedded)
        return o.value
    }
}

extension Castd_V1_AdBreakClip {
    init(cast json: JSONValue) {
        self.init()
        id = json["id"]?.string ?? ""
        title = json["title"]?.string ?? ""
        contentID = json["contentId"]?.string ?? ""
        contentURL = json["contentUrl"]?.string ?? ""
        contentType = json["contentType"]?.string ?? ""
        duration = json["duration"]?.double ?? 0
        if let skippable = json["whenSkippable"]?.doubleValue, skippable.isFinite { whenSkippable = skippable }
        posterURL = json["posterUrl"]?.string ?? ""
        clickThroughURL = json["clickThroughUrl"]?.string ?? ""
        customDataJson = json["customData"]?.jsonText ?? ""
    }

    public func castJSON() throws -> JSONValue {
        var o = JSONObjectBuilder()
        o.members["id"] = .string(id)
        o.set("title", title)
        o.set("contentId", contentID)
        o.set("contentUrl", contentURL)
        o.set("contentType", contentType)
        o.set("duration", duration)
        if hasWhenSkippable { o.members["whenSkippable"] = .number(whenSkippable) }
        o.set("posterUrl", posterURL)
        o.set("clickThroughUrl", clickThroughURL)
        try o.set("customData", json: customDataJson, field: "break clip \(id) custom_data_json")
        return o.value
    }
}

// MARK: media information

extension CastdMediaInformation {
    private static let known: Set<String> = [
        "contentId", "contentUrl", "contentType", "streamType", "duration", "metadata", "customData", "entity",
        "tracks", "textTrackStyle", "breaks", "breakClips",
    ]

    init(cast json: JSONValue) {
        self.init()
        let object = json.objectValue ?? [:]
        contentID = json["contentId"]?.string ?? ""
        contentURL = json["contentUrl"]?.string ?? ""
        contentType = json["contentType"]?.string ?? ""
        // Sloppy senders send null or nothing: that is BUFFERED.
        streamType = Castd_V1_StreamType(cast: json["streamType"]?.string ?? "")
        duration = max(0, json["duration"]?.double ?? 0)
        if let metadata = json["metadata"], metadata.objectValue != nil {
            self.metadata = CastdMediaMetadata(cast: metadata)
        }
        customDataJson = json["customData"]?.jsonText ?? ""
        entity = json["entity"]?.string ?? ""
        tracks = (json["tracks"]?.arrayValue ?? []).filter { $0.objectValue != nil }.map(CastdMediaTrack.init(cast:))
        if let style = json["textTrackStyle"], style.objectValue != nil {
            textTrackStyle = CastdTextTrackStyle(cast: style)
        }
        breaks = (json["breaks"]?.arrayValue ?? []).filter { $0.objectValue != nil }.map(Castd_V1_AdBreak.init(cast:))
        breakClips = (json["breakClips"]?.arrayValue ?? []).filter { $0.objectValue != nil }.map(
            Castd_V1_AdBreakClip.init(cast:))
        extraJson = extraJSON(object, known: Self.known)
    }

    /// The `media` object of a LOAD or a queue item. Throws INVALID_ARGUMENT for bad JSON fields.
    public func castJSON() throws -> JSONValue {
        var o = JSONObjectBuilder()
        if case .object(let extra)? = try parseClientJSON(extraJson, field: "media.extra_json") {
            o = JSONObjectBuilder(extra)
        } else if !extraJson.isEmpty {
            throw CastdError(.invalidArgument, "media.extra_json must be a JSON object")
        }
        o.members["contentId"] = .string(contentID.isEmpty ? contentURL : contentID)
        o.set("contentUrl", contentURL)
        o.set("contentType", contentType)
        o.members["streamType"] = .string(streamType.castValue)
        o.set("duration", duration)
        if hasMetadata { o.members["metadata"] = try metadata.castJSON() }
        try o.set("customData", json: customDataJson, field: "media.custom_data_json")
        o.set("entity", entity)
        if !tracks.isEmpty { o.members["tracks"] = .array(try tracks.map { try $0.castJSON() }) }
        if hasTextTrackStyle { o.members["textTrackStyle"] = try textTrackStyle.castJSON() }
        if !breaks.isEmpty { o.members["breaks"] = .array(breaks.map { $0.castJSON() }) }
        if !breakClips.isEmpty { o.members["breakClips"] = .array(try breakClips.map { try $0.castJSON() }) }
        return o.value
    }
}

// MARK: queue items

extension CastdQueueItem {
    init(cast json: JSONValue, knownMedia: JSONValue?) {
        self.init()
        itemID = json["itemId"]?.int64 ?? 0
        if let media = json["media"].flatMap({ $0.objectValue != nil ? $0 : nil }) ?? knownMedia {
            self.media = CastdMediaInformation(cast: media)
        }
        if let autoplay = json["autoplay"]?.boolValue { self.autoplay = autoplay }
        startTime = json["startTime"]?.double ?? 0
        preloadTime = json["preloadTime"]?.double ?? 0
        activeTrackIds = json["activeTrackIds"]?.ids ?? []
        playbackDuration = json["playbackDuration"]?.double ?? 0
        customDataJson = json["customData"]?.jsonText ?? ""
        orderID = json["orderId"]?.int64 ?? 0
    }

    /// A queue item for QUEUE_LOAD, QUEUE_INSERT or QUEUE_UPDATE.
    public func castJSON(includeItemID: Bool) throws -> JSONValue {
        var o = JSONObjectBuilder()
        if includeItemID { o.members["itemId"] = .number(Double(itemID)) }
        if hasMedia { o.members["media"] = try media.castJSON() }
        o.members["autoplay"] = .bool(hasAutoplay ? autoplay : true)
        o.set("startTime", startTime)
        o.set("preloadTime", preloadTime)
        o.set("activeTrackIds", ids: activeTrackIds)
        o.set("playbackDuration", playbackDuration)
        try o.set("customData", json: customDataJson, field: "queue item custom_data_json")
        return o.value
    }
}

// MARK: media status

extension CastdMediaStatus {
    /// One MEDIA_STATUS entry as clients see it. `media` is what castd last knew of the media
    /// session (devices often leave it out); `itemMedia` likewise for queue items.
    package init(
        deviceID: String, entry json: JSONValue, media: JSONValue?, itemMedia: [Int64: JSONValue], receivedAt: Date
    ) {
        self.init()
        self.deviceID = deviceID
        mediaSessionID = json["mediaSessionId"]?.int64 ?? 0
        playerState = Castd_V1_PlayerState(cast: json["playerState"]?.string ?? "")
        idleReason = json["idleReason"]?.string ?? ""
        currentTime = max(0, json["currentTime"]?.double ?? 0)
        playbackRate = json["playbackRate"]?.doubleValue ?? 1
        if let media { self.media = CastdMediaInformation(cast: media) }
        if let volume = CastVolume(json: json["volume"]) { self.volume = CastdVolume(volume) }
        supportedMediaCommands = UInt64(clamping: max(0, json["supportedMediaCommands"]?.int64 ?? 0))
        supportedCommands = CastdMediaCommand.names(in: supportedMediaCommands)
        updatedAtMs = Int64(receivedAt.timeIntervalSince1970 * 1000)
        activeTrackIds = json["activeTrackIds"]?.ids ?? []
        items = (json["items"]?.arrayValue ?? []).filter { $0.objectValue != nil }.map { item in
            CastdQueueItem(cast: item, knownMedia: item["itemId"]?.intValue.flatMap { itemMedia[$0] })
        }
        currentItemID = json["currentItemId"]?.int64 ?? 0
        loadingItemID = json["loadingItemId"]?.int64 ?? 0
        preloadedItemID = json["preloadedItemId"]?.int64 ?? 0
        repeatMode = Castd_V1_RepeatMode(cast: json["repeatMode"]?.string ?? "") ?? .off
        if let breakStatus = json["breakStatus"], breakStatus.objectValue != nil {
            var b = Castd_V1_BreakStatus()
            b.breakID = breakStatus["breakId"]?.string ?? ""
            b.breakClipID = breakStatus["breakClipId"]?.string ?? ""
            b.currentBreakTime = breakStatus["currentBreakTime"]?.double ?? 0
            b.currentBreakClipTime = breakStatus["currentBreakClipTime"]?.double ?? 0
            if let when = breakStatus["whenSkippable"]?.doubleValue, when.isFinite, when >= 0 {
                b.secondsUntilSkippable = max(0, when - b.currentBreakClipTime)
            } else {
                b.secondsUntilSkippable = -1
            }
            self.breakStatus = b
        }
        if let video = json["videoInfo"], video.objectValue != nil {
            var v = Castd_V1_VideoInfo()
            v.width = video["width"]?.uint32 ?? 0
            v.height = video["height"]?.uint32 ?? 0
            v.hdrType = video["hdrType"]?.string ?? ""
            videoInfo = v
        }
        if let range = json["liveSeekableRange"], range.objectValue != nil {
            var r = Castd_V1_LiveSeekableRange()
            r.start = range["start"]?.double ?? 0
            r.end = range["end"]?.double ?? 0
            r.isMovingWindow = range["isMovingWindow"]?.bool ?? false
            r.isLiveDone = range["isLiveDone"]?.bool ?? false
            liveSeekableRange = r
        }
        customDataJson = json["customData"]?.jsonText ?? ""
    }
}
