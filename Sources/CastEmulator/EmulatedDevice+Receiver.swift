import CastProtocol

/// The platform receiver (`receiver-0`, `urn:x-cast:com.google.cast.receiver`).
extension EmulatedDevice {
    /// Volume steps are reported as a float32, like real devices do (0.05000000074505806).
    static let stepInterval = Double(Float(0.05))

    /// The device's own volume buttons: the volume changes, every sender hears of it.
    mutating func changeVolumeOnDevice(_ change: VolumeChange) -> DeviceOutcome {
        var outcome = DeviceOutcome()
        change.apply(level: &volumeLevel, muted: &muted)
        outcome.note(.info, "device volume \(volumeLevel)\(muted ? " (muted)" : "") (the device's own buttons)")
        broadcast(from: Self.receiverID, CastNamespace.receiver, receiverStatusPayload(requestID: 0), &outcome)
        return outcome
    }

    /// The TV changed (its remote, another HDMI source): every sender hears of it. Nil leaves
    /// that part as it is.
    mutating func changeTV(standBy: Bool?, activeInput: Bool?) -> DeviceOutcome {
        var outcome = DeviceOutcome()
        guard var next = tv else { return outcome }
        if let standBy { next.standBy = standBy }
        if let activeInput { next.activeInput = activeInput }
        tv = next
        outcome.note(.info, "TV \(next.standBy ? "in standby" : "on"), \(next.activeInput ? "this" : "another") input")
        broadcast(from: Self.receiverID, CastNamespace.receiver, receiverStatusPayload(requestID: 0), &outcome)
        return outcome
    }

    mutating func handleReceiverRequest(
        _ request: JSONValue, from sender: String, on connection: Int, now: Duration, into outcome: inout DeviceOutcome
    ) {
        let type = CastEnvelope(request).type
        // Like the reference receiver: a platform request without requestId gets no answer.
        guard let requestID = request["requestId"], !requestID.isNull else {
            outcome.note(.info, "ignored receiver \(type) without requestId")
            return
        }
        func reply(_ payload: JSONValue, _ outcome: inout DeviceOutcome) {
            send(from: Self.receiverID, to: sender, on: connection, CastNamespace.receiver, payload, &outcome)
        }
        func replyAndBroadcastStatus(_ outcome: inout DeviceOutcome) {
            reply(receiverStatusPayload(requestID: requestID), &outcome)
            broadcast(from: Self.receiverID, CastNamespace.receiver, receiverStatusPayload(requestID: 0), &outcome)
        }

        switch type {
        case "GET_STATUS":
            reply(receiverStatusPayload(requestID: requestID), &outcome)

        case "LAUNCH":
            guard let appID = request["appId"]?.stringValue, !appID.isEmpty else {
                reply(Self.error("LAUNCH_ERROR", requestID: requestID, reason: "BAD_PARAMETER"), &outcome)
                return
            }
            guard let app = apps[appID] else {
                outcome.note(.info, "LAUNCH \(appID): no such app")
                reply(Self.error("LAUNCH_ERROR", requestID: requestID, reason: "NOT_FOUND"), &outcome)
                return
            }
            let launch = Self.launchRecord(request, appID: appID, sender: sender, now: now)
            // A sender that does not list the app's type cannot use it: an Android TV app needs
            // ANDROID_TV (Cast Connect); senders that list nothing are Web-only.
            let supported = launch.supportedAppTypes.flatMap { $0.isEmpty ? nil : $0 } ?? ["WEB"]
            guard supported.contains(app.appType.rawValue) else {
                outcome.note(.info, "LAUNCH \(appID): an \(app.appType) app, but the sender supports \(supported)")
                reply(Self.error("LAUNCH_ERROR", requestID: requestID, reason: "NOT_FOUND"), &outcome)
                return
            }
            history.record(launch)
            if running?.app.appID == appID {
                // Already running: the session stays, nothing changes.
                reply(receiverStatusPayload(requestID: requestID), &outcome)
                return
            }
            switchTo(app, &outcome)
            replyAndBroadcastStatus(&outcome)

        case "STOP":
            if let sessionID = request["sessionId"], !sessionID.isNull,
                sessionID.stringValue != running?.sessionID
            {
                reply(Self.error("INVALID_REQUEST", requestID: requestID, reason: "INVALID_SESSION_ID"), &outcome)
                return
            }
            guard let running, !running.app.isIdleScreen else {
                reply(receiverStatusPayload(requestID: requestID), &outcome)  // already idle
                return
            }
            if let idleApp {
                switchTo(idleApp, &outcome)
            } else {
                stopRunningApp(&outcome)
            }
            replyAndBroadcastStatus(&outcome)

        case "SET_VOLUME":
            guard let change = VolumeChange(request["volume"]) else {
                reply(Self.error("INVALID_REQUEST", requestID: requestID, reason: "BAD_PARAMETER"), &outcome)
                return
            }
            if change.level != nil, settings.fixedVolume {
                outcome.note(.info, "SET_VOLUME refused: the volume is fixed")
                reply(Self.error("INVALID_REQUEST", requestID: requestID, reason: "BAD_PARAMETER"), &outcome)
                return
            }
            change.apply(level: &volumeLevel, muted: &muted)
            outcome.note(.info, "device volume \(volumeLevel)\(self.muted ? " (muted)" : "")")
            replyAndBroadcastStatus(&outcome)

        case "GET_APP_AVAILABILITY":
            let ids: [String]
            switch request["appId"] {
            case .array(let items)?: ids = items.compactMap(\.stringValue)
            case .string(let id)?: ids = [id]
            default: ids = []
            }
            guard !ids.isEmpty else {
                reply(Self.error("INVALID_REQUEST", requestID: requestID, reason: "BAD_PARAMETER"), &outcome)
                return
            }
            var availability: [String: JSONValue] = [:]
            for id in ids { availability[id] = apps[id] == nil ? "APP_UNAVAILABLE" : "APP_AVAILABLE" }
            reply(
                [
                    "responseType": "GET_APP_AVAILABILITY", "requestId": requestID,
                    "availability": .object(availability),
                ],
                &outcome
            )

        default:
            reply(Self.error("INVALID_REQUEST", requestID: requestID, reason: "INVALID_COMMAND"), &outcome)
        }
    }

