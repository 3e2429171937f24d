// The media namespace's MediaInformation and what it holds, typed: what a LOAD or a queue item
// carries and what MEDIA_STATUS says is loaded. Each reads leniently (a member of the wrong type
// reads as nil) and writes what is not nil. Keys the types do not name are kept in `others`
// where the SDK lets apps put their own (media, metadata), so nothing is lost on the way through.

/// An image in media metadata.
public struct CastImage: Sendable, Hashable {
    public var url: String
    public var width: Int64?
    public var height: Int64?

    public init(url: String, width: Int64? = nil, height: Int64? = nil) {
        self.url = url
        self.width = width
        self.height = height
    }

    /// Nil without a `url`.
    public init?(json: JSONValue) {
        let f = JSONFields(json)
        guard let url = f.string("url") else { return nil }
        self.url = url
        width = f.integer("width")
        height = f.integer("height")
    }

    public var json: JSONValue {
        var o = JSONMembers(["url": .string(url)])
        o.put("width", width)
        o.put("height", height)
        return o.json
    }
}

/// Media metadata: the fields of every metadata type (generic, movie, TV show, music track,
/// photo) in one value.
public struct CastMediaMetadata: Sendable, Hashable {
    /// 0 generic, 1 movie, 2 TV show, 3 music track, 4 photo; any number a device sends.
    public var metadataType: Int64?
    public var title: String?
    public var subtitle: String?
    public var artist: String?
    public var albumName: String?
    public var images: [CastImage]?
    public var albumArtist: String?
    public var composer: String?
    public var trackNumber: Int64?
    public var discNumber: Int64?
    public var seriesTitle: String?
    public var season: Int64?
    public var episode: Int64?
    /// `originalAirdate`, as the SDK spells it.
    public var originalAirdate: String?
    public var studio: String?
    public var releaseDate: String?
    public var location: String?
    public var latitude: Double?
    public var longitude: Double?
    public var width: Int64?
    public var height: Int64?
    public var creationDateTime: String?
    /// The keys none of the above names (`type`, the old spelling of `metadataType`, aside).
    public var others: [String: JSONValue]

    private static let known: Set<String> = [
        "metadataType", "type", "title", "subtitle", "artist", "albumName", "images", "albumArtist", "composer",
        "trackNumber", "discNumber", "seriesTitle", "season", "episode", "originalAirdate", "studio", "releaseDate",
        "location", "latitude", "longitude", "width", "height", "creationDateTime",
    ]

    public init(metadataType: Int64? = nil, title: String? = nil, others: [String: JSONValue] = [:]) {
        self.metadataType = metadataType
        self.title = title
        self.others = others
    }

    /// Nil when `json` is not an object.
    public init?(json: JSONValue?) {
        guard let json, json.objectValue != nil else { return nil }
        let f = JSONFields(json)
        metadataType = f.integer("metadataType")
        title = f.string("title")
        subtitle = f.string("subtitle")
        artist = f.string("artist")
        albumName = f.string("albumName")
        images = f.members["images"]?.arrayValue?.compactMap(CastImage.init(json:))
        albumArtist = f.string("albumArtist")
        composer = f.string("composer")
        trackNumber = f.integer("trackNumber")
        discNumber = f.integer("discNumber")
        seriesTitle = f.string("seriesTitle")
        season = f.integer("season")
        episode = f.integer("episode")
        originalAirdate = f.string("originalAirdate")
        studio = f.string("studio")
        releaseDate = f.string("releaseDate")
        location = f.string("location")
        latitude = f.number("latitude")
        longitude = f.number("longitude")
        width = f.integer("width")
        height = f.integer("height")
        creationDateTime = f.string("creationDateTime")
        others = f.others(known: Self.known)
    }

    public var json: JSONValue {
        var o = JSONMembers(others)
        o.put("metadataType", metadataType)
        o.put("title", title)
        o.put("subtitle", subtitle)
        o.put("artist", artist)
        o.put("albumName", albumName)
        o.put("images", images?.map(\.json))
        o.put("albumArtist", albumArtist)
        o.put("composer", composer)
        o.put("trackNumber", trackNumber)
        o.put("discNumber", discNumber)
        o.put("seriesTitle", seriesTitle)
        o.put("season", season)
        o.put("episode", episode)
        o.put("originalAirdate", originalAirdate)
        o.put("studio", studio)
        o.put("releaseDate", releaseDate)
        o.put("location", location)
        o.put("latitude", latitude)
        o.put("longitude", longitude)
        o.put("width", width)
        o.put("height", height)
        o.put("creationDateTime", creationDateTime)
        return o.json
    }
}

/// A track of the media (MediaTrack): text, audio or video.
public struct CastMediaTrack: Sendable, Hashable {
    public var trackID: Int64?
    /// "TEXT", "AUDIO" or "VIDEO".
    public var type: String?
    /// For text tracks: "SUBTITLES", "CAPTIONS", "DESCRIPTIONS", "CHAPTERS" or "METADATA".
    public var subtype: String?
    public var trackContentID: String?
    public var trackContentType: String?
    public var name: String?
    public var language: String?
    public var customData: JSONValue?

