import CastProtocol

/// The media commands that only change the player: validation and effect, no messages.
extension MediaPlayer {
    /// Why a command is refused; becomes the error reply.
    enum Refusal: Error {
        /// INVALID_REQUEST with this reason.
        case invalidRequest(String)
        /// INVALID_PLAYER_STATE.
        case invalidPlayerState

        func payload(requestID: JSONValue) -> JSONValue {
            switch self {
            case .invalidRequest(let reason):
                EmulatedDevice.error("INVALID_REQUEST", requestID: requestID, reason: reason)
            case .invalidPlayerState: ["type": "INVALID_PLAYER_STATE", "requestId": requestID]
            }
        }
    }

    static let playbackRates = 0.5...2.0

    /// SEEK {currentTime | relativeTime, resumeState}: clamped to 0…duration (the live window
    /// for LIVE). Not while an ad plays (INVALID_COMMAND), like receivers that lock seeking in ads.
    mutating func seek(_ request: JSONValue, at now: Duration) throws(Refusal) {
        guard ad == nil else { throw .invalidRequest("INVALID_COMMAND") }
        let target: Double
        if let absolute = request["currentTime"]?.doubleValue {
            target = absolute
        } else if let relative = request["relativeTime"]?.doubleValue {
            target = position + relative
        } else {
            throw .invalidRequest("INVALID_PARAMS")
        }
        guard target.isFinite else { throw .invalidRequest("INVALID_PARAMS") }
        let range = seekableRange(at: now)
        position = min(range.upperBound, max(range.lowerBound, target))
        switch request["resumeState"]?.stringValue {
        case "PLAYBACK_START": self.request(Self.playing)
        case "PLAYBACK_PAUSE": self.request(Self.paused)
        default: break
        }
        seeks += 1
        // A status after the seek already names the preloaded item, if any.
        preloadAnnounced = preloadedItemID(at: now) != nil
    }

    /// SET_VOLUME on the media stream: {volume: {level?, muted?}}.
    mutating func setStreamVolume(_ request: JSONValue) throws(Refusal) {
        guard let change = VolumeChange(request["volume"]) else { throw .invalidRequest("INVALID_PARAMS") }
        change.apply(level: &volumeLevel, muted: &muted)
    }

    /// SET_PLAYBACK_RATE {playbackRate | relativePlaybackRate}: 0.5…2.0.
    mutating func setPlaybackRate(_ request: JSONValue) throws(Refusal) {
        var rate = request["playbackRate"]?.doubleValue
        if rate == nil, let relative = request["relativePlaybackRate"]?.doubleValue {
            rate = playbackRate * relative
        }
        guard let rate, Self.playbackRates.contains(rate) else { throw .invalidRequest("INVALID_PARAMS") }
        playbackRate = rate
    }

    /// EDIT_TRACKS_INFO {activeTrackIds, textTrackStyle, language, enableTextTracks}. Returns
    /// whether the media changed (a new `textTrackStyle`).
    mutating func editTracks(_ request: JSONValue) throws(Refusal) -> Bool {
        var item = current
        let tracks = item.media["tracks"]?.arrayValue ?? []
        let textTrackIDs = Set(tracks.filter { $0["type"] == "TEXT" }.compactMap { $0["trackId"]?.intValue })
        if let requested = request["activeTrackIds"], !requested.isNull {
            guard let ids = MediaQueueItem.activeTrackIDs(requested, in: item.media) else {
                throw .invalidRequest("INVALID_PARAMS")
            }
            item.activeTrackIDs = ids
        } else if let language = request["language"]?.stringValue?.lowercased() {
            // The first text track in that language (or a regional variant of it) replaces the
            // active text tracks.
            let match = tracks.first { track in
                guard track["type"] == "TEXT", let trackLanguage = track["language"]?.stringValue?.lowercased() else {
                    return false
                }
                return trackLanguage == language || trackLanguage.hasPrefix(language + "-")
            }
            guard let id = match?["trackId"]?.intValue else { throw .invalidRequest("INVALID_PARAMS") }
            item.activeTrackIDs = item.activeTrackIDs.filter { !textTrackIDs.contains($0) } + [id]
        }
        if request["enableTextTracks"]?.boolValue == false {
            item.activeTrackIDs.removeAll { textTrackIDs.contains($0) }
        }
        var mediaChanged = false
        if let style = request["textTrackStyle"], !style.isNull {
            guard style.objectValue != nil else { throw .invalidRequest("INVALID_PARAMS") }
            item.media["textTrackStyle"] = style
            mediaChanged = true
        }
        current = item
        return mediaChanged
    }
}
