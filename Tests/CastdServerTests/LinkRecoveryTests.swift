import CastSenderLink
import CastClient
import CastDevices
import CastEmulator
import CastTestSupport
import CastdAPI
import Foundation
import Logging
import Testing

/// Devices that go away and come back, and a castd that restarts: castd recovers on its own,
/// keeps every client informed, and never relaunches an app or stops playback.
struct LinkRecoveryTests {
    static func media(_ url: String) -> CastdMediaInformation {
        var media = CastdMediaInformation()
        media.contentURL = url
        media.contentType = "video/mp4"
        media.duration = 600
        return media
    }

    /// A started session of the Default Media Receiver on `deviceID`, as a state file holds it.
    static func session(deviceID: String, deviceName: String, sessionID: String, transportID: String) -> CastdSession {
        var session = CastdSession()
        session.deviceID = deviceID
        session.deviceName = deviceName
        session.sessionID = sessionID
        session.appID = "CC1AD845"
        session.transportID = transportID
        session.state = .started
        return session
    }

    static func saved(in directory: String) -> [SavedSession] {
        SessionStore(directory: URL(fileURLWithPath: directory), logger: Logger(label: "test")).load()
    }

    /// The device restarts without the app (a reboot): castd reconnects within the backoff's
    /// first step, finds the app gone and ends the session, saying why; it never relaunches.
    @Test func aDeviceBackWithoutTheAppEndsTheSessionWithTheReason() async throws {
        var first = EmulatorConfiguration()
        first.name = "Rebooting TV"
        first.port = try freePort()
        let port = try await withEmulator(first) { emulator, endpoints in
            let device = StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            return try await withDaemon(devices: [device]) { socket, store in
                let recorder = EventRecorder(store)
                try await CastdClient.withConnection(socketPath: socket) { client in
                    _ = try await client.load(Self.media("https://example.com/film.mp4"))
                    let started = try #require(recorder.sessions().last { $0.state == .started })
                    await emulator.shutdown()
                    try await recorder.session(.suspended)
                    // Back on the same port, freshly booted: no app runs.
                    var rebooted = EmulatorConfiguration()
                    rebooted.name = "Rebooting TV"
                    rebooted.deviceID = first.deviceID
                    rebooted.port = endpoints.port
                    try await withEmulator(rebooted) { fresh, _ in
                        let (ended, _) = try await recorder.session(.resumeFailed)
                        #expect(ended.sessionID == started.sessionID)
                        #expect(ended.reason.contains("app stopped while castd was disconnected"), "\(ended.reason)")
                        #expect(await fresh.state().launches.isEmpty, "castd must never relaunch a lost session's app")
                        let states = recorder.sessions().map(\.state)
                        #expect(Array(states.suffix(3)) == [.suspended, .resuming, .resumeFailed], "\(states)")
                        try await eventually("the link to be back") {
                            store.device(id: "TV")?.linkState == .connected
                                || store.devices().first?.linkState == .connected
                        }
                    }
                }
                return endpoints.port
            }
        }
        #expect(port > 0)
    }