    public init(trackID: Int64? = nil) { self.trackID = trackID }

    public init(json: JSONValue) {
        let f = JSONFields(json)
        trackID = f.integer("trackId")
        type = f.string("type")
        subtype = f.string("subtype")
        trackContentID = f.string("trackContentId")
        trackContentType = f.string("trackContentType")
        name = f.string("name")
        language = f.string("language")
        customData = f.json("customData")
    }

    public var json: JSONValue {
        var o = JSONMembers()
        o.put("trackId", trackID)
        o.put("type", type)
        o.put("subtype", subtype)
        o.put("trackContentId", trackContentID)
        o.put("trackContentType", trackContentType)
        o.put("name", name)
        o.put("language", language)
        o.put("customData", customData)
        return o.json
    }
}

/// How text tracks look (TextTrackStyle).
public struct CastTextTrackStyle: Sendable, Hashable {
    public var foregroundColor: String?
    public var backgroundColor: String?
    public var edgeType: String?
    public var edgeColor: String?
    public var fontScale: Double?
    public var fontFamily: String?
    public var fontGenericFamily: String?
    public var fontStyle: String?
    public var windowType: String?
    public var windowColor: String?
    public var windowRoundedCornerRadius: Int64?
    public var customData: JSONValue?

    public init() {}

    public init(json: JSONValue) {
        let f = JSONFields(json)
        foregroundColor = f.string("foregroundColor")
        backgroundColor = f.string("backgroundColor")
        edgeType = f.string("edgeType")
        edgeColor = f.string("edgeColor")
        fontScale = f.number("fontScale")
        fontFamily = f.string("fontFamily")
        fontGenericFamily = f.string("fontGenericFamily")
        fontStyle = f.string("fontStyle")
        windowType = f.string("windowType")
        windowColor = f.string("windowColor")
        windowRoundedCornerRadius = f.integer("windowRoundedCornerRadius")
        customData = f.json("customData")
    }

    public var json: JSONValue {
        var o = JSONMembers()
        o.put("foregroundColor", foregroundColor)
        o.put("backgroundColor", backgroundColor)
        o.put("edgeType", edgeType)
        o.put("edgeColor", edgeColor)
        o.put("fontScale", fontScale)
        o.put("fontFamily", fontFamily)
        o.put("fontGenericFamily", fontGenericFamily)
        o.put("fontStyle", fontStyle)
        o.put("windowType", windowType)
        o.put("windowColor", windowColor)
        o.put("windowRoundedCornerRadius", windowRoundedCornerRadius)
        o.put("customData", customData)
        return o.json
    }
}

/// An ad break (Break): where in the content it plays, and its clips.
public struct CastAdBreak: Sendable, Hashable {
    public var id: String?
    /// Seconds into the content; -1 is a post-roll.
    public var position: Double?
    public var duration: Double?
    public var breakClipIDs: [String]?
    public var isWatched: Bool?
    public var isEmbedded: Bool?

    public init(id: String? = nil) { self.id = id }

    public init(json: JSONValue) {
        let f = JSONFields(json)
        id = f.string("id")
        position = f.number("position")
        duration = f.number("duration")
        breakClipIDs = f.strings("breakClipIds")
        isWatched = f.bool("isWatched")
        isEmbedded = f.bool("isEmbedded")
    }

    public var json: JSONValue {
        var o = JSONMembers()
        o.put("id", id)
        o.put("position", position)
        o.put("duration", duration)
        o.put("breakClipIds", breakClipIDs)
        o.put("isWatched", isWatched)
        o.put("isEmbedded", isEmbedded)
        return o.json
    }
}

/// One clip of an ad break (BreakClip).
public struct CastAdBreakClip: Sendable, Hashable {
    public var id: String?
    public var title: String?
    public var contentID: String?
    public var contentURL: String?
    public var contentType: String?
    public var duration: Double?
    /// Seconds into the clip after which it may be skipped; nil: never.
    public var whenSkippable: Double?
    public var posterURL: String?
    public var clickThroughURL: String?
    public var customData: JSONValue?

    public init(id: String? = nil) { self.id = id }

    public init(json: JSONValue) {
        let f = JSONFields(json)
        id = f.string("id")
        title = f.string("title")
        contentID = f.string("contentId")
        contentURL = f.string("contentUrl")
        contentType = f.string("contentType")
        duration = f.number("duration")
        whenSkippable = f.number("whenSkippable")
        posterURL = f.string("posterUrl")
        clickThroughURL = f.string("clickThroughUrl")
        customData = f.json("customData")
    }

    public var json: JSONValue {
        var o = JSONMembers()
        o.put("id", id)
        o.put("title", title)
        o.put("contentId", contentID)
        o.put("contentUrl", contentURL)
        o.put("contentType", contentType)
        o.put("duration", duration)
        o.put("whenSkippable", whenSkippable)
        o.put("posterUrl", posterURL)
        o.put("clickThroughUrl", clickThroughURL)
        o.put("customData", customData)
        return o.json
    }
}

