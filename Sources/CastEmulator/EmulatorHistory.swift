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
        /// The content type is one the device cannot play, or its media could not be fetched
        /// (``EmulatorConfiguration/fetchMedia``): LOAD_FAILED.
        case loadFailed = "LOAD_FAILED"
        /// Refused: INVALID_REQUEST (unknown active tracks, a playback rate out of range, …).
        case invalidRequest = "INVALID_REQUEST"
        /// Another load, a STOP or a jump came while its media was being fetched: LOAD_CANCELLED.
        case loadCancelled = "LOAD_CANCELLED"
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

/// The last ``limit`` launches and loads, and the last ``fetchLimit`` media fetches, oldest first.
struct EmulatorHistory {
    static let limit = 100
    static let fetchLimit = 500

    private(set) var launches: [EmulatorLaunchRecord] = []
    private(set) var loads: [EmulatorLoadRecord] = []
    private(set) var fetches: [EmulatorFetchRecord] = []

    mutating func record(_ fetch: EmulatorFetchRecord) {
        fetches.append(fetch)
        if fetches.count > Self.fetchLimit { fetches.removeFirst(fetches.count - Self.fetchLimit) }
    }

    mutating func record(_ launch: EmulatorLaunchRecord) {
        launches.append(launch)
        if launches.count > Self.limit { launches.removeFirst(launches.count - Self.limit) }
    }

    mutating func record(_ load: EmulatorLoadRecord) {
        loads.append(load)
        if loads.count > Self.limit { loads.removeFirst(loads.count - Self.limit) }
    }
}

/// One HTTP request the device made for media (``EmulatorConfiguration/fetchMedia``), or a URL
/// it left alone: what `--log` writes as `{"time": …, "fetch": {…}}` and tests read in
/// ``EmulatorState/fetches``.
public struct EmulatorFetchRecord: Sendable, Hashable {
    /// Why the device fetched.
    public enum Purpose: String, Sendable, Hashable {
        /// The start of an item's content, as it became current (LOAD, QUEUE_LOAD, the next item).
        case load
        /// A text track of the item, whole (at most 1 MiB).
        case textTrack
        /// The content at the byte offset a SEEK maps to.
        case seek
        /// The content read onward while it plays.
        case read
    }

    /// When, on the emulator's clock (when the request ended).
    public var time: Duration
    public var url: String
    public var purpose: Purpose
    /// The media session whose item it was for.
    public var mediaSessionID: Int?
    /// The `Range` header sent (`bytes=0-65535`); nil for a whole text track.
    public var range: String?
    /// The HTTP status; nil when there was none (refused, timed out, not fetched).
    public var status: Int?
    /// Body bytes read.
    public var bytes: Int = 0
    /// The content's size, from Content-Range or Content-Length, when the server said.
    public var size: Int64?
    /// What went wrong (a refused connection, a timeout, an HTTP error status); nil when fine.
    public var error: String?
    /// Set: the URL was not fetched at all, for this reason (`https://`, a host name).
    public var notFetched: String?

    /// Whether the request got a 2xx answer.
    public var succeeded: Bool { error == nil && notFetched == nil && status.map { (200..<300).contains($0) } == true }

    var json: JSONValue {
        var fields: [String: JSONValue] = [
            "url": .string(url), "purpose": .string(purpose.rawValue),
            "mediaSessionId": mediaSessionID.map { .number(Double($0)) } ?? .null,
        ]
        if let notFetched {
            fields["notFetched"] = .string(notFetched)
            return .object(fields)
        }
        fields["range"] = range.map(JSONValue.string) ?? .null
        fields["status"] = status.map { .number(Double($0)) } ?? .null
        fields["bytes"] = .number(Double(bytes))
        fields["size"] = size.map { .number(Double($0)) } ?? .null
        if let error { fields["error"] = .string(error) }
        return .object(fields)
    }
}