    /// While the device is away castd says it is reconnecting, when it tries next and how many
    /// tries failed; the attempts follow the backoff (never two within a second).
    @Test func whileTheDeviceIsAwayCastdSaysItIsReconnecting() async throws {
        try await withEmulator { emulator, endpoints in
            let device = StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [device]) { socket, store in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    _ = try await client.startSession()
                    let id = try #require(store.devices().first?.id)
                    await emulator.shutdown()
                    try await eventually(timeout: .seconds(20), "two failed retries") {
                        (store.device(id: id)?.reconnectAttempts ?? 0) >= 2
                    }
                    let away = try #require(store.device(id: id))
                    #expect(away.linkState == .reconnecting || away.linkState == .connecting)
                    #expect(!away.linkError.isEmpty)
                    // A request meanwhile fails at once with the reason, rather than hanging.
                    let error = await #expect(throws: CastdError.self) { try await client.pause() }
                    #expect(
                        error?.code == .unavailable || error?.code == .failedPrecondition,
                        "\(String(describing: error))")
                    let status = try await client.status()
                    #expect(status.sessions.first?.state == .suspended)
                }
            }
        }
    }

    /// castd stops (here: its registry is torn down without ending anything, as a SIGKILL
    /// would leave it) while media plays; the next castd rejoins the same session from its
    /// state file, without a LAUNCH and without touching playback.
    @Test func aNewCastdRejoinsTheSavedSession() async throws {
        try await withTemporaryDirectory { directory in
            try await withEmulator { emulator, endpoints in
                let device = StaticDevice(
                    name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
                let before = try await withDaemon(devices: [device], stateDirectory: directory) { socket, store in
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        _ = try await client.load(Self.media("https://example.com/film.mp4"))
                        return try #require(try await client.status().sessions.first)
                    }
                }
                #expect(FileManager.default.fileExists(atPath: directory + "/sessions.json"))
                try await withDaemon(devices: [device], stateDirectory: directory) { socket, store in
                    let recorder = EventRecorder(store)
                    let (resumed, _) = try await recorder.session(.resumed)
                    #expect(resumed.sessionID == before.sessionID)
                    #expect(resumed.transportID == before.transportID)
                    let state = await emulator.state()
                    #expect(state.launches.count == 1, "only the first castd's launch")
                    #expect(state.mediaStatus?.playerState == "PLAYING")
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        // And it is controllable as before.
                        let paused = try await client.pause()
                        #expect(paused.playerState == .paused)
                    }
                }
            }
        }
    }

    /// A saved session the device no longer runs is dropped, and nothing is launched.
    @Test func aSavedSessionTheDeviceNoLongerRunsIsDropped() async throws {
        try await withTemporaryDirectory { directory in
            try await withEmulator { emulator, endpoints in
                let device = StaticDevice(
                    name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
                let gone = Self.session(
                    deviceID: device.id, deviceName: "TV", sessionID: "6A2B1C3D-0000-4000-8000-00000000DEAD",
                    transportID: "web-gone")
                SessionStore(directory: URL(fileURLWithPath: directory), logger: Logger(label: "test"))
                    .record(deviceID: device.id, SavedSession(gone, endpoint: device.endpoint))
                let goneID = gone.sessionID
                try await withDaemon(devices: [device], stateDirectory: directory) { _, store in
                    try await Self.expectDropped(goneID, store: store, emulator: emulator, directory: directory)
                }
            }
        }
    }

    /// A session saved for a device that never comes back (nothing announces it, nothing
    /// answers at its address): castd lists the device while it holds the session, gives the
    /// session up after the resume window, and then forgets the device.
    @Test func aDeviceKnownOnlyFromASavedSessionIsForgottenWhenCastdGivesUp() async throws {
        try await withTemporaryDirectory { directory in
            let endpoint = DeviceEndpoint(host: "127.0.0.1", port: try freePort())
            let gone = Self.session(
                deviceID: "0123456789abcdef0123456789abcdef", deviceName: "Old TV",
                sessionID: "6A2B1C3D-0000-4000-8000-00000000BEEF", transportID: "web-old")
            let saved = SessionStore(directory: URL(fileURLWithPath: directory), logger: Logger(label: "test"))
            saved.record(deviceID: gone.deviceID, SavedSession(gone, endpoint: endpoint))
            let store = CastdStateStore()
            let recorder = EventRecorder(store)
            let registry = DeviceRegistry(
                store: store, discovery: false,
                backoff: ReconnectBackoff(
                    first: .milliseconds(20), cap: .milliseconds(100), minimumGap: .milliseconds(20)),
                resumeWindow: .milliseconds(400), sessionStore: saved, logger: Logger.emulatorForTests(label: "castd"))
            let running = Task { await registry.run() }
            defer { running.cancel() }

            // Two steps, each with its own deadline: castd holds the saved session (once the
            // registry runs: at the suite's start that may take a while), then gives it up.
            try await recorder.session(.suspended, of: gone.deviceID)
            let (ended, _) = try await recorder.session(.resumeFailed, of: gone.deviceID)
            #expect(ended.sessionID == gone.sessionID)
            #expect(
                ended.reason.contains("could not be reached for 400 ms; castd gave the session up"), "\(ended.reason)")
            try await recorder.first("the device to be removed") { event -> CastdDevice? in
                guard case .deviceRemoved(let device) = event.kind, device.id == gone.deviceID else { return nil }
                return device
            }
            // It was listed, as the saved session's device, until then.
            let added = recorder.all.contains { event in
                guard case .deviceAdded(let device) = event.kind else { return false }
                return device.id == gone.deviceID && device.friendlyName == "Old TV"
            }
            #expect(added)
            #expect(store.device(id: gone.deviceID) == nil)
            // And keeps nothing for it: its controller is gone too.
            try await eventually("the device's controller forgotten") { await registry.controllerCount == 0 }
            #expect(Self.saved(in: directory).isEmpty)
            // A client that names it now is told there is no such device.
            let refusal = await #expect(throws: CastdError.self) { try await registry.controller(for: "Old TV") }
            #expect(refusal?.code == .notFound)
        }
    }

    static func expectDropped(
        _ sessionID: String, store: CastdStateStore, emulator: CastDeviceEmulator, directory: String
    )
        async throws
    {
        let recorder = EventRecorder(store)
        let (ended, _) = try await recorder.session(.resumeFailed)
        #expect(ended.sessionID == sessionID)
        let launches = await emulator.state().launches
        #expect(launches.isEmpty)
        try await eventually("the state file to forget it") { saved(in: directory).isEmpty }
    }
}
