import CastProtocol

/// A LAUNCH the device accepted, with what the sender asked for: how a test sees which
/// language, app types and credentials reached the device.
public struct EmulatorLaunchRecord: Sendable, Hashable {
    /// When, on the emulator's clock.
    public var time: Duration
    public var sender: String
    public var appID: String
    public var language: String?
    /// `supportedAppTypes` as sent; nil when the sender sent none (WEB is assumed then).
    public var supportedAppTypes: [String]?
    /// `appParams.launchCheckerParams.credentialsData.credentials`.
    public var credentials: String?
    /// `appParams.launchCheckerParams.credentialsData.credentialsType`.
    public var credentialsType: String?

    var json: JSONValue {
        [
            "time": .number(MediaPlayer.rounded(time.seconds)),
            "sender": .string(sender),
            "appId": .string(appID),
            "language": language.map(JSONValue.string) ?? .null,
            "supportedAppTypes": supportedAppTypes.map { .array($0.map(JSONValue.string)) } ?? .null,
            "credentials": credentials.map(JSONValue.string) ?? .null,
            "credentialsType": credentialsType.map(JSONValue.string) ?? .null,
        ]
    }
}

/// A LOAD (or QUEUE_LOAD) that reached a media player, and how it ended.
public struct EmulatorLoadRecord: Sendable, Hashable {
    /// How the device answered the LOAD.
    public enum Result: String, Sendable, Hashable {
        /// Loaded: a MEDIA_STATUS answered it.
        case loaded = "LOADED"
        /// The content type is one the device cannot play: LOAD_FAILED.
        case loadFailed = "LOAD_FAILED"
        /// Refused: INVALID_REQUEST (unknown active tracks, a playback rate out of range, …).
        case invalidRequest = "INVALID_REQUEST"
    }

    public var time: Duration
    public var sender: String
    /// The app that got it.
    public var appID: String
    /// "LOAD" or "QUEUE_LOAD".
    public var requestType: String
    /// The content id of the (first) item to play.
    public var contentID: String
    public var contentType: String?
    /// `credentials` of the LOAD request.
    public var credentials: String?
    /// `credentialsType` of the LOAD request.
    public var credentialsType: String?
    /// `customData` of the request.
    public var customData: JSONValue?
    public var result: Result
    /// The media session it created (nil when refused).
    public var mediaSessionID: Int? = nil

    var json: JSONValue {
        [
            "time": .number(MediaPlayer.rounded(time.seconds)),
            "sender": .string(sender),
            "appId": .string(appID),
            "type": .string(requestType),
            "contentId": .string(contentID),
            "contentType": contentType.map(JSONValue.string) ?? .null,
            "credentials": credentials.map(JSONValue.string) ?? .null,
            "credentialsType": credentialsType.map(JSONValue.string) ?? .null,
            "customData": customData ?? .null,
            "result": .string(result.rawValue),
            "mediaSessionId": mediaSessionID.map { .number(Double($0)) } ?? .null,
        ]
    }
}

/// The last ``limit`` launches and loads, oldest first.
struct EmulatorHistory {
    static let limit = 100

    private(set) var launches: [EmulatorLaunchRecord] = []
    private(set) var loads: [EmulatorLoadRecord] = []

    mutating func record(_ launch: EmulatorLaunchRecord) {
        launches.append(launch)
        if launches.count > Self.limit { launches.removeFirst(launches.count - Self.limit) }
    }

    mutating func record(_ load: EmulatorLoadRecord) {
        loads.append(load)
        if loads.count > Self.limit { loads.removeFirst(loads.count - Self.limit) }
    }
}
