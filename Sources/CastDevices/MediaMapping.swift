import CastProtocol
import CastdAPI
import Foundation

// castd.v1's media messages to and from CastProtocol's typed media values (which alone know the
// device's JSON). Reading: what a device left out or sent unreadable is castd.v1's default; keys
// castd.v1 does not name travel in `extra_json`, so nothing is lost on the way through. Writing
// leaves out what is unset (castd.v1's default), as the SDK does.

// MARK: helpers

extension Optional where Wrapped == Int64 {
    fileprivate var uint32: UInt32 { map { UInt32(clamping: max(0, $0)) } ?? 0 }
}

private func unlessZero(_ value: Double) -> Double? { value != 0 ? value : nil }
private func unlessZero(_ value: Int64) -> Int64? { value != 0 ? value : nil }
private func unlessZero(_ value: UInt32) -> Int64? { value != 0 ? Int64(value) : nil }
private func ifTrue(_ value: Bool) -> Bool? { value ? true : nil }
private func unlessEmpty<T>(_ values: [T]) -> [T]? { values.isEmpty ? nil : values }

/// A client's `*_json` text as castd.v1 carries it: "" for nothing.
private func jsonText(_ value: JSONValue?) -> String { value?.jsonString ?? "" }

/// Parses a client's `*_json` field; "" is nil. Throws INVALID_ARGUMENT naming the field.
public func parseClientJSON(_ text: String, field: String) throws -> JSONValue? {
    if text.isEmpty { return nil }
    do {
        return try JSONValue.parse(text)
    } catch {
        throw CastdError(.invalidArgument, "\(field) is not valid JSON: \(error)")
    }
}

/// A client's `extra_json`: the keys it adds to an object; "" is none. Throws INVALID_ARGUMENT
/// when it is not a JSON object.
private func clientExtra(_ text: String, field: String) throws -> [String: JSONValue] {
    guard let value = try parseClientJSON(text, field: field) else { return [:] }
    guard let members = value.objectValue else { throw CastdError(.invalidArgument, "\(field) must be a JSON object") }
    return members
}

/// Keys a client's own JSON adds, as castd.v1 carries them back: "" for none.
private func extraText(_ others: [String: JSONValue]) -> String {
    others.isEmpty ? "" : JSONValue.object(others).jsonString
}

// MARK: enums

extension Castd_V1_RepeatMode {
    init(_ mode: CastRepeatMode) {
        switch mode {
        case .off: self = .off
        case .all: self = .all
        case .single: self = .single
        case .allAndShuffle: self = .allAndShuffle
        }
    }

    var castValue: CastRepeatMode {
        switch self {
        case .all: .all
        case .single: .single
        case .allAndShuffle: .allAndShuffle
        default: .off
        }
    }
}

extension Castd_V1_TrackType {
    init(_ type: CastTrackType?) {
        switch type {
        case .text?: self = .text
        case .audio?: self = .audio
        case .video?: self = .video
        case nil: self = .unspecified
        }
    }

    var castValue: CastTrackType? {
        switch self {
        case .text: .text
        case .audio: .audio
        case .video: .video
        default: nil
        }
    }
}

extension Castd_V1_TextTrackSubtype {
    init(_ subtype: CastTextTrackSubtype?) {
        switch subtype {
        case .subtitles?: self = .subtitles
        case .captions?: self = .captions
        case .descriptions?: self = .descriptions
        case .chapters?: self = .chapters
        case .metadata?: self = .metadata
        case nil: self = .unspecified
        }
    }

    var castValue: CastTextTrackSubtype? {
        switch self {
        case .subtitles: .subtitles
        case .captions: .captions
        case .descriptions: .descriptions
        case .chapters: .chapters
        case .metadata: .metadata
        default: nil
        }
    }
}

extension Castd_V1_PlayerState {
    init(_ state: CastPlayerState?) {
        switch state {
        case .idle?: self = .idle
        case .playing?: self = .playing
        case .paused?: self = .paused
        case .buffering?: self = .buffering
        case .loading?: self = .loading
        case nil: self = .unknown
        }
    }
}

extension Castd_V1_StreamType {
    init(_ type: CastStreamType) {
        switch type {
        case .none: self = .none
        case .buffered: self = .buffered
        case .live: self = .live
        }
    }

    var castValue: CastStreamType {
        switch self {
        case .none: .none
        case .live: .live
        default: .buffered
        }
    }
}

// MARK: metadata

