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

    /// With a discovery criterion (castd.toml's `launch.filter_devices`), castd's cast state
    /// counts only the devices that can run the default app, as the sender SDK offers only those:
    /// a speaker that cannot leaves no device available; a TV that can, which castd asks on its
    /// own as it lists it, makes one available.
    @Test func withACriterionOnlyDevicesThatCanRunTheDefaultAppAreAvailable() async throws {
        var speakerConfiguration = EmulatorConfiguration()
        speakerConfiguration.apps = EmulatorApp.builtIn.filter { $0.appID != "233637DE" }
        let launch = LaunchDefaults(appID: "233637DE", filterDevices: true)
        try await withEmulator(speakerConfiguration) { _, speakerAt in
            let speaker = StaticDevice(
                name: "Speaker", endpoint: DeviceEndpoint(host: speakerAt.host, port: speakerAt.port))
            try await withDaemon(devices: [speaker], launch: launch) { socket, store in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    // castd records the answer before it returns it.
                    let answer = try await client.appAvailability(device: "Speaker", appIDs: ["233637DE"])
                    #expect(answer.available == ["233637DE": false])
                    #expect(store.criterionAnswer(deviceID: speaker.id) == false)
                    let status = try await client.status()
                    #expect(status.devices.map(\.friendlyName) == ["Speaker"])
                    #expect(status.castState == .noDevicesAvailable, "listed, but it cannot run the app")
                }
            }
            try await withEmulator { _, tvAt in
                let tv = StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: tvAt.host, port: tvAt.port))
                try await withDaemon(devices: [speaker, tv], launch: launch) { socket, store in
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        // Nobody asks: castd does.
                        try await eventually(timeout: .seconds(15), "castd asks the TV whether it runs the app") {
                            store.criterionAnswer(deviceID: tv.id) == true
                        }
                        #expect(try await client.status().castState == .notConnected, "the TV can run it")
                    }
                }
            }
            // Without a criterion, the speaker alone is a device available.
            try await withDaemon(devices: [speaker]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    let state = try await client.status().castState
                    #expect(state == .notConnected)
                }
            }
        }
    }
}
