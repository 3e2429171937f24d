import CastClient
import CastDevices
import CastEmulator
import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// castd against an emulated device that misbehaves the way real ones do (cast-emulator's fault
/// injection): silent, dropping its links, restarting, moving away, handing its session to
/// another device. castd recovers on its own, keeps watchers informed, and never relaunches
/// or interrupts what plays.
struct FaultRecoveryTests {
    static func media(_ url: String) -> CastdMediaInformation {
        var media = CastdMediaInformation()
        media.contentURL = url
        media.contentID = url
        media.contentType = "video/mp4"
        media.duration = 600
        return media
    }

    /// One emulated device on a port that can be listened on again, and a castd using it.
    func withDevice<T>(
        _ configure: (inout EmulatorConfiguration) -> Void = { _ in },
        _ body: (CastdClient, CastDeviceEmulator, CastdStateStore, EventRecorder) async throws -> T
    ) async throws -> T {
        var configuration = EmulatorConfiguration()
        configuration.port = try freePort()
        configure(&configuration)
        return try await withEmulator(configuration) { emulator, endpoints in
            let device = StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            return try await withDaemon(devices: [device]) { socket, store in
                let recorder = EventRecorder(store)
                return try await CastdClient.withConnection(socketPath: socket) { client in
                    try await body(client, emulator, store, recorder)
                }
            }
        }
    }

    /// castd's media status is what a fresh GET_STATUS on the device says.
    static func expectMediaMatchesDevice(_ client: CastdClient, _ emulator: CastDeviceEmulator) async throws {
        let device = try #require(await emulator.state().mediaStatus)
        let refreshed = try await client.requestMediaStatus()
        #expect(refreshed.mediaSessionID == device.mediaSessionID)
        let states: [String: Castd_V1_PlayerState] = [
            "PLAYING": .playing, "PAUSED": .paused, "BUFFERING": .buffering, "IDLE": .idle,
        ]
        #expect(refreshed.playerState == states[device.playerState])
        #expect(abs(refreshed.currentTime - device.currentTime) < 2)
        let held = try #require(try await client.status().media.first)
        #expect(held.mediaSessionID == refreshed.mediaSessionID && held.playerState == refreshed.playerState)
    }

    /// A device that goes silent (TCP open, nothing said) is declared dead after 10 s without a
    /// message (stretched by the test time scale: `trustingEmulators`) — not before — and the
    /// session is suspended; once it speaks again castd
    /// reconnects and resumes the same session, playback untouched.
    @Test func aSilentDeviceIsDeclaredDeadThenResumed() async throws {
        try await withDevice { client, emulator, store, recorder in
            _ = try await client.load(Self.media("https://example.com/silent.mp4"))
            let (started, _) = try await recorder.session(.started)
            let silentSince = ContinuousClock.now
            emulator.updateFaults { $0.heartbeat = .silent }
            let (_, suspendedAt) = try await recorder.session(.suspended, timeout: .seconds(30))
            let deadAfter = suspendedAt - silentSince
            print("silent device declared dead after \(deadAfter)")
            // The link dies 10 s after the last message castd heard, which came at most 5 s
            // before the silence (either side speaks after 5 s of quiet): so never within 5 s.
            #expect(deadAfter > Duration.seconds(5).scaledForTests, "declared dead too early: \(deadAfter)")
            let speaking = ContinuousClock.now
            emulator.updateFaults { $0.heartbeat = .normal }
            let (resumed, resumedAt) = try await recorder.session(.resumed, timeout: .seconds(60))
            print("silent device back: resumed \(resumedAt - speaking) after it spoke again")
            #expect(resumed.sessionID == started.sessionID)
            #expect(await emulator.state().launches.count == 1)
            try await Self.expectMediaMatchesDevice(client, emulator)
        }
    }

    /// Links dropped under a playing session: castd reconnects within the backoff's first step
    /// and watchers see suspended → resuming → resumed, the same session, no LAUNCH, no LOAD.
    @Test func droppedLinksAreRejoinedWithinASecond() async throws {
        try await withDevice { client, emulator, store, recorder in
            _ = try await client.load(Self.media("https://example.com/drop.mp4"))
            let (started, _) = try await recorder.session(.started)
            let dropped = ContinuousClock.now
            #expect(await emulator.dropLinks() >= 1)
            let (resumed, resumedAt) = try await recorder.session(.resumed)
            print("links dropped: resumed after \(resumedAt - dropped)")
            #expect(resumed.sessionID == started.sessionID && resumed.transportID == started.transportID)
            let states = recorder.sessions().map(\.state)
            #expect(Array(states.suffix(3)) == [.suspended, .resuming, .resumed], "\(states)")
            let state = await emulator.state()
            #expect(state.launches.count == 1 && state.loads.count == 1)
            #expect(state.mediaStatus?.playerState == "PLAYING")
            try await Self.expectMediaMatchesDevice(client, emulator)
        }
    }

