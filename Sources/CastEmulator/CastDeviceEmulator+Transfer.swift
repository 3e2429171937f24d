import CastProtocol
import Foundation

/// A session the destination of a transfer now runs.
public struct EmulatorResumedSession: Sendable, Hashable {
    public var appID: String
    /// The destination's own session id and transport id (new ones, unless the app already ran
    /// there).
    public var sessionID: String
    public var transportID: String
    /// The destination's media session, nil when the transferred session had no media.
    public var mediaSessionID: Int?
    /// The player state and position right after the resume, nil without media.
    public var playerState: String?
    public var currentTime: Double?

    /// As `POST /emulator/resume-session` answers it.
    var json: JSONValue {
        [
            "appId": .string(appID), "sessionId": .string(sessionID), "transportId": .string(transportID),
            "mediaSessionId": mediaSessionID.map { .number(Double($0)) } ?? .null,
            "playerState": playerState.map(JSONValue.string) ?? .null,
            "currentTime": currentTime.map(JSONValue.number) ?? .null,
        ]
    }

    init(
        appID: String, sessionID: String, transportID: String, mediaSessionID: Int?, playerState: String?,
        currentTime: Double?
    ) {
        self.appID = appID
        self.sessionID = sessionID
        self.transportID = transportID
        self.mediaSessionID = mediaSessionID
        self.playerState = playerState
        self.currentTime = currentTime
    }

    init?(json: JSONValue) {
        guard let appID = json["appId"]?.stringValue, let sessionID = json["sessionId"]?.stringValue,
            let transportID = json["transportId"]?.stringValue
        else { return nil }
        self.init(
            appID: appID, sessionID: sessionID, transportID: transportID,
            mediaSessionID: json["mediaSessionId"]?.intValue.map(Int.init),
            playerState: json["playerState"]?.stringValue,
            currentTime: json["currentTime"]?.doubleValue
        )
    }
}

/// What a transfer did: the session that ended on the source and the one the destination runs.
public struct EmulatorSessionTransfer: Sendable, Hashable {
    public var appID: String
    /// The source's session, which has ended.
    public var sourceSessionID: String
    /// The source's media session that ended, nil when there was none.
    public var sourceMediaSessionID: Int?
    public var destination: EmulatorResumedSession

    var json: JSONValue {
        [
            "appId": .string(appID),
            "from": [
                "sessionId": .string(sourceSessionID),
                "mediaSessionId": sourceMediaSessionID.map { .number(Double($0)) } ?? .null,
            ],
            "to": destination.json,
        ]
    }
}

/// Stream transfer between emulated devices, as a voice command or the Google Home app moves a
/// session from one device to another, built on the Web Receiver framework's (CAF) public
/// messages (see `EmulatedDevice+SessionTransfer.swift`): the source stores its session
/// (`STORE_SESSION` → `SESSION_STATE` {`sessionState`}), the destination launches the same app
/// and resumes it (`RESUME_SESSION` {`sessionState`}), then the source stops its app.
///
/// What the source's senders see: MEDIA_STATUS IDLE (idleReason CANCELLED, as if stopped: no
/// public idle reason says "transferred"), CLOSE from the app's transport id, RECEIVER_STATUS
/// with the idle screen instead of the app; its TXT record goes back to idle (`st=0`). What the
/// destination's senders see: RECEIVER_STATUS with the app (a new session id and transport id);
/// senders that connect to it find the media at the source's position, PLAYING if it played,
/// PAUSED if it was paused, with the same content, tracks, rate and queue; its TXT record shows
/// the app (`st=1`, `rs`).
extension CastDeviceEmulator {
    /// Moves the running app's session to `destination` (another emulator in this process).
    /// Throws `invalidState` when only the idle screen runs here, `invalidArgument` when the
    /// destination cannot resume it (it lacks the app; nothing changes on either side then).
    @discardableResult
    public func transferSession(to destination: CastDeviceEmulator) async throws -> EmulatorSessionTransfer {
        let stored = try storeForTransfer()
        let resumed = try destination.resumeSession(appID: stored.appID, sessionState: stored.sessionState)
        return finishTransfer(stored, to: resumed, destinationName: destination.configuration.name)
    }