    /// What a LAUNCH asked for: language, app types and the credentials of
    /// `appParams.launchCheckerParams.credentialsData`.
    static func launchRecord(_ request: JSONValue, appID: String, sender: String, now: Duration) -> EmulatorLaunchRecord
    {
        let credentialsData = request["appParams"]?["launchCheckerParams"]?["credentialsData"]
        let appTypes: [String]? =
            switch request["supportedAppTypes"] {
            case .array(let items)?: items.compactMap(\.stringValue)
            case .string(let single)?: [single]
            default: nil
            }
        return EmulatorLaunchRecord(
            time: now, sender: sender, appID: appID, language: request["language"]?.stringValue,
            supportedAppTypes: appTypes, credentials: credentialsData?["credentials"]?.stringValue,
            credentialsType: credentialsData?["credentialsType"]?.stringValue
        )
    }

    /// Replaces the running app: its senders are told CLOSE and its media session ends.
    mutating func switchTo(_ app: EmulatorApp, _ outcome: inout DeviceOutcome) {
        stopRunningApp(&outcome)
        let started = Self.start(app)
        running = started
        outcome.note(.info, "app \(app.displayName) (\(app.appID)) running, session \(started.sessionID)")
    }

    mutating func stopRunningApp(_ outcome: inout DeviceOutcome) {
        guard let previous = running else { return }
        closeVirtualConnections(to: previous.transportID, &outcome)
        running = nil
        player = nil
        outcome.note(.info, "app \(previous.app.displayName) stopped")
    }

    // MARK: status

    var volumeJSON: JSONValue {
        [
            "controlType": .string((settings.fixedVolume ? CastVolumeControlType.fixed : .attenuation).rawValue),
            "level": .number(volumeLevel),
            "muted": .bool(muted),
            "stepInterval": .number(Self.stepInterval),
        ]
    }

    /// RECEIVER_STATUS's `status`, with the fields real devices send.
    var receiverStatusObject: JSONValue {
        var status: [String: JSONValue] = ["userEq": [:], "volume": volumeJSON]
        if let tv {
            status["isStandBy"] = .bool(tv.standBy)
            status["isActiveInput"] = .bool(tv.activeInput)
        }
        if let running {
            let app = running.app
            status["applications"] = [
                [
                    "appId": .string(app.appID),
                    "appType": .string(app.appType.rawValue),
                    "displayName": .string(app.displayName),
                    "iconUrl": .string(app.iconURL),
                    "isIdleScreen": .bool(app.isIdleScreen),
                    "launchedFromCloud": false,
                    "namespaces": .array(app.namespaces.map { ["name": .string($0)] }),
                    "sessionId": .string(running.sessionID),
                    "statusText": .string(app.statusText),
                    "transportId": .string(running.transportID),
                    "universalAppId": .string(app.appID),
                ]
            ]
        }
        return .object(status)
    }

    func receiverStatusPayload(requestID: JSONValue) -> JSONValue {
        ["type": "RECEIVER_STATUS", "requestId": requestID, "status": receiverStatusObject]
    }
}
