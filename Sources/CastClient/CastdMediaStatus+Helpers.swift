import CastdAPI
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension CastdMediaStatus {
    /// The names of the commands the player supports now ("pause", "seek", "queue_next", …):
    /// castd's `supportedCommands`, or, from a daemon that sends only the bit flags, the flags
    /// this library knows decoded by ``CastdMediaCommand``.
    public var supportedCommandNames: [String] {
        if !supportedCommands.isEmpty { return supportedCommands }
        return CastdMediaCommand.names(in: supportedMediaCommands)
    }

    /// Whether the player supports `command` now.
    public func supports(_ command: CastdMediaCommand) -> Bool {
        if command.flag != 0, supportedMediaCommands & command.flag != 0 { return true }
        return supportedCommands.contains(command.name)
    }

    /// The queue item that plays (or is paused, or buffers): the one `currentItemID` names, if the
    /// status lists it in `items`.
    public var currentQueueItem: CastdQueueItem? {
        guard let index = currentQueueIndex else { return nil }
        return items[index]
    }

    /// Where the current item is in `items` (0 is the first), if the status lists it.
    public var currentQueueIndex: Int? {
        guard currentItemID != 0 else { return nil }
        return items.firstIndex { $0.itemID == currentItemID }
    }

    /// The media's tracks that are active, in the media's order. Ids of tracks the status does
    /// not describe (no `media.tracks`) are left out.
    public var activeTracks: [CastdMediaTrack] {
        let active = Set(activeTrackIds)
        return media.tracks.filter { active.contains($0.trackID) }
    }

    /// The ad break that plays, if one does and the media describes it.
    public var currentAdBreak: CastdAdBreak? {
        guard hasBreakStatus else { return nil }
        return media.breaks.first { $0.id == breakStatus.breakID }
    }

    /// The ad clip that plays, if one does and the media describes it.
    public var currentAdBreakClip: CastdAdBreakClip? {
        guard hasBreakStatus else { return nil }
        return media.breakClips.first { $0.id == breakStatus.breakClipID }
    }

    /// Which clip of its break plays: (1-based number, clips in the break), when an ad plays and
    /// the media describes its break.
    public var adBreakClipPosition: (number: Int, count: Int)? {
        guard let adBreak = currentAdBreak,
            let index = adBreak.breakClipIds.firstIndex(of: breakStatus.breakClipID)
        else { return nil }
        return (index + 1, adBreak.breakClipIds.count)
    }
}

extension CastdQueueItem {
    /// A queue item for `media` (a new one: its id is assigned by the device).
    ///
    /// - Parameters:
    ///   - autoplay: Whether the item starts playing when it is reached; `nil`: the device's
    ///     default (true).
    ///   - startTime: Seconds into the media to start from.
    public init(media: CastdMediaInformation, autoplay: Bool? = nil, startTime: Double = 0) {
        self.init()
        self.media = media
        if let autoplay { self.autoplay = autoplay }
        self.startTime = startTime
    }
}

extension CastdMediaTrack {
    /// A subtitles text track from a URL.
    ///
    /// - Parameters:
    ///   - id: The track's id, unique within the media, 1 or more.
    ///   - url: Where the device fetches it (WebVTT is what every receiver reads).
    ///   - language: Its language, BCP-47 ("en", "pt-BR"); `""` for none.
    ///   - name: A name to show in track choosers; `""` for none.
    ///   - contentType: Its MIME type.
    public init(
        subtitlesID id: Int64,
        url: String,
        language: String = "",
        name: String = "",
        contentType: String = "text/vtt"
    ) {
        self.init()
        trackID = id
        type = .text
        subtype = .subtitles
        contentID = url
        self.contentType = contentType
        self.language = language
        self.name = name
    }
}