/// MediaInformation: what is loaded, or what a LOAD or a queue item asks for.
public struct CastMediaInformation: Sendable, Hashable {
    public var contentID: String?
    public var contentURL: String?
    /// "NONE", "BUFFERED" or "LIVE". Senders are sloppy (catt sends null): absent means BUFFERED.
    public var streamType: String
    public var contentType: String?
    /// Seconds; nil when unknown or live.
    public var duration: Double?
    public var metadata: CastMediaMetadata?
    public var customData: JSONValue?
    public var entity: String?
    public var tracks: [CastMediaTrack]?
    public var textTrackStyle: CastTextTrackStyle?
    public var breaks: [CastAdBreak]?
    public var breakClips: [CastAdBreakClip]?
    /// The keys none of the above names.
    public var others: [String: JSONValue]

    private static let known: Set<String> = [
        "contentId", "contentUrl", "contentType", "streamType", "duration", "metadata", "customData", "entity",
        "tracks", "textTrackStyle", "breaks", "breakClips",
    ]

    public init(
        contentID: String?, contentURL: String? = nil, streamType: String = "BUFFERED", contentType: String? = nil,
        duration: Double? = nil, metadata: CastMediaMetadata? = nil, others: [String: JSONValue] = [:]
    ) {
        self.contentID = contentID
        self.contentURL = contentURL
        self.streamType = streamType
        self.contentType = contentType
        self.duration = duration
        self.metadata = metadata
        self.others = others
    }

    /// Nil when `json` is not an object.
    public init?(json: JSONValue?) {
        guard let json, json.objectValue != nil else { return nil }
        let f = JSONFields(json)
        contentID = f.string("contentId")
        contentURL = f.string("contentUrl")
        streamType = f.string("streamType") ?? "BUFFERED"
        contentType = f.string("contentType")
        duration = f.number("duration")
        metadata = f.object("metadata", CastMediaMetadata.init(json:))
        customData = f.json("customData")
        entity = f.string("entity")
        tracks = f.objects("tracks", CastMediaTrack.init(json:))
        textTrackStyle = f.object("textTrackStyle", CastTextTrackStyle.init(json:))
        breaks = f.objects("breaks", CastAdBreak.init(json:))
        breakClips = f.objects("breakClips", CastAdBreakClip.init(json:))
        others = f.others(known: Self.known)
    }

    public var json: JSONValue {
        var o = JSONMembers(others)
        o.put("contentId", contentID)
        o.put("contentUrl", contentURL)
        o.put("streamType", streamType)
        o.put("contentType", contentType)
        o.put("duration", duration)
        o.put("metadata", metadata?.json)
        o.put("customData", customData)
        o.put("entity", entity)
        o.put("tracks", tracks?.map(\.json))
        o.put("textTrackStyle", textTrackStyle?.json)
        o.put("breaks", breaks?.map(\.json))
        o.put("breakClips", breakClips?.map(\.json))
        return o.json
    }

    /// Whether `other` names the same content: the same contentId, else entity, else contentUrl
    /// (senders fill different ones).
    public func namesSameContent(as other: CastMediaInformation) -> Bool {
        for key in [\CastMediaInformation.contentID, \.entity, \.contentURL] {
            if let x = self[keyPath: key], !x.isEmpty, let y = other[keyPath: key], !y.isEmpty {
                return x == y
            }
        }
        return false
    }
}

/// One item of a media queue (QueueItem).
public struct CastQueueItem: Sendable, Hashable {
    /// Given by the receiver: absent in QUEUE_LOAD and QUEUE_INSERT.
    public var itemID: Int64?
    /// Devices often leave it out of MEDIA_STATUS once they have sent it.
    public var media: CastMediaInformation?
    public var autoplay: Bool?
    public var startTime: Double?
    public var preloadTime: Double?
    public var activeTrackIDs: [Int64]?
    public var playbackDuration: Double?
    public var customData: JSONValue?
    public var orderID: Int64?

    public init(itemID: Int64? = nil, media: CastMediaInformation? = nil) {
        self.itemID = itemID
        self.media = media
    }

    public init(json: JSONValue) {
        let f = JSONFields(json)
        itemID = f.integer("itemId")
        media = f.object("media", CastMediaInformation.init(json:))
        autoplay = f.bool("autoplay")
        startTime = f.number("startTime")
        preloadTime = f.number("preloadTime")
        activeTrackIDs = f.integers("activeTrackIds")
        playbackDuration = f.number("playbackDuration")
        customData = f.json("customData")
        orderID = f.integer("orderId")
    }

    public var json: JSONValue {
        var o = JSONMembers()
        o.put("itemId", itemID)
        o.put("media", media?.json)
        o.put("autoplay", autoplay)
        o.put("startTime", startTime)
        o.put("preloadTime", preloadTime)
        o.put("activeTrackIds", activeTrackIDs)
        o.put("playbackDuration", playbackDuration)
        o.put("customData", customData)
        o.put("orderId", orderID)
        return o.json
    }
}