extension CastdMediaMetadata {
    init(_ cast: CastMediaMetadata) {
        self.init()
        // Any number a device sends: one outside int32 would overflow the encoder (CastdAPI's
        // ProtobufEnumRange.swift), so it reads as generic, as an absent type does.
        metadataType = cast.metadataType.flatMap(Castd_V1_MetadataType.init(checkedRawValue:)) ?? .generic
        title = cast.title ?? ""
        subtitle = cast.subtitle ?? ""
        artist = cast.artist ?? ""
        albumName = cast.albumName ?? ""
        images = (cast.images ?? []).map { image in
            var i = Castd_V1_Image()
            i.url = image.url
            i.width = image.width.uint32
            i.height = image.height.uint32
            return i
        }
        albumArtist = cast.albumArtist ?? ""
        composer = cast.composer ?? ""
        trackNumber = cast.trackNumber.uint32
        discNumber = cast.discNumber.uint32
        seriesTitle = cast.seriesTitle ?? ""
        season = cast.season.uint32
        episode = cast.episode.uint32
        originalAirDate = cast.originalAirdate ?? ""
        studio = cast.studio ?? ""
        releaseDate = cast.releaseDate ?? ""
        location = cast.location ?? ""
        latitude = cast.latitude ?? 0
        longitude = cast.longitude ?? 0
        width = cast.width.uint32
        height = cast.height.uint32
        creationDateTime = cast.creationDateTime ?? ""
        extraJson = extraText(cast.others)
    }

    /// The metadata as the device takes it. Throws INVALID_ARGUMENT for a bad `extra_json`.
    public func castValue() throws -> CastMediaMetadata {
        var m = CastMediaMetadata(
            metadataType: Int64(metadataType.rawValue), title: title.nonEmpty,
            others: try clientExtra(extraJson, field: "metadata.extra_json"))
        m.subtitle = subtitle.nonEmpty
        m.artist = artist.nonEmpty
        m.albumName = albumName.nonEmpty
        m.images = unlessEmpty(
            images.map { CastImage(url: $0.url, width: unlessZero($0.width), height: unlessZero($0.height)) })
        m.albumArtist = albumArtist.nonEmpty
        m.composer = composer.nonEmpty
        m.trackNumber = unlessZero(trackNumber)
        m.discNumber = unlessZero(discNumber)
        m.seriesTitle = seriesTitle.nonEmpty
        m.season = unlessZero(season)
        m.episode = unlessZero(episode)
        m.originalAirdate = originalAirDate.nonEmpty
        m.studio = studio.nonEmpty
        m.releaseDate = releaseDate.nonEmpty
        m.location = location.nonEmpty
        m.latitude = unlessZero(latitude)
        m.longitude = unlessZero(longitude)
        m.width = unlessZero(width)
        m.height = unlessZero(height)
        m.creationDateTime = creationDateTime.nonEmpty
        return m
    }
}

// MARK: tracks and style

extension CastdMediaTrack {
    init(_ cast: CastMediaTrack) {
        self.init()
        trackID = cast.trackID ?? 0
        type = Castd_V1_TrackType(cast.trackType)
        subtype = Castd_V1_TextTrackSubtype(cast.textSubtype)
        contentID = cast.trackContentID ?? ""
        contentType = cast.trackContentType ?? ""
        name = cast.name ?? ""
        language = cast.language ?? ""
        customDataJson = jsonText(cast.customData)
    }

    public func castValue() throws -> CastMediaTrack {
        var t = CastMediaTrack(trackID: trackID)
        t.trackType = type.castValue
        t.textSubtype = subtype.castValue
        t.trackContentID = contentID.nonEmpty
        t.trackContentType = contentType.nonEmpty
        t.name = name.nonEmpty
        t.language = language.nonEmpty
        t.customData = try parseClientJSON(customDataJson, field: "track \(trackID) custom_data_json")
        return t
    }
}

extension CastdTextTrackStyle {
    init(_ cast: CastTextTrackStyle) {
        self.init()
        foregroundColor = cast.foregroundColor ?? ""
        backgroundColor = cast.backgroundColor ?? ""
        edgeType = cast.edgeType ?? ""
        edgeColor = cast.edgeColor ?? ""
        fontScale = cast.fontScale ?? 0
        fontFamily = cast.fontFamily ?? ""
        fontGenericFamily = cast.fontGenericFamily ?? ""
        fontStyle = cast.fontStyle ?? ""
        windowType = cast.windowType ?? ""
        windowColor = cast.windowColor ?? ""
        windowRoundedCornerRadius = cast.windowRoundedCornerRadius.uint32
        customDataJson = jsonText(cast.customData)
    }

