import CastProtocol

/// One loaded item and where its playback stands.
struct MediaPlayer {
    static let playing = "PLAYING"
    static let paused = "PAUSED"
    static let buffering = "BUFFERING"
    static let idle = "IDLE"

    /// PAUSE | SEEK | STREAM_VOLUME | STREAM_MUTE | EDIT_TRACKS | PLAYBACK_RATE | STREAM_TRANSFER:
    /// what the Default Media Receiver reports.
    static let supportedMediaCommands = 274_447

    var mediaSessionID: Int
    var itemID: Int
    var media: [String: JSONValue]
    var duration: Double
    var autoplay: Bool
    var playerState: String
    /// The position at `since`.
    var position: Double
    var since: Duration
    var playbackRate = 1.0
    var volumeLevel = 1.0
    var muted = false
    var activeTrackIDs: [JSONValue] = []

    func currentTime(at now: Duration) -> Double {
        guard playerState == Self.playing else { return position }
        return min(duration, position + max(0, (now - since).seconds) * playbackRate)
    }

    /// Folds the time played so far into `position`, before a change of state or rate.
    mutating func settle(at now: Duration) {
        position = currentTime(at: now)
        since = now
    }

    /// When playback reaches the end, if it is playing.
    var endDeadline: Duration? {
        guard playerState == Self.playing, playbackRate > 0 else { return nil }
        return since + .seconds(max(0, duration - position) / playbackRate)
    }

    func statusEntry(at now: Duration, includeMedia: Bool) -> JSONValue {
        var entry: [String: JSONValue] = [
            "mediaSessionId": .number(Double(mediaSessionID)),
            "playbackRate": .number(playbackRate),
            "playerState": .string(playerState),
            "currentTime": .number(Self.rounded(currentTime(at: now))),
            "supportedMediaCommands": .number(Double(Self.supportedMediaCommands)),
            "volume": ["level": .number(volumeLevel), "muted": .bool(muted)],
            "activeTrackIds": .array(activeTrackIDs),
            "currentItemId": .number(Double(itemID)),
            "repeatMode": "REPEAT_OFF",
        ]
        if includeMedia {
            entry["media"] = .object(media)
            entry["items"] = [
                [
                    "itemId": .number(Double(itemID)), "media": .object(media), "autoplay": .bool(autoplay),
                    "activeTrackIds": .array(activeTrackIDs), "orderId": 0,
                ]
            ]
        }
        return .object(entry)
    }

    /// The last status of a session that has ended: IDLE with the reason, no media (as real
    /// devices send it).
    func idleEntry(reason: String) -> JSONValue {
        [
            "mediaSessionId": .number(Double(mediaSessionID)),
            "playbackRate": .number(playbackRate),
            "playerState": .string(Self.idle),
            "idleReason": .string(reason),
            "currentTime": 0,
            "supportedMediaCommands": .number(Double(Self.supportedMediaCommands)),
            "volume": ["level": .number(volumeLevel), "muted": .bool(muted)],
            "activeTrackIds": [],
            "currentItemId": .number(Double(itemID)),
            "repeatMode": "REPEAT_OFF",
        ]
    }

    /// Milliseconds are enough, and keep the JSON short.
    static func rounded(_ seconds: Double) -> Double {
        (seconds * 1000).rounded() / 1000
    }
}

/// The media namespace of the running app (`urn:x-cast:com.google.cast.media` on its transport id).
extension EmulatedDevice {
    static let mediaCommands: Set<String> = [
        "PLAY", "PAUSE", "STOP", "SEEK", "SET_VOLUME", "SET_PLAYBACK_RATE", "EDIT_TRACKS_INFO",
    ]

