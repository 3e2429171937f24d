import CastEmulator
import CastProtocol
import CastTestSupport
import Testing

/// A device on a TV that reports its state over HDMI-CEC (`--tv`): `isStandBy` and
/// `isActiveInput` in every RECEIVER_STATUS, changed by `POST /emulator/tv`.
struct TVTests {
    func tvConfiguration() -> EmulatorConfiguration {
        var configuration = controlledConfiguration()
        configuration.tv = EmulatorTV()
        return configuration
    }

    @Test func aTVReportsItsStateAndEverySenderHearsItChange() async throws {
        try await withEmulator(tvConfiguration()) { _, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()
            try await sender.receiver(["type": "GET_STATUS", "requestId": 1])
            let status = try await sender.reply(to: 1)["status"]
            #expect(status?["isStandBy"] == false && status?["isActiveInput"] == true, "\(String(describing: status))")

            let answer = try await control("/emulator/tv", #"{"standBy": true}"#, port: httpPort)
            #expect(answer.status == 200)
            #expect(answer.json["standBy"] == true && answer.json["activeInput"] == true, "\(answer.json)")
            let (_, broadcast) = try await sender.next("the RECEIVER_STATUS telling of standby") { message, payload in
                message.namespace == CastNamespace.receiver && payload["type"] == "RECEIVER_STATUS"
                    && payload["requestId"] == 0
            }
            #expect(broadcast["status"]?["isStandBy"] == true && broadcast["status"]?["isActiveInput"] == true)
            let parsed = CastReceiverStatus(payload: broadcast)
            #expect(parsed.isStandBy == true && parsed.isActiveInput == true)

            let other = try await control("/emulator/tv", #"{"standBy": false, "activeInput": false}"#, port: httpPort)
            #expect(other.json["standBy"] == false && other.json["activeInput"] == false, "\(other.json)")
            let state = try await control("/emulator/state", method: "GET", port: httpPort).json
            #expect(state["tv"]?["standBy"] == false && state["tv"]?["activeInput"] == false, "\(state)")
        }
    }

    @Test func aTVRefusesWhatIsNotAStateAndADeviceWithoutATVSaysNothing() async throws {
        try await withEmulator(tvConfiguration()) { _, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            for (body, key) in [(#"{"standBy": "yes"}"#, "standBy"), (#"{"power": true}"#, "power")] {
                let bad = try await control("/emulator/tv", body, port: httpPort)
                #expect(bad.status == 400 && bad.json["key"] == .string(key), "\(body): \(bad.json)")
            }
            let empty = try await control("/emulator/tv", "{}", port: httpPort)
            #expect(empty.status == 400, "\(empty.json)")
        }
        try await withEmulator(controlledConfiguration()) { emulator, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            let refused = try await control("/emulator/tv", #"{"standBy": true}"#, port: httpPort)
            #expect(refused.status == 409, "\(refused.json)")
            #expect(throws: EmulatorError.self) { try emulator.changeTV(standBy: true) }
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()
            try await sender.receiver(["type": "GET_STATUS", "requestId": 1])
            let status = try await sender.reply(to: 1)["status"]
            #expect(status?["isStandBy"] == nil && status?["isActiveInput"] == nil, "most devices say nothing")
            #expect(try await control("/emulator/state", method: "GET", port: httpPort).json["tv"] == .null)
        }
    }
}
