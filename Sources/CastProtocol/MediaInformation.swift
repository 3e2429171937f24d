// The media namespace's MediaInformation and what it holds, typed: what a LOAD or a queue item
// carries and what MEDIA_STATUS says is loaded. Each type is a table of its members
// (`JSONRecord`): it reads leniently (a member of the wrong type reads as nil) and writes what is
// not nil. Keys the types do not name are kept in `others` where the SDK lets apps put their own
// (media, metadata), so nothing is lost on the way through.

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
public struct CastMediaMetadata: Sendable, Hashable, JSONRecord {
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
    public var others: [String: JSONValue] = [:]

    static let members: [JSONMember<Self>] = [
        .others(\.others, known: { known }),
        .integer("metadataType", \.metadataType), .string("title", \.title), .string("subtitle", \.subtitle),
        .string("artist", \.artist), .string("albumName", \.albumName),
        JSONMember(
            key: "images", read: { $0.images = $1.members["images"]?.arrayValue?.compactMap(CastImage.init(json:)) },
            write: { $1.put("images", $0.images?.map(\.json)) }),
        .string("albumArtist", \.albumArtist), .string("composer", \.composer),
        .integer("trackNumber", \.trackNumber), .integer("discNumber", \.discNumber),
        .string("seriesTitle", \.seriesTitle), .integer("season", \.season), .integer("episode", \.episode),
        .string("originalAirdate", \.originalAirdate), .string("studio", \.studio),
        .string("releaseDate", \.releaseDate), .string("location", \.location),
        .number("latitude", \.latitude), .number("longitude", \.longitude),
        .integer("width", \.width), .integer("height", \.height), .string("creationDateTime", \.creationDateTime),
    ]
    private static let known = keys.union(["type"])

    init() {}

    public init(metadataType: Int64? = nil, title: String? = nil, others: [String: JSONValue] = [:]) {
        self.metadataType = metadataType
        self.title = title
        self.others = others
    }

    /// Nil when `json` is not an object.
    public init?(json: JSONValue?) {
        guard let json, json.objectValue != nil else { return nil }
        self.init(reading: json)
    }

    public var json: JSONValue { writing() }
}

/// A track of the media (MediaTrack): text, audio or video.
public struct CastMediaTrack: Sendable, Hashable, JSONRecord {
    public var trackID: Int64?
    /// "TEXT", "AUDIO" or "VIDEO" (``trackType``).
    public var type: String?
    /// For text tracks: "SUBTITLES", "CAPTIONS", "DESCRIPTIONS", "CHAPTERS" or "METADATA"
    /// (``textSubtype``).
    public var subtype: String?
    public var trackContentID: String?
    public var trackContentType: String?
    public var name: String?
    public var language: String?
    public var customData: JSONValue?

    static let members: [JSONMember<Self>] = [
        .integer("trackId", \.trackID), .string("type", \.type), .string("subtype", \.subtype),
        .string("trackContentId", \.trackContentID), .string("trackContentType", \.trackContentType),
        .string("name", \.name), .string("language", \.language), .json("customData", \.customData),
    ]

    init() {}

    public init(trackID: Int64? = nil) { self.trackID = trackID }

    public init(json: JSONValue) { self.init(reading: json) }

    public var json: JSONValue { writing() }
}

/// How text tracks look (TextTrackStyle).
public struct CastTextTrackStyle: Sendable, Hashable, JSONRecord {
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

    static let members: [JSONMember<Self>] = [
        .string("foregroundColor", \.foregroundColor), .string("backgroundColor", \.backgroundColor),
        .string("edgeType", \.edgeType), .string("edgeColor", \.edgeColor), .number("fontScale", \.fontScale),
        .string("fontFamily", \.fontFamily), .string("fontGenericFamily", \.fontGenericFamily),
        .string("fontStyle", \.fontStyle), .string("windowType", \.windowType),
        .string("windowColor", \.windowColor), .integer("windowRoundedCornerRadius", \.windowRoundedCornerRadius),
        .json("customData", \.customData),
    ]

    public init() {}

    public init(json: JSONValue) { self.init(reading: json) }

    public var json: JSONValue { writing() }
}

