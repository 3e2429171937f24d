import CastProtocol

/// What a client asked a device for, so that a refusal can say what was refused and what to do.
enum DeviceAsk: Sendable {
    case media(MediaRequest)
    case launch(appID: String)
    case endSession(stopApp: Bool)
    case volume
    case message(namespace: String)
    case appAvailability

    /// "the load", "the launch of CC1AD845", "the skip of the ad".
    var phrase: String {
        switch self {
        case .media(let request):
            switch request {
            case .load: "the load"
            case .queueLoad: "the queue's load"
            case .getStatus: "the request for its media status"
            case .play: "the play"
            case .pause: "the pause"
            case .stop: "the stop"
            case .skipAd: "the skip of the ad"
            case .seek: "the seek"
            case .setPlaybackRate: "the playback rate"
            case .editTracks: "the change of tracks"
            case .setStreamVolume: "the stream's volume"
            case .queueInsert: "the addition to the queue"
            case .queueRemove: "the removal from the queue"
            case .queueReorder: "the reordering of the queue"
            case .queueUpdate(let update): update.moves ? "the jump in the queue" : "the change of the queue"
            case .queueGetItemIDs, .queueGetItems: "the request for the queue"
            }
        case .launch(let appID): appID.isEmpty ? "the launch" : "the launch of \(appID)"
        case .endSession(let stopApp): stopApp ? "the stop of the app" : "leaving the session"
        case .volume: "the volume change"
        case .message(let namespace): "the message on \(namespace)"
        case .appAvailability: "the question of which apps it can run"
        }
    }
}

/// The one place that words a device's refusal for people:
/// `Living Room TV refused the load: it cannot play this media's format (LOAD_FAILED,
/// MEDIA_SRC_NOT_SUPPORTED 104); check the URL and --content-type`.
enum DeviceRefusal {
    static func sentence(_ error: CastDeviceError, device: String, ask: DeviceAsk?) -> String {
        let what = ask?.phrase ?? "the request"
        let (meaning, remedy) = explanation(error, device: device, ask: ask)
        var codes = [error.type]
        if let reason = error.reason, !reason.isEmpty { codes.append(reason) }
        if let code = detailedCode(error) {
            codes.append(CastDetailedErrorCode.name(of: code).map { "\($0) \(code)" } ?? "detailed error \(code)")
        }
        var line = "\(device) refused \(what): \(meaning) (\(codes.joined(separator: ", ")))"
        if let remedy { line += "; \(remedy)" }
        return line
    }

    /// The detailed error code (LOAD_FAILED's `detailedErrorCode`), when the device gave one.
    static func detailedCode(_ error: CastDeviceError) -> Int? {
        guard let detail = error.detail, let code = Int(detail), (0...99_999).contains(code) else { return nil }
        return code
    }

    private static func explanation(_ error: CastDeviceError, device: String, ask: DeviceAsk?) -> (String, String?) {
        let status = "castc status --device \"\(device)\" shows what it is doing"
        switch error.type {
        case "LAUNCH_ERROR":
            switch error.reason {
            case "NOT_FOUND":
                if case .launch(let appID)? = ask, !appID.isEmpty {
                    return (
                        "it has no app \(appID)",
                        "castc apps --device \"\(device)\" \(appID) asks which apps it can run"
                    )
                }
                return ("it has no such app", nil)
            case "USER_NOT_ALLOWED": return ("the device does not let this user cast to it", nil)
            case "USER_NOTIFICATIONS_DISABLED":
                return ("the device's owner turned off the prompt that would allow it", nil)
            case "NOT_ALLOWED": return ("it does not allow that app now", nil)
            case "CANCELLED": return ("the launch was cancelled on the device", nil)
            case "TIMEOUT": return ("the app did not start in time", "try again")
            default: return ("it could not start the app", nil)
            }
        case "LOAD_FAILED":
            guard let code = detailedCode(error) else {
                return ("it could not load the media", "check that the device can fetch the URL and play its format")
            }
            let meaning = CastDetailedErrorCode.meaning(of: code)
            if code == 104 || code == 202 { return (meaning, "check the URL and --content-type") }
            if CastDetailedErrorCode.isNetwork(code) { return (meaning, "check that the device can reach the URL") }
            return (meaning, nil)
        case "LOAD_CANCELLED":
            return ("a newer load replaced it", nil)
        case "INVALID_PLAYER_STATE":
            return ("its player cannot do that in the state it is in", status)
        case "INVALID_MEDIA_SESSION_ID":
            return ("the media it was about has ended", status)
        case "INVALID_REQUEST":
            switch error.reason {
            case "INVALID_MEDIA_SESSION_ID": return ("the media it was about has ended", status)
            case "INVALID_COMMAND":
                if case .media(.skipAd)? = ask { return ("no ad it can skip plays", status) }
                return ("it does not take that request now", status)
            case "INVALID_PARAMS": return ("it found the request's fields not valid", nil)
            case "DUPLICATE_REQUEST_ID": return ("it had a request with the same id", "try again")
            case "SKIP_LIMIT_REACHED": return ("no more skips are allowed now", nil)
            case "NOT_SUPPORTED": return ("the app does not support that", nil)
            case "LANGUAGE_NOT_SUPPORTED": return ("the app does not have that language", nil)
            case "END_OF_QUEUE": return ("the queue has no item there", "castc queue lists it")
            case "APP_ERROR": return ("the app failed on it", nil)
            default: return ("it found the request not valid", nil)
            }
        default:
            return ("it answered with an error", nil)
        }
    }
}