    mutating func handleMediaRequest(
        _ request: JSONValue, from sender: String, on connection: Int, now: Duration,
        into outcome: inout DeviceOutcome
    ) {
        guard let transportID = running?.transportID else { return }
        let type = CastEnvelope(request).type
        let requestID = request["requestId"].flatMap { $0.isNull ? nil : $0 } ?? 0

        func reply(_ payload: JSONValue, _ outcome: inout DeviceOutcome) {
            send(from: transportID, to: sender, on: connection, CastNamespace.media, payload, &outcome)
        }
        func status(_ entries: [JSONValue], requestID: JSONValue) -> JSONValue {
            ["type": "MEDIA_STATUS", "requestId": requestID, "status": .array(entries)]
        }
        func replyAndBroadcast(_ entry: JSONValue, _ outcome: inout DeviceOutcome) {
            reply(status([entry], requestID: requestID), &outcome)
            broadcast(from: transportID, CastNamespace.media, status([entry], requestID: 0), &outcome)
        }
        func invalid(_ reason: String, _ outcome: inout DeviceOutcome) {
            reply(Self.error("INVALID_REQUEST", requestID: requestID, reason: reason), &outcome)
        }

        switch type {
        case "GET_STATUS":
            let entries = player.map { [$0.statusEntry(at: now, includeMedia: true)] } ?? []
            reply(status(entries, requestID: requestID), &outcome)

        case "LOAD":
            guard var media = request["media"]?.objectValue else {
                invalid("INVALID_PARAMS", &outcome)
                return
            }
            guard
                let contentID = media["contentId"]?.stringValue ?? media["contentUrl"]?.stringValue
                    ?? media["entity"]?.stringValue,
                !contentID.isEmpty
            else {
                invalid("INVALID_PARAMS", &outcome)
                return
            }
            media["contentId"] = .string(contentID)
            // Sloppy senders send null or nothing (catt) or LIVE for files (pychromecast).
            let streamType = media["streamType"]?.stringValue ?? ""
            media["streamType"] = .string(["NONE", "BUFFERED", "LIVE"].contains(streamType) ? streamType : "BUFFERED")
            let duration = media["duration"]?.doubleValue.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
                ?? defaultMediaDuration
            media["duration"] = .number(duration)
            let start = min(duration, max(0, request["currentTime"]?.doubleValue ?? 0))
            let autoplay = request["autoplay"]?.boolValue ?? true

            if let previous = player {
                broadcast(
                    from: transportID, CastNamespace.media,
                    status([previous.idleEntry(reason: "INTERRUPTED")], requestID: 0), &outcome
                )
            }
            var loaded = MediaPlayer(
                mediaSessionID: nextMediaSessionID, itemID: nextItemID, media: media, duration: duration,
                autoplay: autoplay, playerState: MediaPlayer.buffering, position: start, since: now
            )
            if let previous = player {
                loaded.volumeLevel = previous.volumeLevel
                loaded.muted = previous.muted
            }
            loaded.activeTrackIDs = request["activeTrackIds"]?.arrayValue ?? []
            nextMediaSessionID += 1
            nextItemID += 1
            // Loading: first a BUFFERING broadcast, then the reply once it plays (or is paused).
            broadcast(
                from: transportID, CastNamespace.media,
                status([loaded.statusEntry(at: now, includeMedia: true)], requestID: 0), &outcome
            )
            loaded.playerState = autoplay ? MediaPlayer.playing : MediaPlayer.paused
            player = loaded
            outcome.playbackChanged = true
            outcome.note(
                .info, "media session \(loaded.mediaSessionID): LOAD \(contentID) (\(duration) s) → \(loaded.playerState)"
            )
            let entry = loaded.statusEntry(at: now, includeMedia: true)
            reply(status([entry], requestID: requestID), &outcome)
            broadcast(from: transportID, CastNamespace.media, status([entry], requestID: 0), &outcome)

        case _ where Self.mediaCommands.contains(type):
            guard var current = player else {
                reply(["type": "INVALID_PLAYER_STATE", "requestId": requestID], &outcome)
                return
            }
            if let id = request["mediaSessionId"], !id.isNull, id.intValue != Int64(current.mediaSessionID) {
                invalid("INVALID_MEDIA_SESSION_ID", &outcome)
                return
            }
            current.settle(at: now)
            switch type {
            case "PLAY":
                current.playerState = MediaPlayer.playing
            case "PAUSE":
                current.playerState = MediaPlayer.paused
            case "STOP":
                player = nil
                outcome.playbackChanged = true
                outcome.note(.info, "media session \(current.mediaSessionID): STOP → IDLE (CANCELLED)")
                replyAndBroadcast(current.idleEntry(reason: "CANCELLED"), &outcome)
                return
            case "SEEK":
                var target = current.position
                if let absolute = request["currentTime"]?.doubleValue {
                    target = absolute
                } else if let relative = request["relativeTime"]?.doubleValue {
                    target += relative
                } else {
                    invalid("INVALID_PARAMS", &outcome)
                    return
                }
                current.position = min(current.duration, max(0, target))
                switch request["resumeState"]?.stringValue {
                case "PLAYBACK_START": current.playerState = MediaPlayer.playing
                case "PLAYBACK_PAUSE": current.playerState = MediaPlayer.paused
                default: break
                }
            case "SET_VOLUME":
                let level = request["volume"]?["level"]?.doubleValue
                let muted = request["volume"]?["muted"]?.boolValue
                guard level != nil || muted != nil, level.map({ (0.0...1.0).contains($0) }) ?? true else {
                    invalid("INVALID_PARAMS", &outcome)
                    return
                }
                if let level { current.volumeLevel = Double(Float(level)) }
                if let muted { current.muted = muted }
            case "SET_PLAYBACK_RATE":
                var rate = request["playbackRate"]?.doubleValue
                if rate == nil, let relative = request["relativePlaybackRate"]?.doubleValue {
                    rate = current.playbackRate * relative
                }
                guard let rate, (0.5...2.0).contains(rate) else {
                    invalid("INVALID_PARAMS", &outcome)
                    return
                }
                current.playbackRate = rate
            case "EDIT_TRACKS_INFO":
                if let tracks = request["activeTrackIds"]?.arrayValue { current.activeTrackIDs = tracks }
            default:
                break
            }
            player = current
            outcome.playbackChanged = true
            outcome.note(
                .info,
                "media session \(current.mediaSessionID): \(type) → \(current.playerState) at \(MediaPlayer.rounded(current.position)) s"
            )
            replyAndBroadcast(current.statusEntry(at: now, includeMedia: false), &outcome)

        case "":
            outcome.note(.info, "ignored a media message without type")

        default:
            invalid("INVALID_COMMAND", &outcome)
        }
    }

    /// When the loaded media will reach its end, if it is playing.
    var nextDeadline: Duration? { player?.endDeadline }

    /// Lets time pass: media that reaches its end goes IDLE (FINISHED), told to every sender.
    mutating func advance(to now: Duration) -> DeviceOutcome {
        var outcome = DeviceOutcome()
        guard let current = player, let transportID = running?.transportID, let end = current.endDeadline,
            now >= end
        else {
            return outcome
        }
        player = nil
        outcome.playbackChanged = true
        outcome.note(.info, "media session \(current.mediaSessionID): reached its end → IDLE (FINISHED)")
        broadcast(
            from: transportID, CastNamespace.media,
            ["type": "MEDIA_STATUS", "requestId": 0, "status": [current.idleEntry(reason: "FINISHED")]], &outcome
        )
        return outcome
    }
}
