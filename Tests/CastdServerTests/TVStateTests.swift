import CastClient
import CastDevices
import CastEmulator
import CastTestSupport
import CastdAPI
import Testing

/// A TV's own state (RECEIVER_STATUS `isStandBy`, `isActiveInput`, over HDMI-CEC): castd shows
/// what the device says, follows it as it changes, and says "unknown" for devices that say
/// nothing of a TV.
struct TVStateTests {
    @Test func aTVSaysWhetherItIsOnAndShowsThisInputAndCastdFollowsIt() async throws {
        var configuration = EmulatorConfiguration()
        configuration.tv = EmulatorTV(standBy: false, activeInput: true)
        try await withEmulator(configuration) { emulator, endpoints in
            let device = StaticDevice(name: "Den TV", endpoint: .init(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [device]) { socket, store in
                let recorder = EventRecorder(store)
                try await CastdClient.withConnection(socketPath: socket) { client in
                    _ = try await client.startSession(device: "Den TV")
                    let connected = try await client.device("Den TV")
                    #expect(connected.tvPower == .on && connected.tvInput == .this, "\(connected)")

                    // The TV's remote puts it in standby: every watcher hears it.
                    try emulator.changeTV(standBy: true, activeInput: false)
                    let (standby, _) = try await recorder.first("the TV in standby") { event -> CastdEvent? in
                        guard case .deviceUpdated(let device) = event.kind, device.tvPower == .standby else {
                            return nil
                        }
                        return event
                    }
                    #expect(standby.deviceUpdated.tvInput == .other && standby.deviceUpdated.friendlyName == "Den TV")
                    #expect(try await client.device("Den TV").tvPower == .standby)

                    // Back on, on another source: on, other input.
                    try emulator.changeTV(standBy: false)
                    try await recorder.first("the TV on again") { event -> Bool? in
                        guard event.sequence > standby.sequence, case .deviceUpdated(let device) = event.kind,
                            device.tvPower == .on
                        else { return nil }
                        return true
                    }
                    let again = try await client.device("Den TV")
                    #expect(again.tvPower == .on && again.tvInput == .other, "\(again)")
                }
            }
        }
    }

    @Test func aDeviceThatSaysNothingOfATVIsUnknownNotOff() async throws {
        try await withEmulator { _, endpoints in
            let device = StaticDevice(name: "Kitchen", endpoint: .init(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [device]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    _ = try await client.startSession(device: "Kitchen")
                    let connected = try await client.device("Kitchen")
                    #expect(connected.hasReceiver, "connected: castd has its RECEIVER_STATUS")
                    #expect(connected.tvPower == .unknown && connected.tvInput == .unknown, "\(connected)")
                }
            }
        }
    }
}