/// An ad break (Break): where in the content it plays, and its clips.
public struct CastAdBreak: Sendable, Hashable, JSONRecord {
    public var id: String?
    /// Seconds into the content; -1 is a post-roll.
    public var position: Double?
    public var duration: Double?
    public var breakClipIDs: [String]?
    public var isWatched: Bool?
    public var isEmbedded: Bool?

    static let members: [JSONMember<Self>] = [
        .string("id", \.id), .number("position", \.position), .number("duration", \.duration),
        .strings("breakClipIds", \.breakClipIDs), .bool("isWatched", \.isWatched), .bool("isEmbedded", \.isEmbedded),
    ]

    init() {}

    public init(id: String? = nil) { self.id = id }

    public init(json: JSONValue) { self.init(reading: json) }

    public var json: JSONValue { writing() }
}

/// One clip of an ad break (BreakClip).
public struct CastAdBreakClip: Sendable, Hashable, JSONRecord {
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
    /// Where a VAST ad server gives the clip's content, instead of contentId/contentUrl.
    public var vastAdsRequest: CastVastAdsRequest?

    static let members: [JSONMember<Self>] = [
        .string("id", \.id), .string("title", \.title), .string("contentId", \.contentID),
        .string("contentUrl", \.contentURL), .string("contentType", \.contentType),
        .number("duration", \.duration), .number("whenSkippable", \.whenSkippable),
        .string("posterUrl", \.posterURL), .string("clickThroughUrl", \.clickThroughURL),
        .json("customData", \.customData), .record("vastAdsRequest", \.vastAdsRequest),
    ]

    init() {}

    public init(id: String? = nil) { self.id = id }

    public init(json: JSONValue) { self.init(reading: json) }

    public var json: JSONValue { writing() }
}

/// A clip's VAST request (VastAdsRequest): the ad server's tag URL, or its response.
public struct CastVastAdsRequest: Sendable, Hashable, JSONRecord {
    public var adTagURL: String?
    public var adsResponse: String?

    static let members: [JSONMember<Self>] = [
        .string("adTagUrl", \.adTagURL), .string("adsResponse", \.adsResponse),
    ]

    public init() {}

    public init(json: JSONValue) { self.init(reading: json) }

    public var json: JSONValue { writing() }
}

/// MediaInformation: what is loaded, or what a LOAD or a queue item asks for.
public struct CastMediaInformation: Sendable, Hashable, JSONRecord {
    public var contentID: String?
    public var contentURL: String?
    /// "NONE", "BUFFERED" or "LIVE" (``stream``). Senders are sloppy (catt sends null): absent
    /// means BUFFERED.
    public var streamType = "BUFFERED"
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
    public var others: [String: JSONValue] = [:]

    static let members: [JSONMember<Self>] = [
        .others(\.others, known: { keys }),
        .string("contentId", \.contentID), .string("contentUrl", \.contentURL),
        .string("streamType", \.streamType, default: "BUFFERED"), .string("contentType", \.contentType),
        .number("duration", \.duration), .record("metadata", \.metadata), .json("customData", \.customData),
        .string("entity", \.entity), .records("tracks", \.tracks), .record("textTrackStyle", \.textTrackStyle),
        .records("breaks", \.breaks), .records("breakClips", \.breakClips),
    ]

    init() {}

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
        self.init(reading: json)
    }

    public var json: JSONValue { writing() }

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
public struct CastQueueItem: Sendable, Hashable, JSONRecord {
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

    static let members: [JSONMember<Self>] = [
        .integer("itemId", \.itemID), .record("media", \.media), .bool("autoplay", \.autoplay),
        .number("startTime", \.startTime), .number("preloadTime", \.preloadTime),
        .integers("activeTrackIds", \.activeTrackIDs), .number("playbackDuration", \.playbackDuration),
        .json("customData", \.customData), .integer("orderId", \.orderID),
    ]

    init() {}

    public init(itemID: Int64? = nil, media: CastMediaInformation? = nil) {
        self.itemID = itemID
        self.media = media
    }

    public init(json: JSONValue) { self.init(reading: json) }

    public var json: JSONValue { writing() }
}
