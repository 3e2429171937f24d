import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import Testing

extension JSONValue {
    /// The first entry of a MEDIA_STATUS `status` array.
    var firstStatus: JSONValue? { self["status"]?.arrayValue?.first }
    var firstApplication: JSONValue? { self["status"]?["applications"]?.arrayValue?.first }
}

/// A configuration with a manual clock, so media time only moves when the test says so.
func manualClockConfiguration() -> (EmulatorConfiguration, ManualEmulatorClock) {
    let clock = ManualEmulatorClock()
    var configuration = EmulatorConfiguration()
    configuration.clock = clock
    return (configuration, clock)
}

extension RawCastSender {
    /// A GET_STATUS round trip on this connection (which must be CONNECTed to receiver-0).
    /// Messages on one connection are handled in order, so once it is answered, everything sent
    /// before it has been handled too: use it before relying on another connection's broadcast.
    func roundTrip() async throws {
        let requestID = Int.random(in: 1_000_000...9_999_999)
        try await receiver(["type": "GET_STATUS", "requestId": .number(Double(requestID))])
        _ = try await reply(to: requestID)
    }

    /// CONNECT to receiver-0, LAUNCH `appID`, wait for the reply; returns the app's transport id.
    /// Skips the broadcast that follows the reply.
    func launch(_ appID: String = CastAppID.defaultMediaReceiver, requestID: Int = 900) async throws -> String {
        try await connect()
        try await receiver(["type": "LAUNCH", "appId": .string(appID), "requestId": .number(Double(requestID))])
        let reply = try await self.reply(to: requestID)
        let transportID = try #require(reply.firstApplication?["transportId"]?.stringValue)
        _ = try await next(timeout: .seconds(5), "the LAUNCH broadcast") { _, payload in
            payload["requestId"]?.intValue == 0 && payload["type"]?.stringValue == "RECEIVER_STATUS"
        }
        return transportID
    }

    /// Launches the Default Media Receiver and connects to it; returns its transport id.
    func launchMediaReceiver() async throws -> String {
        let transportID = try await launch()
        try await connect(to: transportID)
        return transportID
    }

    /// LOAD and wait for the reply (the BUFFERING broadcast before it and the PLAYING broadcast
    /// after it are consumed). Returns the reply's status entry.
    @discardableResult
    func load(
        _ transportID: String, media: JSONValue, autoplay: Bool? = nil, currentTime: Double? = nil,
        requestID: Int = 800
    ) async throws -> JSONValue {
        var request: [String: JSONValue] = ["type": "LOAD", "requestId": .number(Double(requestID)), "media": media]
        if let autoplay { request["autoplay"] = .bool(autoplay) }
        if let currentTime { request["currentTime"] = .number(currentTime) }
        try await self.media(transportID, .object(request))
        let reply = try await self.reply(to: requestID)
        _ = try await next(timeout: .seconds(5), "the LOAD broadcast") { _, payload in
            payload["requestId"]?.intValue == 0 && payload["type"]?.stringValue == "MEDIA_STATUS"
        }
        return try #require(reply.firstStatus)
    }

    /// A media command with the current mediaSessionId; returns the reply (skips the broadcast
    /// when `expectBroadcast`).
    func mediaCommand(
        _ transportID: String, _ type: String, mediaSessionID: Int64, requestID: Int,
        extra: [String: JSONValue] = [:], expectBroadcast: Bool = true
    ) async throws -> JSONValue {
        var request = extra
        request["type"] = .string(type)
        request["requestId"] = .number(Double(requestID))
        request["mediaSessionId"] = .number(Double(mediaSessionID))
        try await media(transportID, .object(request))
        let reply = try await self.reply(to: requestID)
        if expectBroadcast {
            _ = try await next(timeout: .seconds(5), "the \(type) broadcast") { _, payload in
                payload["requestId"]?.intValue == 0 && payload["type"]?.stringValue == "MEDIA_STATUS"
            }
        }
        return reply
    }

    func mediaStatus(_ transportID: String, requestID: Int) async throws -> JSONValue {
        try await media(transportID, ["type": "GET_STATUS", "requestId": .number(Double(requestID))])
        return try await reply(to: requestID)
    }
}

let sampleMedia: JSONValue = [
    "contentId": "http://media.example.invalid/big-buck-bunny.mp4",
    "contentType": "video/mp4",
    "streamType": "BUFFERED",
    "duration": 120,
    "metadata": ["metadataType": 0, "title": "Big Buck Bunny"],
]

/// Polls `condition` until it holds or the deadline passes.
func eventually(
    timeout: Duration = .seconds(5), _ what: String, _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw TestTimeout(what: what) }
        try await Task.sleep(for: .milliseconds(10))
    }
}
