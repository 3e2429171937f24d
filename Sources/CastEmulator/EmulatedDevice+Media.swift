import CastProtocol

/// One media request being handled: what was asked, by whom, and where the answer goes.
struct MediaCommand {
    var payload: JSONValue
    var type: String
    /// Echoed in the reply; 0 when the sender sent none.
    var requestID: JSONValue
    var sender: String
    var connection: Int
    /// The running app's transport id: the source of replies and broadcasts.
    var transportID: String
    var now: Duration

    /// Where a LOAD or QUEUE_LOAD starts playback: `currentTime` (at least 0) when it is a finite
    /// number, else nil.
    var startTime: Double? {
        EmulatedDevice.time(payload["currentTime"]).map { max(0, $0) }
    }
}

/// What a command did, and so what the requester is told.
enum MediaCommandResult {
    /// The player changed: the requester gets the status (its requestId), everybody a broadcast.
    case changed(includeMedia: Bool)
    /// Refused: only the requester hears, with this error.
    case refused(MediaPlayer.Refusal)
    /// Every message has been sent already.
    case answered
}

/// The media namespace of the running app (`urn:x-cast:com.google.cast.media` on its transport
/// id): the Default Media Receiver's behaviour, as the sender SDK's remote media client sees it.
extension EmulatedDevice {
    /// Commands that need a media session (INVALID_PLAYER_STATE without one).
    static let playerCommands: Set<String> = [
        "PLAY", "PAUSE", "STOP", "SEEK", "SET_VOLUME", "SET_PLAYBACK_RATE", "EDIT_TRACKS_INFO", "SKIP_AD",
        "QUEUE_INSERT", "QUEUE_REMOVE", "QUEUE_REORDER", "QUEUE_UPDATE", "QUEUE_NEXT", "QUEUE_PREV",
        "QUEUE_GET_ITEM_IDS", "QUEUE_GET_ITEMS",
    ]

    /// detailedErrorCode of LOAD_FAILED for content the device cannot play: CAF's
    /// MEDIA_SRC_NOT_SUPPORTED.
    static let mediaSourceNotSupported = 104
    /// detailedErrorCode of LOAD_FAILED for media the device could not fetch: MEDIA_NETWORK.
    static let mediaNetwork = 103

    mutating func handleMediaRequest(
        _ payload: JSONValue, from sender: String, on connection: Int, now: Duration,
        into outcome: inout DeviceOutcome
    ) {
        guard let transportID = running?.transportID else { return }
        let command = MediaCommand(
            payload: payload, type: CastEnvelope(payload).type,
            requestID: payload["requestId"].flatMap { $0.isNull ? nil : $0 } ?? 0,
            sender: sender, connection: connection, transportID: transportID, now: now
        )
        switch command.type {
        case "GET_STATUS":
            let entries = player.map { [$0.statusEntry(at: now, includeMedia: true)] } ?? []
            reply(Self.mediaStatus(entries, requestID: command.requestID), to: command, &outcome)
        case "LOAD":
            load(command, into: &outcome)
        case "QUEUE_LOAD":
            queueLoad(command, into: &outcome)
        case "STORE_SESSION":
            storeSession(command, into: &outcome)
        case "RESUME_SESSION":
            resumeSession(command, into: &outcome)
        case _ where Self.playerCommands.contains(command.type):
            handlePlayerCommand(command, into: &outcome)
        case "":
            outcome.note(.info, "ignored a media message without type")
        default:
            reply(
                Self.error("INVALID_REQUEST", requestID: command.requestID, reason: "INVALID_COMMAND"), to: command,
                &outcome)
        }
    }

    private mutating func handlePlayerCommand(_ command: MediaCommand, into outcome: inout DeviceOutcome) {
        guard var session = player else {
            reply(MediaPlayer.Refusal.invalidPlayerState.payload(requestID: command.requestID), to: command, &outcome)
            return
        }
        if let id = command.payload["mediaSessionId"], !id.isNull, id.intValue != Int64(session.mediaSessionID) {
            reply(
                Self.error("INVALID_REQUEST", requestID: command.requestID, reason: "INVALID_MEDIA_SESSION_ID"),
                to: command, &outcome)
            return
        }
        session.settle(at: command.now)
        player = session

        let result: MediaCommandResult
        switch command.type {
        case "PLAY": result = modifyPlayer { $0.request(MediaPlayer.playing) }
        case "PAUSE": result = modifyPlayer { $0.request(MediaPlayer.paused) }
        case "STOP": result = stop(command, into: &outcome)
        case "SEEK":
            result = modifyPlayer { player throws(MediaPlayer.Refusal) in
                try player.seek(command.payload, at: command.now)
            }
        case "SET_VOLUME":
            result = modifyPlayer { player throws(MediaPlayer.Refusal) in try player.setStreamVolume(command.payload) }
        case "SET_PLAYBACK_RATE":
            result = modifyPlayer { player throws(MediaPlayer.Refusal) in try player.setPlaybackRate(command.payload) }
        case "EDIT_TRACKS_INFO": result = editTracks(command)
        case "SKIP_AD": result = skipAd(command, into: &outcome)
        default: result = handleQueueCommand(command, into: &outcome)
        }

        switch result {
        case .changed(let includeMedia):
            if let player {
                let time = MediaPlayer.rounded(player.currentTime(at: command.now))
                let what = "\(command.type) → \(player.playerState) at \(time) s, item \(player.current.itemID)"
                outcome.note(.info, "media session \(player.mediaSessionID): \(what)")
            }
            replyAndBroadcastStatus(command, includeMedia: includeMedia, &outcome)
        case .refused(let refusal):
            outcome.note(.info, "media \(command.type) refused: \(refusal)")
            reply(refusal.payload(requestID: command.requestID), to: command, &outcome)
        case .answered:
            break
        }
    }

