import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Media and sessions in words.
enum MediaSummary {
    /// `playing`, `paused`, `idle (finished)`, …
    static func state(_ status: CastdMediaStatus) -> String {
        let name: String
        switch status.playerState {
        case .unknown: name = "unknown"
        case .idle: name = "idle"
        case .playing: name = "playing"
        case .paused: name = "paused"
        case .buffering: name = "buffering"
        case .loading: name = "loading"
        case .UNRECOGNIZED(let value): name = "state \(value)"
        }
        if status.playerState == .idle, !status.idleReason.isEmpty {
            return "\(name) (\(status.idleReason.lowercased()))"
        }
        return name
    }

    /// `1:23 / 9:56`, `1:23 (live)`, or `1:23` when the duration is unknown. With `date`, the
    /// position estimated for then; without, the position as reported.
    static func position(_ status: CastdMediaStatus, at date: Date?) -> String {
        let seconds = date.map { status.estimatedPosition(at: $0) } ?? status.currentTime
        let position = PlaybackTime.format(seconds)
        if status.media.streamType == .live { return "\(position) (live)" }
        if status.media.duration > 0 { return "\(position) / \(PlaybackTime.format(status.media.duration))" }
        return position
    }

    /// The title, else the content id (usually the URL), else nil.
    static func title(_ status: CastdMediaStatus) -> String? {
        guard status.hasMedia else { return nil }
        if !status.media.metadata.title.isEmpty { return status.media.metadata.title }
        return status.media.contentID.isEmpty ? nil : status.media.contentID
    }

    /// One line: `playing  1:23 / 9:56  Big Buck Bunny`, with what else matters in brackets:
    /// `(1.5×, item 2 of 5, ad 1 of 2, skippable in 3 s)`.
    static func line(_ status: CastdMediaStatus, at date: Date?) -> String {
        var parts = [state(status)]
        if status.hasMedia { parts.append(position(status, at: date)) }
        if let title = title(status) { parts.append(title) }
        let extras = [rate(status), queuePosition(status), ad(status, at: date)].compactMap { $0 }
        if !extras.isEmpty { parts.append("(" + extras.joined(separator: ", ") + ")") }
        return parts.joined(separator: "  ")
    }

    /// `1.5×` when the rate is reported and not 1.
    static func rate(_ status: CastdMediaStatus) -> String? {
        guard status.playbackRate > 0, status.playbackRate != 1 else { return nil }
        return PlaybackRateArgument.format(status.playbackRate)
    }

    /// `item 2 of 5`, when the queue has more than one item and castd knows where the current
    /// one is: in the whole queue's order (`queue_item_ids`) when castd has it, else in the
    /// items the status lists (a device that sends a window of a long queue lists only a few).
    static func queuePosition(_ status: CastdMediaStatus) -> String? {
        if status.queueItemIds.count > 1, let index = status.queueItemIds.firstIndex(of: status.currentItemID) {
            return "item \(index + 1) of \(status.queueItemIds.count)"
        }
        guard status.items.count > 1, let index = status.currentQueueIndex else { return nil }
        return "item \(index + 1) of \(status.items.count)"
    }