    /// Moves the running app's session to the emulator whose control interface is at `url`
    /// (`http://HOST:PORT`, its `--http-port`): POSTs the session to its
    /// `/emulator/resume-session`, and ends the session here once it answered. Throws
    /// `transferFailed` when the destination cannot be reached or refuses (the session stays
    /// here then).
    @discardableResult
    public func transferSession(toControlURL url: URL) async throws -> EmulatorSessionTransfer {
        let stored = try storeForTransfer()
        let answer = try await EmulatorHTTPClient.post(
            ["appId": .string(stored.appID), "sessionState": stored.sessionState],
            to: Self.controlPrefix + "/resume-session", at: url
        )
        guard answer.status == .ok, let resumed = EmulatorResumedSession(json: answer.json) else {
            let why = answer.json["error"]?.stringValue ?? answer.json.jsonString
            throw EmulatorError(.transferFailed, "\(url) did not resume the session: \(answer.status.code) \(why)")
        }
        return finishTransfer(stored, to: resumed, destinationName: url.absoluteString)
    }

    /// The destination's side of a transfer: runs `appID` (launching it if another app runs;
    /// the app's senders are told CLOSE, everybody a RECEIVER_STATUS) and resumes
    /// `sessionState` (CAF's SessionState, as `STORE_SESSION` answers it) in it, as
    /// `RESUME_SESSION` does. Throws `invalidArgument`, with nothing changed, when the device
    /// has no such app or the state's `loadRequestData` does not load.
    @discardableResult
    public func resumeSession(appID: String, sessionState: JSONValue) throws -> EmulatorResumedSession {
        do {
            return try resumeTransferredSession(appID: appID, sessionState: sessionState)
        } catch {
            throw EmulatorError(.invalidArgument, "cannot resume the session: \(error)")
        }
    }

    func resumeTransferredSession(
        appID: String, sessionState: JSONValue
    ) throws(EmulatedDevice.ResumeRefusal) -> EmulatorResumedSession {
        let now = clock.now()
        var refusal: EmulatedDevice.ResumeRefusal?
        let outcome = transition { device in
            do throws(EmulatedDevice.ResumeRefusal) {
                return try device.resumeTransferredSession(appID: appID, sessionState: sessionState, now: now)
            } catch {
                refusal = error
                return DeviceOutcome()
            }
        }
        if let refusal {
            logger.info("refused a transferred session: \(refusal)")
            throw refusal
        }
        report(outcome, logger: logger)
        return core.withLock { core in
            let running = core.device.running
            let player = core.device.player
            return EmulatorResumedSession(
                appID: running?.app.appID ?? appID, sessionID: running?.sessionID ?? "",
                transportID: running?.transportID ?? "", mediaSessionID: player?.mediaSessionID,
                playerState: player?.playerState,
                currentTime: player.map { MediaPlayer.rounded($0.currentTime(at: now)) }
            )
        }
    }

    /// The source's session as it stands now, for a transfer.
    struct StoredSession {
        var appID: String
        var sessionID: String
        var mediaSessionID: Int?
        var sessionState: JSONValue
    }

    private func storeForTransfer() throws -> StoredSession {
        let now = clock.now()
        return try core.withLock { core in
            guard let running = core.device.running, !running.app.isIdleScreen else {
                throw EmulatorError(.invalidState, "nothing to transfer: no app runs but the idle screen")
            }
            return StoredSession(
                appID: running.app.appID, sessionID: running.sessionID,
                mediaSessionID: core.device.player?.mediaSessionID,
                sessionState: core.device.sessionState(at: now)
            )
        }
    }

    /// Ends the source's session, unless a sender replaced it meanwhile.
    private func finishTransfer(
        _ stored: StoredSession, to resumed: EmulatorResumedSession, destinationName: String
    ) -> EmulatorSessionTransfer {
        let now = clock.now()
        let outcome = transition { device in
            guard device.running?.sessionID == stored.sessionID else { return DeviceOutcome() }
            return device.endTransferredSession(now: now)
        }
        report(outcome, logger: logger)
        logger.info("session \(stored.sessionID) (\(stored.appID)) transferred to \(destinationName)")
        return EmulatorSessionTransfer(
            appID: stored.appID, sourceSessionID: stored.sessionID, sourceMediaSessionID: stored.mediaSessionID,
            destination: resumed
        )
    }
}
