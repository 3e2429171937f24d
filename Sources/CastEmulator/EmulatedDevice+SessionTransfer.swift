import CastProtocol

/// Stream transfer, as the Cast Web Receiver framework (CAF) does it on the media namespace:
///
/// - `STORE_SESSION` (`cast.framework.messages.StoreSessionRequestData`, nothing but the
///   request id) is answered, to the requester only, with `SESSION_STATE` carrying
///   `sessionState` (`cast.framework.messages.SessionState`, the `StoreSessionResponseData`):
///   `loadRequestData` (a `LoadRequestData`: `media`, `currentTime`, `autoplay`,
///   `activeTrackIds`, `playbackRate`, `customData`, and `queueData` {`items`, `startIndex`,
///   `repeatMode`} for a queue) as a LOAD would bring the session back where it stands now.
///   Storing changes nothing on the device. Without a media session, `sessionState` is `{}`.
/// - `RESUME_SESSION` {`sessionState`} (`ResumeSessionRequestData`) to an app's media player
///   loads `sessionState.loadRequestData` like a LOAD: the previous media session, if any,
///   ends (IDLE INTERRUPTED), the new one starts at `currentTime`, PLAYING if `autoplay`, else
///   PAUSED; the requester gets the MEDIA_STATUS, everybody a broadcast. Without
///   `loadRequestData` it is INVALID_REQUEST INVALID_PARAMS.
///
/// The emulator's own orchestration (``CastDeviceEmulator/transferSession(to:)``) stores on the
/// source, resumes on the destination (launching the app there first), then ends the source's
/// session with ``endTransferredSession(now:)``.
extension EmulatedDevice {
    /// Replies to this "connection" go nowhere: the emulator itself asked (connections are
    /// numbered from 1).
    static let platformConnection = 0

    /// The idle reason of the last MEDIA_STATUS a source device sends for a session transferred
    /// away. Neither CAF nor the sender SDKs have one for a transfer (IdleReason is CANCELLED,
    /// INTERRUPTED, FINISHED or ERROR; the sender SDKs tell a transfer through their session
    /// transfer callbacks, not the media status). The source's app is stopped, so its media
    /// ends as if stopped: CANCELLED. INTERRUPTED would promise a new media session on this
    /// device, for which its senders would wait in vain.
    static let transferredIdleReason = "CANCELLED"

    /// CAF's SessionState for the running app's media session as it stands at `now`.
    func sessionState(at now: Duration) -> JSONValue {
        guard let player else { return [:] }
        var load: [String: JSONValue] = [
            "media": .object(player.current.media),
            "currentTime": .number(MediaPlayer.rounded(player.currentTime(at: now))),
            "autoplay": .bool(player.playerState != MediaPlayer.paused),
            "activeTrackIds": .array(player.current.activeTrackIDs.map { .number(Double($0)) }),
            "playbackRate": .number(player.playbackRate),
        ]
        if let customData = player.current.extra["customData"], !customData.isNull {
            load["customData"] = customData
        }
        if player.items.count > 1 {
            load["queueData"] = [
                "items": .array(player.items.enumerated().map { $1.json(orderID: $0, includeMedia: true) }),
                "startIndex": .number(Double(player.currentIndex)),
                "repeatMode": .string(player.repeatMode.rawValue),
            ]
        }
        return ["loadRequestData": .object(load)]
    }

    /// STORE_SESSION: SESSION_STATE to the requester.
    func storeSession(_ command: MediaCommand, into outcome: inout DeviceOutcome) {
        let state = sessionState(at: command.now)
        outcome.note(
            .info,
            state["loadRequestData"] == nil
                ? "STORE_SESSION: no media session, an empty session state"
                : "STORE_SESSION: media session \(player?.mediaSessionID ?? 0) stored")
        reply(
            ["type": "SESSION_STATE", "requestId": command.requestID, "sessionState": state], to: command, &outcome)
    }

