import CastClient
import CastDevices
import CastTestSupport
import CastdAPI
import Testing

/// GetDevice: castd resolves a selector for a client by the rules every request follows
/// (DeviceSelectorTests), so that no client needs rules of its own.
struct GetDeviceTests {
    @Test func aSelectorIsResolvedByCastdsRules() async throws {
        let twin = [try freePort(), try freePort()].map {
            StaticDevice(name: "Twin TV", endpoint: DeviceEndpoint(host: "127.0.0.1", port: $0))
        }
        let den = StaticDevice(name: "Den", endpoint: DeviceEndpoint(host: "127.0.0.1", port: try freePort()))
        try await withDaemon(devices: twin + [den]) { socket, store in
            try await CastdClient.withConnection(socketPath: socket) { client in
                let found = try await client.device("den")
                #expect(found.friendlyName == "Den" && found.port == UInt32(den.endpoint.port))
                let byAddress = try await client.device("127.0.0.1:\(twin[1].endpoint.port)")
                #expect(byAddress.friendlyName == "Twin TV")
                #expect(try await client.device(byAddress.id).id == byAddress.id)

                let shared = await #expect(throws: CastdError.self) { try await client.device("twin tv") }
                #expect(shared?.code == .failedPrecondition)
                #expect(
                    shared?.message.hasPrefix("2 devices are named 'twin tv'") == true, "\(String(describing: shared))")
                let none = await #expect(throws: CastdError.self) { try await client.device("attic") }
                #expect(none?.code == .notFound)
                let several = await #expect(throws: CastdError.self) { try await client.device() }
                #expect(several?.code == .failedPrecondition, "three devices and no session: which one?")
            }
            #expect(store.devices().count == 3)
        }
    }
}
