import CastTestSupport
import CastProtocol
import Testing

@testable import CastEmulator

/// The device as a pure state machine: messages in, messages out, time passed in. No sockets.
@Suite("EmulatedDevice state machine", .tags(.cpuBound))
struct EmulatedDeviceTests {
    private static let sender = "sender-1"

    private func message(_ namespace: String, to destination: String, _ payload: JSONValue) -> CastMessage {
        .json(source: Self.sender, destination: destination, namespace: namespace, payload: payload)
    }

    private func payloads(_ outcome: DeviceOutcome) -> [JSONValue] {
        outcome.deliveries.map { (try? JSONValue.parse($0.message.payloadUtf8)) ?? .null }
    }

    /// A device with one connection (1) whose sender is connected to receiver-0.
    private func connectedDevice() -> EmulatedDevice {
        var device = EmulatedDevice(apps: EmulatorApp.builtIn, defaultMediaDuration: 596.5)
        device.connectionOpened(1)
        _ = device.receive(message(CastNamespace.connection, to: "receiver-0", ["type": "CONNECT"]), on: 1, now: .zero)
        return device
    }

    @Test("Protocol versions: the highest known one offered, none when none is offered")
    func protocolVersions() {
        #expect(EmulatedDevice.negotiatedProtocolVersion(["type": "CONNECT"]) == nil)
        #expect(EmulatedDevice.negotiatedProtocolVersion(["protocolVersion": 1]) == 1)
        #expect(EmulatedDevice.negotiatedProtocolVersion(["protocolVersionList": [0, 2, 1]]) == 2)
        #expect(EmulatedDevice.negotiatedProtocolVersion(["protocolVersionList": [7]]) == nil)
    }

    @Test("CONNECT to an endpoint that does not exist is answered with CLOSE")
    func connectToUnknownEndpoint() {
        var device = connectedDevice()
        let outcome = device.receive(
            message(CastNamespace.connection, to: "web-99", ["type": "CONNECT"]), on: 1, now: .zero)
        #expect(outcome.deliveries.count == 1)
        #expect(outcome.deliveries.first?.message.sourceID == "web-99")
        #expect(payloads(outcome).first?["type"] == "CLOSE")
        #expect(device.connections[1]?.contains(.init(sender: Self.sender, endpoint: "web-99")) == false)
    }

    @Test("A string requestId is echoed as it came; a receiver request without one is ignored")
    func requestIDs() {
        var device = connectedDevice()
        let echoed = device.receive(
            message(CastNamespace.receiver, to: "receiver-0", ["type": "GET_STATUS", "requestId": "42"]), on: 1,
            now: .zero
        )
        #expect(payloads(echoed).first?["requestId"] == "42")
        let ignored = device.receive(
            message(CastNamespace.receiver, to: "receiver-0", ["type": "GET_STATUS"]), on: 1, now: .zero)
        #expect(ignored.deliveries.isEmpty)
    }

    @Test("Switching apps ends the media session and CLOSEs the old app's virtual connections")
    func switchingApps() throws {
        var device = connectedDevice()
        _ = device.receive(
            message(CastNamespace.receiver, to: "receiver-0", ["type": "LAUNCH", "appId": "CC1AD845", "requestId": 1]),
            on: 1, now: .zero)
        let transport = try #require(device.running?.transportID)
        _ = device.receive(message(CastNamespace.connection, to: transport, ["type": "CONNECT"]), on: 1, now: .zero)
        _ = device.receive(
            message(CastNamespace.media, to: transport, ["type": "LOAD", "requestId": 2, "media": ["contentId": "x"]]),
            on: 1, now: .zero)
        #expect(device.player != nil)
        #expect(device.nextDeadline == .seconds(596.5))

        let outcome = device.receive(
            message(CastNamespace.receiver, to: "receiver-0", ["type": "LAUNCH", "appId": "233637DE", "requestId": 3]),
            on: 1, now: .seconds(1))
        #expect(device.player == nil)
        #expect(device.nextDeadline == nil)
        #expect(outcome.playbackChanged)
        let close = try #require(outcome.deliveries.first)
        #expect(close.message.namespace == CastNamespace.connection)
        #expect(close.message.sourceID == transport)
        #expect(device.running?.app.appID == "233637DE")
        #expect(device.connections[1] == [.init(sender: Self.sender, endpoint: "receiver-0")])
    }

    @Test("advance(to:) finishes playing media at its end, not before, and not when paused")
    func advance() throws {
        var device = connectedDevice()
        _ = device.receive(
            message(CastNamespace.receiver, to: "receiver-0", ["type": "LAUNCH", "appId": "CC1AD845", "requestId": 1]),
            on: 1, now: .zero)
        let transport = try #require(device.running?.transportID)
        _ = device.receive(message(CastNamespace.connection, to: transport, ["type": "CONNECT"]), on: 1, now: .zero)
        _ = device.receive(
            message(
                CastNamespace.media, to: transport,
                ["type": "LOAD", "requestId": 2, "media": ["contentId": "x", "duration": 10], "currentTime": 4]),
            on: 1, now: .seconds(100)
        )
        #expect(device.nextDeadline == .seconds(106))
        #expect(device.advance(to: .seconds(105)).deliveries.isEmpty)

        _ = device.receive(
            message(CastNamespace.media, to: transport, ["type": "PAUSE", "requestId": 3]), on: 1, now: .seconds(105))
        #expect(device.nextDeadline == nil)
        #expect(device.advance(to: .seconds(200)).deliveries.isEmpty)
        #expect(device.player?.currentTime(at: .seconds(200)) == 9)

        _ = device.receive(
            message(CastNamespace.media, to: transport, ["type": "PLAY", "requestId": 4]), on: 1, now: .seconds(200))
        let finished = device.advance(to: .seconds(201))
        #expect(payloads(finished).first?.firstStatus?["idleReason"] == "FINISHED")
        #expect(finished.deliveries.first?.message.destinationID == "*")
        #expect(device.player == nil)
    }
}