    public func castValue() throws -> CastTextTrackStyle {
        var s = CastTextTrackStyle()
        s.foregroundColor = foregroundColor.nonEmpty
        s.backgroundColor = backgroundColor.nonEmpty
        s.edgeType = edgeType.nonEmpty
        s.edgeColor = edgeColor.nonEmpty
        s.fontScale = unlessZero(fontScale)
        s.fontFamily = fontFamily.nonEmpty
        s.fontGenericFamily = fontGenericFamily.nonEmpty
        s.fontStyle = fontStyle.nonEmpty
        s.windowType = windowType.nonEmpty
        s.windowColor = windowColor.nonEmpty
        s.windowRoundedCornerRadius = unlessZero(windowRoundedCornerRadius)
        s.customData = try parseClientJSON(customDataJson, field: "text_track_style.custom_data_json")
        return s
    }
}

// MARK: ad breaks

extension Castd_V1_AdBreak {
    init(_ cast: CastAdBreak) {
        self.init()
        id = cast.id ?? ""
        position = cast.position ?? 0
        duration = cast.duration ?? 0
        breakClipIds = cast.breakClipIDs ?? []
        isWatched = cast.isWatched ?? false
        isEmbedded = cast.isEmbedded ?? false
    }

    public func castValue() -> CastAdBreak {
        var b = CastAdBreak(id: id)
        b.position = position
        b.duration = unlessZero(duration)
        b.breakClipIDs = breakClipIds
        b.isWatched = ifTrue(isWatched)
        b.isEmbedded = ifTrue(isEmbedded)
        return b
    }
}

extension Castd_V1_AdBreakClip {
    init(_ cast: CastAdBreakClip) {
        self.init()
        id = cast.id ?? ""
        title = cast.title ?? ""
        contentID = cast.contentID ?? ""
        contentURL = cast.contentURL ?? ""
        contentType = cast.contentType ?? ""
        duration = cast.duration ?? 0
        if let skippable = cast.whenSkippable { whenSkippable = skippable }
        posterURL = cast.posterURL ?? ""
        clickThroughURL = cast.clickThroughURL ?? ""
        customDataJson = jsonText(cast.customData)
        if let vast = cast.vastAdsRequest {
            vastAdsRequest.adTagURL = vast.adTagURL ?? ""
            vastAdsRequest.adsResponse = vast.adsResponse ?? ""
        }
    }

    public func castValue() throws -> CastAdBreakClip {
        var c = CastAdBreakClip(id: id)
        c.title = title.nonEmpty
        c.contentID = contentID.nonEmpty
        c.contentURL = contentURL.nonEmpty
        c.contentType = contentType.nonEmpty
        c.duration = unlessZero(duration)
        c.whenSkippable = hasWhenSkippable ? whenSkippable : nil
        c.posterURL = posterURL.nonEmpty
        c.clickThroughURL = clickThroughURL.nonEmpty
        c.customData = try parseClientJSON(customDataJson, field: "break clip \(id) custom_data_json")
        if hasVastAdsRequest {
            var vast = CastVastAdsRequest()
            vast.adTagURL = vastAdsRequest.adTagURL.nonEmpty
            vast.adsResponse = vastAdsRequest.adsResponse.nonEmpty
            c.vastAdsRequest = vast
        }
        return c
    }
}

// MARK: media information

extension CastdMediaInformation {
    init(_ cast: CastMediaInformation) {
        self.init()
        contentID = cast.contentID ?? ""
        contentURL = cast.contentURL ?? ""
        contentType = cast.contentType ?? ""
        streamType = Castd_V1_StreamType(cast.stream)
        duration = max(0, cast.duration ?? 0)
        if let metadata = cast.metadata { self.metadata = CastdMediaMetadata(metadata) }
        customDataJson = jsonText(cast.customData)
        entity = cast.entity ?? ""
        tracks = (cast.tracks ?? []).map(CastdMediaTrack.init)
        if let style = cast.textTrackStyle { textTrackStyle = CastdTextTrackStyle(style) }
        breaks = (cast.breaks ?? []).map(Castd_V1_AdBreak.init)
        breakClips = (cast.breakClips ?? []).map(Castd_V1_AdBreakClip.init)
        extraJson = extraText(cast.others)
    }

    /// The media of a LOAD or a queue item. Throws INVALID_ARGUMENT for bad JSON fields.
    public func castValue() throws -> CastMediaInformation {
        var m = CastMediaInformation(
            contentID: contentID.isEmpty ? contentURL : contentID, contentURL: contentURL.nonEmpty,
            streamType: streamType.castValue.rawValue, contentType: contentType.nonEmpty,
            duration: unlessZero(duration),
            metadata: hasMetadata ? try metadata.castValue() : nil,
            others: try clientExtra(extraJson, field: "media.extra_json"))
        m.customData = try parseClientJSON(customDataJson, field: "media.custom_data_json")
        m.entity = entity.nonEmpty
        m.tracks = unlessEmpty(try tracks.map { try $0.castValue() })
        m.textTrackStyle = hasTextTrackStyle ? try textTrackStyle.castValue() : nil
        m.breaks = unlessEmpty(breaks.map { $0.castValue() })
        m.breakClips = unlessEmpty(try breakClips.map { try $0.castValue() })
        return m
    }
}

