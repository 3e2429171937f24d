import CastClient
import CastDevices
import CastEmulator
import CastTestSupport
import CastdAPI
import Testing

/// The Cast SDK's cast state, over castd.v1: in GetStatus, in Watch's snapshot and as events,
/// following a session that starts, loses its device, and ends when the device comes back
/// without the app.
struct CastStateTests {
    @Test func theCastStateFollowsASessionThroughADropAndItsEnd() async throws {
        var first = EmulatorConfiguration()
        first.port = try freePort()
        try await withEmulator(first) { emulator, endpoints in
            let device = StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [device]) { socket, store in
                let recorder = EventRecorder(store)
                try await CastdClient.withConnection(socketPath: socket) { client in
                    #expect(try await client.status().castState == .notConnected, "a device, no session")
                    for try await event in client.watch() {
                        #expect(event.snapshot.castState == .notConnected, "Watch's snapshot says it too")
                        break
                    }

                    _ = try await client.startSession(device: "TV")
                    let started = try await client.status()
                    #expect(started.castState == .connected)
                    #expect(started.devices.map(\.castState) == [.connected])

                    await emulator.shutdown()
                    try await recorder.session(.suspended)
                    #expect(try await client.status().castState == .connecting, "suspended, to be resumed")

                    // Back, freshly booted without the app: the session ends.
                    var rebooted = EmulatorConfiguration()
                    rebooted.deviceID = first.deviceID
                    rebooted.port = endpoints.port
                    try await withEmulator(rebooted) { _, _ in
                        try await recorder.session(.resumeFailed)
                        let ended = try await client.status()
                        #expect(ended.castState == .notConnected)
                        #expect(ended.devices.map(\.castState) == [.notConnected])
                    }
                }
                let changes = recorder.all.compactMap { event -> String? in
                    guard case .castState(let change) = event.kind else { return nil }
                    return "\(change.previous)→\(change.state)"
                }
                #expect(
                    changes == [
                        "notConnected→connecting", "connecting→connected", "connected→connecting",
                        "connecting→notConnected",
                    ])
            }
        }
    }
}