    /// Runs a player-only change on the current session; a refusal leaves it unchanged.
    private mutating func modifyPlayer(
        _ change: (inout MediaPlayer) throws(MediaPlayer.Refusal) -> Void
    ) -> MediaCommandResult {
        guard var session = player else { return .refused(.invalidPlayerState) }
        do {
            try change(&session)
        } catch {
            return .refused(error)
        }
        player = session
        return .changed(includeMedia: false)
    }

    private mutating func editTracks(_ command: MediaCommand) -> MediaCommandResult {
        guard var session = player else { return .refused(.invalidPlayerState) }
        do {
            let mediaChanged = try session.editTracks(command.payload)
            player = session
            return .changed(includeMedia: mediaChanged)
        } catch {
            return .refused(error)
        }
    }

    private mutating func stop(_ command: MediaCommand, into outcome: inout DeviceOutcome) -> MediaCommandResult {
        guard let session = player else { return .refused(.invalidPlayerState) }
        player = nil
        cancelLoad(awaiting: session.fetch, &outcome)
        outcome.note(.info, "media session \(session.mediaSessionID): STOP → IDLE (CANCELLED)")
        replyAndBroadcast(session.idleEntry(reason: "CANCELLED"), command, &outcome)
        return .answered
    }

    // MARK: LOAD

    mutating func load(_ command: MediaCommand, into outcome: inout DeviceOutcome) {
        let payload = command.payload
        // LOAD with queueData (the sender SDK's MediaLoadRequestData) loads a whole queue.
        if let queueItems = payload["queueData"]?["items"]?.arrayValue, !queueItems.isEmpty {
            loadQueue(
                command, items: queueItems, startIndex: payload["queueData"]?["startIndex"],
                repeatMode: payload["queueData"]?["repeatMode"], into: &outcome
            )
            return
        }
        guard let media = MediaQueueItem.normalizedMedia(payload["media"], defaultDuration: defaultMediaDuration) else {
            refuseLoad(command, reason: "INVALID_PARAMS", record: nil, &outcome)
            return
        }
        let record = loadRecord(command, media: media)
        guard let tracks = MediaQueueItem.activeTrackIDs(payload["activeTrackIds"], in: media) else {
            refuseLoad(command, reason: "INVALID_PARAMS", record: record, &outcome)
            return
        }
        let rate = payload["playbackRate"]?.doubleValue ?? 1
        guard MediaPlayer.playbackRates.contains(rate) else {
            refuseLoad(command, reason: "INVALID_PARAMS", record: record, &outcome)
            return
        }
        let startTime = command.startTime
        var extra: [String: JSONValue] = [:]
        if let customData = payload["customData"], !customData.isNull { extra["customData"] = customData }
        var item = MediaQueueItem(
            itemID: nextItemID, media: media, autoplay: payload["autoplay"]?.lenientBool ?? true,
            startTime: startTime ?? 0, activeTrackIDs: tracks, extra: extra
        )
        item.statesDuration = MediaQueueItem.statesDuration(payload["media"])
        nextItemID += 1
        startSession(
            command, items: [item], startIndex: 0, startTime: startTime, repeatMode: .off, rate: rate, record: record,
            into: &outcome)
    }

    /// What the state endpoint lists for a LOAD or QUEUE_LOAD of `media`.
    func loadRecord(_ command: MediaCommand, media: [String: JSONValue]) -> EmulatorLoadRecord {
        EmulatorLoadRecord(
            time: command.now, sender: command.sender, appID: running?.app.appID ?? "",
            requestType: command.type, contentID: media["contentId"]?.stringValue ?? "",
            contentType: media["contentType"]?.stringValue, credentials: command.payload["credentials"]?.stringValue,
            credentialsType: command.payload["credentialsType"]?.stringValue,
            customData: command.payload["customData"].flatMap { $0.isNull ? nil : $0 }, result: .invalidRequest
        )
    }

