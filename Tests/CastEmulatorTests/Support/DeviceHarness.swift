import CastProtocol
import Testing

@testable import CastEmulator

/// An `EmulatedDevice` driven directly, without sockets: connection 1 has a sender (`sender-1`)
/// connected to receiver-0, and to the app once `launch` has run. Time is `now`, moved by hand.
///
/// A class, so that `#expect(harness.status() …)` can call it inside the macros.
final class DeviceHarness {
    /// One message the device sent.
    struct Sent {
        var connection: Int
        var message: CastMessage
        var payload: JSONValue

        var source: String { message.sourceID }
        var destination: String { message.destinationID }
        var namespace: String { message.namespace }
        var isBroadcast: Bool { destination == "*" }
        var type: String? { payload["type"]?.stringValue }
        var firstStatus: JSONValue? { payload.firstStatus }
    }

    static let sender = "sender-1"

    var device: EmulatedDevice
    var transportID = ""
    var now: Duration = .zero

    init(apps: [EmulatorApp] = EmulatorApp.builtIn, settings: EmulatedDevice.Settings = .init()) {
        device = EmulatedDevice(apps: apps, settings: settings)
        device.connectionOpened(1)
        _ = send(CastNamespace.connection, to: "receiver-0", ["type": "CONNECT"])
    }

    /// A device that has launched the Default Media Receiver, connected to it and loaded `media`.
    static func loaded(
        _ media: JSONValue, extra: [String: JSONValue] = [:], settings: EmulatedDevice.Settings = .init()
    ) throws -> DeviceHarness {
        let harness = DeviceHarness(settings: settings)
        try harness.launch()
        let sent = harness.load(media, extra: extra)
        _ = try #require(sent.reply(to: 800)?.firstStatus)
        return harness
    }

    /// Everything `outcome` delivered, parsed.
    static func parsed(_ outcome: DeviceOutcome) -> [Sent] {
        outcome.deliveries.map {
            Sent(
                connection: $0.connection, message: $0.message,
                payload: (try? JSONValue.parse($0.message.payloadUtf8)) ?? .null)
        }
    }

    func send(
        _ namespace: String, to destination: String, _ payload: JSONValue, from sender: String = sender,
        on connection: Int = 1
    ) -> [Sent] {
        send(.json(source: sender, destination: destination, namespace: namespace, payload: payload), on: connection)
    }

    func send(_ message: CastMessage, on connection: Int = 1) -> [Sent] {
        Self.parsed(device.receive(message, on: connection, now: now))
    }

    func receiver(_ payload: JSONValue) -> [Sent] {
        send(CastNamespace.receiver, to: "receiver-0", payload)
    }

    func media(_ payload: JSONValue) -> [Sent] {
        send(CastNamespace.media, to: transportID, payload)
    }

    /// A media command with `requestId` and the current `mediaSessionId`.
    func command(_ type: String, _ requestID: Int, _ extra: [String: JSONValue] = [:]) -> [Sent] {
        var payload = extra
        payload["type"] = .string(type)
        payload["requestId"] = .number(Double(requestID))
        if payload["mediaSessionId"] == nil, let session = device.player?.mediaSessionID {
            payload["mediaSessionId"] = .number(Double(session))
        }
        return media(.object(payload))
    }

    /// LAUNCH (requestId 900) and CONNECT to the app; returns the launch's messages.
    @discardableResult
    func launch(
        _ appID: String = CastAppID.defaultMediaReceiver, extra: [String: JSONValue] = [:]
    ) throws -> [Sent] {
        var payload = extra
        payload["type"] = "LAUNCH"
        payload["appId"] = .string(appID)
        payload["requestId"] = 900
        let sent = receiver(.object(payload))
        transportID = try #require(sent.reply(to: 900)?.firstApplication?["transportId"]?.stringValue)
        _ = send(CastNamespace.connection, to: transportID, ["type": "CONNECT"])
        return sent
    }

    /// LOAD (requestId 800).
    func load(_ media: JSONValue, extra: [String: JSONValue] = [:]) -> [Sent] {
        var payload = extra
        payload["type"] = "LOAD"
        payload["requestId"] = 800
        payload["media"] = media
        return self.media(.object(payload))
    }

    /// Moves time on by `duration` and lets the device catch up.
    func advance(by duration: Duration) -> [Sent] {
        now += duration
        return Self.parsed(device.advance(to: now))
    }

    /// GET_STATUS's entry (full status), or nil when nothing is loaded.
    func status() -> JSONValue? {
        media(["type": "GET_STATUS", "requestId": 799]).reply(to: 799)?.firstStatus
    }
}

extension [DeviceHarness.Sent] {
    /// The payload answering `requestID`, sent to the requester.
    func reply(to requestID: Int) -> JSONValue? {
        first { !$0.isBroadcast && $0.payload["requestId"]?.intValue == Int64(requestID) }?.payload
    }

    /// The MEDIA_STATUS entries broadcast (requestId 0), in order.
    var broadcastStatuses: [JSONValue] {
        filter { $0.isBroadcast && $0.type == "MEDIA_STATUS" }.compactMap(\.firstStatus)
    }
}

/// A media object with `fields` added to (or replacing those of) `base`.
func media(_ fields: [String: JSONValue], base: JSONValue = sampleMedia) -> JSONValue {
    var object = base.objectValue ?? [:]
    for (key, value) in fields { object[key] = value }
    return .object(object)
}

/// Media `id` of `duration` seconds, for queues.
func queueMedia(_ id: String, duration: Double = 100, contentType: String = "audio/mp3") -> JSONValue {
    [
        "contentId": .string("http://media.example.invalid/\(id)"), "contentType": .string(contentType),
        "streamType": "BUFFERED", "duration": .number(duration),
    ]
}