    /// `item 2 of 5, repeat all`, or nil when there is no queue and no repeat mode.
    static func queue(_ status: CastdMediaStatus) -> String? {
        var parts: [String] = []
        if let position = queuePosition(status) {
            parts.append(position)
        } else if status.items.count > 1 {
            parts.append("\(status.items.count) items")
        }
        if status.repeatMode != .off { parts.append("repeat " + repeatMode(status.repeatMode)) }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// off, all, one, shuffle: as `castc queue repeat` takes them.
    static func repeatMode(_ mode: CastdRepeatMode) -> String {
        switch mode {
        case .off: return "off"
        case .all: return "all"
        case .single: return "one"
        case .allAndShuffle: return "shuffle"
        case .UNRECOGNIZED(let value): return "mode \(value)"
        }
    }

    /// `ad 1 of 2, skippable in 3 s`, `ad, skippable now`, `ad 2 of 2` (never skippable), or nil
    /// when no ad plays. With `date`, the wait is counted down to then.
    static func ad(_ status: CastdMediaStatus, at date: Date?) -> String? {
        guard status.hasBreakStatus else { return nil }
        var text = "ad"
        if let position = status.adBreakClipPosition { text += " \(position.number) of \(position.count)" }
        let wait: Double? =
            if let date { status.secondsUntilSkippable(at: date) } else {
                status.breakStatus.secondsUntilSkippable >= 0 ? status.breakStatus.secondsUntilSkippable : nil
            }
        if let wait {
            text += wait <= 0 ? ", skippable now" : ", skippable in \(Int(wait.rounded(.up))) s"
        }
        return text
    }

    /// The active tracks: `subtitles en (1), audio de (3)`; `none (3 available)`; nil when the
    /// media has no tracks.
    static func tracks(_ status: CastdMediaStatus) -> String? {
        guard !status.media.tracks.isEmpty || !status.activeTrackIds.isEmpty else { return nil }
        let known = Dictionary(status.media.tracks.map { ($0.trackID, $0) }, uniquingKeysWith: { first, _ in first })
        let active = status.activeTrackIds.map { id in known[id].map(track) ?? "track \(id)" }
        if active.isEmpty { return "none active (\(status.media.tracks.count) available)" }
        return active.joined(separator: ", ")
    }

    /// `subtitles en (1)`, `audio (2)`, `subtitles movie.vtt (3)`.
    static func track(_ track: CastdMediaTrack) -> String {
        let label = !track.language.isEmpty ? track.language : track.name
        return [trackType(track), label, "(\(track.trackID))"].filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// subtitles, captions, descriptions, chapters, metadata, text, audio, video.
    static func trackType(_ track: CastdMediaTrack) -> String {
        switch track.type {
        case .text:
            switch track.subtype {
            case .subtitles: return "subtitles"
            case .captions: return "captions"
            case .descriptions: return "descriptions"
            case .chapters: return "chapters"
            case .metadata: return "metadata"
            case .unspecified, .UNRECOGNIZED: return "text"
            }
        case .audio: return "audio"
        case .video: return "video"
        case .unspecified, .UNRECOGNIZED: return "track"
        }
    }

    /// `scale 1.5, foreground #FFFF00FF, edge outline`: the fields the style sets.
    static func textTrackStyle(_ style: CastdTextTrackStyle) -> String? {
        func name(_ value: String) -> String { value.lowercased().replacing("_", with: "-") }
        var parts: [String] = []
        if style.fontScale > 0 { parts.append("scale \(PlaybackRateArgument.number(style.fontScale))") }
        if !style.foregroundColor.isEmpty { parts.append("foreground \(style.foregroundColor)") }
        if !style.backgroundColor.isEmpty { parts.append("background \(style.backgroundColor)") }
        if !style.edgeType.isEmpty { parts.append("edge \(name(style.edgeType))") }
        if !style.edgeColor.isEmpty { parts.append("edge color \(style.edgeColor)") }
        if !style.fontFamily.isEmpty { parts.append("font \(style.fontFamily)") }
        if !style.fontGenericFamily.isEmpty { parts.append(name(style.fontGenericFamily)) }
        if !style.fontStyle.isEmpty { parts.append(name(style.fontStyle)) }
        if !style.windowType.isEmpty { parts.append("window \(name(style.windowType))") }
        if !style.windowColor.isEmpty { parts.append("window color \(style.windowColor)") }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// `1920×1080`, `3840×2160 HDR`, `Dolby Vision`.
    static func video(_ info: CastdVideoInfo) -> String? {
        var parts: [String] = []
        if info.width > 0, info.height > 0 { parts.append("\(info.width)×\(info.height)") }
        switch info.hdrType.lowercased() {
        case "", "sdr": break
        case "hdr": parts.append("HDR")
        case "dv": parts.append("Dolby Vision")
        default: parts.append(info.hdrType.uppercased())
        }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    /// `seekable 0:00–1:02:03, moving window`, `ended, seekable 0:00–2:00:00`.
    static func liveRange(_ range: CastdLiveSeekableRange) -> String {
        var parts = ["seekable \(PlaybackTime.format(range.start))–\(PlaybackTime.format(range.end))"]
        if range.isMovingWindow { parts.append("moving window") }
        if range.isLiveDone { parts.insert("ended", at: 0) }
        return parts.joined(separator: ", ")
    }

    /// What the metadata says beyond the title, as (label, text) for `castc status`:
    /// `series: The Show, season 1, episode 2`, `artist: Band (Album)`, `subtitle: …`.
    static func metadataDetails(_ metadata: CastdMediaMetadata) -> [(String, String)] {
        var rows: [(String, String)] = []
        var series: [String] = []
        if !metadata.seriesTitle.isEmpty { series.append(metadata.seriesTitle) }
        if metadata.season > 0 { series.append("season \(metadata.season)") }
        if metadata.episode > 0 { series.append("episode \(metadata.episode)") }
        if !series.isEmpty { rows.append(("series", series.joined(separator: ", "))) }
        let artist = metadata.artist.isEmpty ? metadata.albumArtist : metadata.artist
        if !artist.isEmpty || !metadata.albumName.isEmpty {
            let album = metadata.albumName.isEmpty ? "" : "(\(metadata.albumName))"
            rows.append(("artist", [artist, album].filter { !$0.isEmpty }.joined(separator: " ")))
        }
        if !metadata.subtitle.isEmpty { rows.append(("subtitle", metadata.subtitle)) }
        return rows
    }

    /// `Default Media Receiver (CC1AD845), started`, with how it came about or ended.
    static func session(_ session: CastdSession) -> String {
        var text = "\(app(session)), \(state(session.state))"
        if session.joined { text += ", joined" }
        if !session.reason.isEmpty { text += ": \(session.reason)" }
        return text
    }

    /// The session's app: `Default Media Receiver (CC1AD845)`, or its id alone without a name.
    static func app(_ session: CastdSession) -> String {
        session.displayName.isEmpty ? session.appID : "\(session.displayName) (\(session.appID))"
    }

    /// The name of the session's device, else its id.
    static func device(_ session: CastdSession) -> String {
        session.deviceName.isEmpty ? session.deviceID : session.deviceName
    }

    static func state(_ state: CastdSessionState) -> String {
        switch state {
        case .unspecified: return "unknown"
        case .starting: return "starting"
        case .started: return "started"
        case .startFailed: return "failed to start"
        case .ending: return "ending"
        case .ended: return "ended"
        case .suspended: return "suspended"
        case .resuming: return "resuming"
        case .resumed: return "resumed"
        case .resumeFailed: return "could not be resumed"
        case .UNRECOGNIZED(let value): return "state \(value)"
        }
    }

    /// `40%`, `40%, muted`, `100%, fixed`
    static func volume(_ volume: CastdVolume) -> String {
        VolumeLevel.format(volume.level) + (volume.muted ? ", muted" : "") + (isFixed(volume) ? ", fixed" : "")
    }

    /// A device's volume in full: `40%, step 5%`, `40%, muted, step 5%`,
    /// `100%, fixed (set it on the device or its amplifier)`.
    static func deviceVolume(_ volume: CastdVolume) -> String {
        var parts = [VolumeLevel.format(volume.level)]
        if volume.muted { parts.append("muted") }
        if isFixed(volume) {
            parts.append("fixed (set it on the device or its amplifier)")
        } else if volume.stepInterval > 0 {
            parts.append("step \(PlaybackRateArgument.number(volume.stepInterval * 100))%")
        }
        return parts.joined(separator: ", ")
    }

    static func isFixed(_ volume: CastdVolume) -> Bool {
        volume.fixed || volume.controlType == "fixed"
    }
}