// MARK: queue items

extension CastdQueueItem {
    /// `knownMedia` stands in for media the item does not carry (devices leave it out once sent).
    init(_ cast: CastQueueItem, knownMedia: CastMediaInformation?) {
        self.init()
        itemID = cast.itemID ?? 0
        if let media = cast.media ?? knownMedia { self.media = CastdMediaInformation(media) }
        if let autoplay = cast.autoplay { self.autoplay = autoplay }
        startTime = cast.startTime ?? 0
        preloadTime = cast.preloadTime ?? 0
        activeTrackIds = cast.activeTrackIDs ?? []
        playbackDuration = cast.playbackDuration ?? 0
        customDataJson = jsonText(cast.customData)
        orderID = cast.orderID ?? 0
    }

    /// A queue item for QUEUE_LOAD, QUEUE_INSERT or QUEUE_UPDATE.
    public func castValue(includeItemID: Bool) throws -> CastQueueItem {
        var q = CastQueueItem(itemID: includeItemID ? itemID : nil, media: hasMedia ? try media.castValue() : nil)
        q.autoplay = hasAutoplay ? autoplay : true
        q.startTime = unlessZero(startTime)
        q.preloadTime = unlessZero(preloadTime)
        q.activeTrackIDs = unlessEmpty(activeTrackIds)
        q.playbackDuration = unlessZero(playbackDuration)
        q.customData = try parseClientJSON(customDataJson, field: "queue item custom_data_json")
        return q
    }
}

// MARK: media status

extension CastdMediaStatus {
    /// One MEDIA_STATUS entry as clients see it. `media` is what castd last knew of the media
    /// session (devices often leave it out); `itemMedia` likewise for queue items.
    package init(
        deviceID: String, status cast: CastMediaStatus, media: CastMediaInformation?,
        itemMedia: [Int64: CastMediaInformation], receivedAt: Date
    ) {
        self.init()
        self.deviceID = deviceID
        mediaSessionID = cast.mediaSessionID
        playerState = Castd_V1_PlayerState(cast.state)
        idleReason = cast.idleReason ?? ""
        currentTime = max(0, cast.currentTime)
        playbackRate = cast.playbackRate
        if let media { self.media = CastdMediaInformation(media) }
        if let volume = cast.volume { self.volume = CastdVolume(volume) }
        supportedMediaCommands = UInt64(clamping: max(0, cast.supportedMediaCommands))
        supportedCommands = CastdMediaCommand.names(in: supportedMediaCommands)
        updatedAtMs = Int64(receivedAt.timeIntervalSince1970 * 1000)
        activeTrackIds = cast.activeTrackIDs ?? []
        items = (cast.items ?? []).map { item in
            CastdQueueItem(item, knownMedia: item.itemID.flatMap { itemMedia[$0] })
        }
        currentItemID = cast.currentItemID ?? 0
        loadingItemID = cast.loadingItemID ?? 0
        preloadedItemID = cast.preloadedItemID ?? 0
        repeatMode = cast.repetition.map(Castd_V1_RepeatMode.init) ?? .off
        if let breakStatus = cast.breakStatus {
            var b = Castd_V1_BreakStatus()
            b.breakID = breakStatus.breakID ?? ""
            b.breakClipID = breakStatus.breakClipID ?? ""
            b.currentBreakTime = breakStatus.currentBreakTime ?? 0
            b.currentBreakClipTime = breakStatus.currentBreakClipTime ?? 0
            if let when = breakStatus.whenSkippable, when >= 0 {
                b.secondsUntilSkippable = max(0, when - b.currentBreakClipTime)
            } else {
                b.secondsUntilSkippable = -1
            }
            self.breakStatus = b
        }
        if let video = cast.videoInfo {
            var v = Castd_V1_VideoInfo()
            v.width = video.width.uint32
            v.height = video.height.uint32
            v.hdrType = video.hdrType ?? ""
            videoInfo = v
        }
        if let range = cast.liveSeekableRange {
            var r = Castd_V1_LiveSeekableRange()
            r.start = range.start ?? 0
            r.end = range.end ?? 0
            r.isMovingWindow = range.isMovingWindow ?? false
            r.isLiveDone = range.isLiveDone ?? false
            liveSeekableRange = r
        }
        customDataJson = jsonText(cast.customData)
    }
}