    mutating func refuseLoad(
        _ command: MediaCommand, reason: String, record: EmulatorLoadRecord?, _ outcome: inout DeviceOutcome
    ) {
        if let record { history.record(record) }
        outcome.note(.info, "\(command.type) refused: \(reason)")
        reply(Self.error("INVALID_REQUEST", requestID: command.requestID, reason: reason), to: command, &outcome)
    }

    /// Starts a new media session playing `items` from `startIndex`: the previous session ends
    /// (IDLE INTERRUPTED), then BUFFERING, then the reply and a broadcast, both with the media.
    /// Content the device cannot play ends in IDLE ERROR and LOAD_FAILED instead.
    mutating func startSession(
        _ command: MediaCommand, items: [MediaQueueItem], startIndex: Int, startTime: Double?, repeatMode: RepeatMode,
        rate: Double, record: EmulatorLoadRecord, into outcome: inout DeviceOutcome
    ) {
        var record = record
        let previous = player
        if let previous {
            cancelLoad(awaiting: previous.fetch, &outcome)
            broadcastStatus(previous.idleEntry(reason: "INTERRUPTED"), command.transportID, &outcome)
        }
        player = nil
        var session = MediaPlayer(
            mediaSessionID: nextMediaSessionID, items: items, startIndex: startIndex, now: command.now
        )
        nextMediaSessionID += 1
        session.repeatMode = repeatMode
        session.playbackRate = rate
        session.hasDisplay = settings.hasDisplay
        session.queueWindow = settings.queueWindow
        if let previous {
            session.volumeLevel = previous.volumeLevel
            session.muted = previous.muted
        }
        record.mediaSessionID = session.mediaSessionID
        player = session
        // LoadRequestData's `autoplay` covers a whole queue loaded by LOAD (or RESUME_SESSION);
        // QUEUE_LOAD's items say it each.
        let autoplay = command.type == "QUEUE_LOAD" ? nil : command.payload["autoplay"]?.lenientBool
        guard
            enterItem(
                at: startIndex, position: startTime, autoplay: autoplay, command.transportID, now: command.now,
                &outcome)
        else {
            record.result = .loadFailed
            history.record(record)
            reply(loadFailed(command.requestID, itemID: items[startIndex].itemID), to: command, &outcome)
            return
        }
        if player?.fetch != nil {  // answered once the media has been fetched
            player?.fetch?.load = (command, record)
            return
        }
        record.result = .loaded
        history.record(record)
        if let loaded = player {
            let what = "\(loaded.current.contentID) (\(loaded.duration) s, \(loaded.items.count) item(s))"
            outcome.note(
                .info, "media session \(loaded.mediaSessionID): \(command.type) \(what) → \(loaded.playerState)"
            )
        }
        replyAndBroadcastStatus(command, includeMedia: true, &outcome)
    }

    func loadFailed(_ requestID: JSONValue, itemID: Int, code: Int = mediaSourceNotSupported) -> JSONValue {
        [
            "type": "LOAD_FAILED", "requestId": requestID, "detailedErrorCode": .number(Double(code)),
            "itemId": .number(Double(itemID)),
        ]
    }

    func isUnplayable(_ item: MediaQueueItem) -> Bool {
        item.bareContentType.map(settings.unplayableContentTypes.contains) ?? false
    }

    // MARK: sending

    static func mediaStatus(_ entries: [JSONValue], requestID: JSONValue) -> JSONValue {
        ["type": "MEDIA_STATUS", "requestId": requestID, "status": .array(entries)]
    }

    func reply(_ payload: JSONValue, to command: MediaCommand, _ outcome: inout DeviceOutcome) {
        send(
            from: command.transportID, to: command.sender, on: command.connection, CastNamespace.media, payload,
            &outcome)
    }

    /// A MEDIA_STATUS with `entry` to `*` (requestId 0) on every connection to the app.
    func broadcastStatus(_ entry: JSONValue, _ transportID: String, _ outcome: inout DeviceOutcome) {
        broadcast(from: transportID, CastNamespace.media, Self.mediaStatus([entry], requestID: 0), &outcome)
    }

    func replyAndBroadcast(_ entry: JSONValue, _ command: MediaCommand, _ outcome: inout DeviceOutcome) {
        reply(Self.mediaStatus([entry], requestID: command.requestID), to: command, &outcome)
        broadcastStatus(entry, command.transportID, &outcome)
    }

    /// The current status to the requester and to everybody; `[]` to the requester when the
    /// session has ended.
    func replyAndBroadcastStatus(_ command: MediaCommand, includeMedia: Bool, _ outcome: inout DeviceOutcome) {
        guard let player else {
            reply(Self.mediaStatus([], requestID: command.requestID), to: command, &outcome)
            return
        }
        replyAndBroadcast(player.statusEntry(at: command.now, includeMedia: includeMedia), command, &outcome)
    }
}
