/// An image in media metadata.
public struct CastImage: Sendable, Hashable {
    public var url: String
    public var width: Int?
    public var height: Int?

    public init(url: String, width: Int? = nil, height: Int? = nil) {
        self.url = url
        self.width = width
        self.height = height
    }

    public init?(json: JSONValue) {
        guard let url = json["url"]?.stringValue else { return nil }
        self.url = url
        width = json["width"]?.intValue.map { Int($0) }
        height = json["height"]?.intValue.map { Int($0) }
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = ["url": .string(url)]
        if let width { o["width"] = .number(Double(width)) }
        if let height { o["height"] = .number(Double(height)) }
        return .object(o)
    }
}

/// Media metadata. Known keys are typed; the whole object is kept so nothing a device or sender
/// put there is lost.
public struct CastMediaMetadata: Sendable, Hashable {
    /// 0 generic, 1 movie, 2 TV show, 3 music track, 4 photo.
    public var metadataType: Int
    public var title: String?
    public var subtitle: String?
    public var artist: String?
    public var albumName: String?
    public var images: [CastImage]
    /// Every key as received (or as built), including the ones typed above.
    public var raw: [String: JSONValue]

    public init(
        metadataType: Int = 0, title: String? = nil, subtitle: String? = nil, artist: String? = nil,
        albumName: String? = nil, images: [CastImage] = []
    ) {
        self.metadataType = metadataType
        self.title = title
        self.subtitle = subtitle
        self.artist = artist
        self.albumName = albumName
        self.images = images
        self.raw = [:]
    }

    public init?(json: JSONValue?) {
        guard let json, let raw = json.objectValue else { return nil }
        self.raw = raw
        metadataType = Int(json["metadataType"]?.intValue ?? 0)
        title = json["title"]?.stringValue
        subtitle = json["subtitle"]?.stringValue ?? json["seriesTitle"]?.stringValue
        artist = json["artist"]?.stringValue ?? json["albumArtist"]?.stringValue
        albumName = json["albumName"]?.stringValue
        images = (json["images"]?.arrayValue ?? []).compactMap(CastImage.init(json:))
    }

    public var json: JSONValue {
        var o = raw
        o["metadataType"] = .number(Double(metadataType))
        if let title { o["title"] = .string(title) }
        if let subtitle { o["subtitle"] = .string(subtitle) }
        if let artist { o["artist"] = .string(artist) }
        if let albumName { o["albumName"] = .string(albumName) }
        if !images.isEmpty { o["images"] = .array(images.map(\.json)) }
        return .object(o)
    }
}

/// MediaInformation: what is loaded.
public struct CastMediaInformation: Sendable, Hashable {
    public var contentID: String
    public var contentURL: String?
    /// "NONE", "BUFFERED" or "LIVE". Senders are sloppy (catt sends null): absent means BUFFERED.
    public var streamType: String
    public var contentType: String?
    /// Seconds; nil when unknown or live.
    public var duration: Double?
    public var metadata: CastMediaMetadata?
    public var customData: JSONValue?
    /// Every key as received, so that unknown fields survive a round trip.
    public var raw: [String: JSONValue]

    public init(
        contentID: String, contentURL: String? = nil, streamType: String = "BUFFERED",
        contentType: String? = nil, duration: Double? = nil, metadata: CastMediaMetadata? = nil,
        customData: JSONValue? = nil
    ) {
        self.contentID = contentID
        self.contentURL = contentURL
        self.streamType = streamType
        self.contentType = contentType
        self.duration = duration
        self.metadata = metadata
        self.customData = customData
        self.raw = [:]
    }

    public init?(json: JSONValue?) {
        guard let json, let raw = json.objectValue else { return nil }
        self.raw = raw
        contentID = json["contentId"]?.stringValue ?? json["contentUrl"]?.stringValue ?? ""
        contentURL = json["contentUrl"]?.stringValue
        streamType = json["streamType"]?.stringValue ?? "BUFFERED"
        contentType = json["contentType"]?.stringValue
        duration = json["duration"]?.doubleValue
        metadata = CastMediaMetadata(json: json["metadata"])
        customData = json["customData"].flatMap { $0.isNull ? nil : $0 }
    }

    public var json: JSONValue {
        var o = raw
        o["contentId"] = .string(contentID)
        o["streamType"] = .string(streamType)
        if let contentURL { o["contentUrl"] = .string(contentURL) }
        if let contentType { o["contentType"] = .string(contentType) }
        if let duration { o["duration"] = .number(duration) }
        if let metadata { o["metadata"] = metadata.json }
        if let customData { o["customData"] = customData }
        return .object(o)
    }
}

/// One entry of MEDIA_STATUS `status[]`.
public struct CastMediaStatus: Sendable, Hashable {
    public var mediaSessionID: Int64
    /// "IDLE", "PLAYING", "PAUSED", "BUFFERING", "LOADING".
    public var playerState: String
    public var idleReason: String?
    public var currentTime: Double
    public var playbackRate: Double
    /// Often omitted by devices after the first status: keep the last one per media session.
    public var media: CastMediaInformation?
    public var volume: CastVolume?
    public var supportedMediaCommands: Int64

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

    public init?(json: JSONValue) {
        guard let id = json["mediaSessionId"]?.intValue else { return nil }
        mediaSessionID = id
        playerState = json["playerState"]?.stringValue ?? "UNKNOWN"
        idleReason = json["idleReason"]?.stringValue
        currentTime = json["currentTime"]?.doubleValue ?? 0
        playbackRate = json["playbackRate"]?.doubleValue ?? 1
        media = CastMediaInformation(json: json["media"])
        volume = CastVolume(json: json["volume"])
        supportedMediaCommands = json["supportedMediaCommands"]?.intValue ?? 0
    }

    /// The entries of a MEDIA_STATUS payload; `status` may be an array, an object or absent.
    public static func entries(in payload: JSONValue) -> [CastMediaStatus] {
        switch payload["status"] {
        case .array(let items)?: return items.compactMap(CastMediaStatus.init(json:))
        case let object? where object.objectValue != nil: return CastMediaStatus(json: object).map { [$0] } ?? []
        default: return []
        }
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "mediaSessionId": .number(Double(mediaSessionID)),
            "playerState": .string(playerState),
            "currentTime": .number(currentTime),
            "playbackRate": .number(playbackRate),
            "supportedMediaCommands": .number(Double(supportedMediaCommands)),
        ]
        if let idleReason { o["idleReason"] = .string(idleReason) }
        if let media { o["media"] = media.json }
        if let volume { o["volume"] = volume.json }
        return .object(o)
    }
}