    /// The device restarts keeping the app (its network blipped for 3 s): connections are
    /// refused meanwhile and castd backs off; once it is back castd resumes the session.
    @Test func aRestartedDeviceKeepingTheAppIsResumed() async throws {
        try await withDevice { client, emulator, store, recorder in
            _ = try await client.load(Self.media("https://example.com/restart.mp4"))
            let (started, _) = try await recorder.session(.started)
            let restart = Task { try await emulator.restart(downtime: .seconds(3)) }
            try await recorder.session(.suspended)
            _ = try await restart.value
            let back = ContinuousClock.now
            let (resumed, resumedAt) = try await recorder.session(.resumed, timeout: .seconds(20))
            print("device restarted: resumed \(resumedAt - back) after it listened again")
            #expect(resumed.sessionID == started.sessionID)
            #expect(await emulator.state().launches.count == 1)
            try await Self.expectMediaMatchesDevice(client, emulator)
        }
    }

    /// A device that refuses TLS is retried with backoff (the attempt count grows, the state says
    /// reconnecting, requests fail at once); when it accepts again castd is back.
    @Test func refusedTLSIsRetriedWithBackoffUntilItWorks() async throws {
        try await withDevice { client, emulator, store, recorder in
            _ = try await client.startSession()
            let id = try #require(store.devices().first?.id)
            emulator.updateFaults { $0.refuseTLS = true }
            _ = await emulator.dropLinks()
            try await eventually(timeout: .seconds(20), "three failed retries") {
                (store.device(id: id)?.reconnectAttempts ?? 0) >= 3
            }
            let away = try #require(store.device(id: id))
            #expect(away.linkState == .reconnecting || away.linkState == .connecting)
            let error = await #expect(throws: CastdError.self) { try await client.pause() }
            #expect(error != nil)
            emulator.updateFaults { $0.refuseTLS = false }
            try await recorder.session(.resumed, timeout: .seconds(30))
            #expect(store.device(id: id)?.reconnectAttempts == 0)
        }
    }

    /// The session moves to another device (the source's app stops, the destination resumes the
    /// same media): castd follows, tells watchers, and requests for the old device control the
    /// media on the new one.
    @Test func aTransferredSessionIsFollowed() async throws {
        var kitchenConfiguration = EmulatorConfiguration()
        kitchenConfiguration.name = "Kitchen"
        try await withEmulator { living, livingEndpoints in
            try await withEmulator(kitchenConfiguration) { kitchen, kitchenEndpoints in
                let devices = [
                    StaticDevice(
                        name: "Living Room", endpoint: .init(host: livingEndpoints.host, port: livingEndpoints.port)),
                    StaticDevice(
                        name: "Kitchen", endpoint: .init(host: kitchenEndpoints.host, port: kitchenEndpoints.port)),
                ]
                try await withDaemon(devices: devices) { socket, store in
                    let recorder = EventRecorder(store)
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        _ = try await client.load(Self.media("https://example.com/moving.mp4"), device: "Living Room")
                        let living = living
                        let moved = ContinuousClock.now
                        let handover = try await living.transferSession(to: kitchen)
                        let (transfer, at) = try await recorder.first("the transfer event") {
                            event -> Castd_V1_SessionTransfer? in
                            if case .transferred(let transfer) = event.kind { return transfer }
                            return nil
                        }
                        print("session transfer followed after \(at - moved)")
                        #expect(transfer.fromDeviceName == "Living Room" && transfer.toDeviceName == "Kitchen")
                        #expect(transfer.session.sessionID == handover.destination.sessionID)
                        #expect(transfer.session.transferredFromDeviceID == transfer.fromDeviceID)
                        // The old device's name still reaches the media, now in the kitchen.
                        let paused = try await client.pause(device: "Living Room")
                        #expect(paused.deviceID == transfer.toDeviceID)
                        #expect(await kitchen.state().mediaStatus?.playerState == "PAUSED")
                        #expect(await living.state().runningApp?.isIdleScreen == true)
                        #expect(await kitchen.state().launches.isEmpty, "castd joined; it launched nothing")
                        let status = try await client.status()
                        #expect(status.sessions.map(\.deviceID) == [transfer.toDeviceID])
                    }
                }
            }
        }
    }
}