    /// RESUME_SESSION {sessionState}: its `loadRequestData` is loaded like a LOAD.
    mutating func resumeSession(_ command: MediaCommand, into outcome: inout DeviceOutcome) {
        guard var load = command.payload["sessionState"]?["loadRequestData"]?.objectValue else {
            refuseLoad(command, reason: "INVALID_PARAMS", record: nil, &outcome)
            return
        }
        load["requestId"] = command.requestID
        var resume = command
        resume.payload = .object(load)
        self.load(resume, into: &outcome)
    }

    /// Why the emulator cannot resume a session handed to it.
    enum ResumeRefusal: Error, CustomStringConvertible {
        case unknownApp(String)
        case noMediaPlayer(String)
        case loadRefused(String)

        var description: String {
            switch self {
            case .unknownApp(let id): "this device has no app \(id)"
            case .noMediaPlayer(let id): "the app \(id) has no media player to resume media in"
            case .loadRefused(let why): "the session state's loadRequestData does not load: \(why)"
            }
        }
    }

    /// The destination's side of a transfer, asked by the emulator: `appID` runs (launched if
    /// another app runs: its senders are told CLOSE, everybody a RECEIVER_STATUS, as after a
    /// LAUNCH), then `sessionState` is resumed in it as RESUME_SESSION does. All or nothing:
    /// when the media cannot be loaded, nothing changes.
    mutating func resumeTransferredSession(
        appID: String, sessionState: JSONValue, now: Duration
    ) throws(ResumeRefusal) -> DeviceOutcome {
        guard let app = apps[appID] else { throw .unknownApp(appID) }
        let load = sessionState["loadRequestData"]
        guard load == nil || app.hasMediaPlayer else { throw .noMediaPlayer(appID) }
        var device = self
        var outcome = DeviceOutcome()
        let deadlineBefore = nextDeadline
        if device.running?.app.appID != appID {
            device.switchTo(app, &outcome)
            device.broadcast(
                from: Self.receiverID, CastNamespace.receiver, device.receiverStatusPayload(requestID: 0), &outcome)
        }
        if load != nil, let transportID = device.running?.transportID {
            let newSession = device.nextMediaSessionID
            let command = MediaCommand(
                payload: ["type": "RESUME_SESSION", "requestId": 0, "sessionState": sessionState],
                type: "RESUME_SESSION", requestID: 0, sender: CastWire.platformReceiverID,
                connection: Self.platformConnection, transportID: transportID, now: now
            )
            device.resumeSession(command, into: &outcome)
            guard device.player?.mediaSessionID == newSession else {
                throw .loadRefused(outcome.notes.last?.message ?? "refused")
            }
        }
        self = device
        if nextDeadline != deadlineBefore { outcome.playbackChanged = true }
        outcome.note(.info, "session transferred here: \(app.displayName), session \(running?.sessionID ?? "")")
        return outcome
    }

    /// The source's side of a transfer, once the destination has resumed the session: the
    /// media session ends (a last MEDIA_STATUS, IDLE ``transferredIdleReason``, to the app's
    /// senders), the app stops (its senders are told CLOSE; the idle screen comes back) and
    /// everybody gets a RECEIVER_STATUS without it.
    mutating func endTransferredSession(now: Duration) -> DeviceOutcome {
        var outcome = DeviceOutcome()
        guard let running, !running.app.isIdleScreen else { return outcome }
        if let player {
            broadcastStatus(player.idleEntry(reason: Self.transferredIdleReason), running.transportID, &outcome)
            outcome.note(
                .info,
                "media session \(player.mediaSessionID): transferred to another device → IDLE (\(Self.transferredIdleReason))"
            )
            outcome.playbackChanged = true
        }
        if let idleApp {
            switchTo(idleApp, &outcome)
        } else {
            stopRunningApp(&outcome)
        }
        broadcast(from: Self.receiverID, CastNamespace.receiver, receiverStatusPayload(requestID: 0), &outcome)
        return outcome
    }
}
