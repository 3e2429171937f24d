import CastdSupport
import CastClient
import CastDevices
import CastEmulator
import CastProtocol
import CastTestSupport
import CastdAPI
import CastdLogging
import Foundation
import Testing

/// A device that sends what no device should (cast-emulator's hostile faults, over the real TLS
/// link to a real castd): frames that break the framing, frames that hold no valid CastMessage,
/// payloads of the wrong kind, JSON of the wrong types. castd stays up; a frame that breaks the
/// framing closes that device's link, reported with the reason, and castd reconnects; anything
/// else is skipped or read leniently without touching the link; a second device and its watcher
/// notice nothing. (The MEDIA_STATUS flood is in `HostileDeviceFloodTests`.)
@Suite(.serialized)
struct HostileDeviceFaultTests {
    /// Two emulated devices, each playing its own media in castd's session, a castd, a client,
    /// and a Watch on a second connection that records every event about the good device.
    struct Setup {
        var client: CastdClient
        var store: CastdStateStore
        var recorder: EventRecorder
        var hostile: CastDeviceEmulator
        var good: CastDeviceEmulator
        var hostileID: String
        var goodID: String
        var goodWatch: GoodDeviceWatch
        /// The hostile device's media status before the fault.
        var hostileMedia: CastdMediaStatus
        var hostileSession: CastdSession

        /// Events about the hostile device published after `sequence`.
        func hostileEvents(after sequence: UInt64) -> [CastdEvent] {
            recorder.all.filter { $0.sequence > sequence && HostileDeviceFaultTests.concerns($0, hostileID) }
        }
    }

    /// Records what a real Watch call (its own connection) sees, for one device.
    final class GoodDeviceWatch: Sendable {
        private let deviceID: String
        private final class Storage: Sendable {
            let recorded = Locked<[CastdEvent]>([])
        }
        private let storage = Storage()
        private let task: Task<Void, Never>

        init(socket: String, deviceID: String) {
            self.deviceID = deviceID
            let storage = storage
            task = Task {
                try? await CastdClient.withConnection(socketPath: socket) { client in
                    for try await event in client.watch() {
                        storage.recorded.withLock { $0.append(event) }
                    }
                }
            }
        }

        deinit { task.cancel() }

        /// Events about the device after `sequence`, and any lag (and the snapshot after it).
        func events(after sequence: UInt64) -> [CastdEvent] {
            var lagged = false
            return storage.recorded.withLock { all in
                all.filter { event in
                    if case .lagged = event.kind { lagged = true }
                    return event.sequence > sequence && (lagged || HostileDeviceFaultTests.concerns(event, deviceID))
                }
            }
        }

        /// Waits until the watch has seen `sequence`.
        func waitFor(sequence: UInt64) async throws {
            try await eventually("the watch to reach event \(sequence)") {
                storage.recorded.withLock { $0.contains { $0.sequence >= sequence } }
            }
        }
    }

    static func concerns(_ event: CastdEvent, _ deviceID: String) -> Bool {
        switch event.kind {
        case .deviceAdded(let device), .deviceUpdated(let device), .deviceRemoved(let device): device.id == deviceID
        case .session(let session): session.deviceID == deviceID
        case .media(let media): media.deviceID == deviceID
        case .transferred(let transfer): transfer.fromDeviceID == deviceID || transfer.toDeviceID == deviceID
        default: false
        }
    }

    static func media(_ url: String) -> CastdMediaInformation { FaultRecoveryTests.media(url) }

    /// One line for an event, for failure messages: its kind, device, and for a session its
    /// state and reason.
    static func summary(_ event: CastdEvent) -> String {
        switch event.kind {
        case .session(let session):
            "#\(event.sequence) session \(session.deviceName) \(session.state) \(session.sessionID.prefix(8)) '\(session.reason)'"
        case .media(let media): "#\(event.sequence) media \(media.deviceID) \(media.playerState)"
        case .deviceUpdated(let device): "#\(event.sequence) device \(device.friendlyName) \(device.linkState)"
        default: "#\(event.sequence) \(String(describing: event.kind).prefix(40))"
        }
    }

    func withTwoDevices<T>(_ body: (Setup) async throws -> T) async throws -> T {
        var hostileConfiguration = EmulatorConfiguration()
        hostileConfiguration.name = "Hostile"
        var goodConfiguration = EmulatorConfiguration()
        goodConfiguration.name = "Good"
        return try await withEmulator(hostileConfiguration) { hostile, hostileEndpoints in
            try await withEmulator(goodConfiguration) { good, goodEndpoints in
                let devices = [
                    StaticDevice(
                        name: "Hostile", endpoint: .init(host: hostileEndpoints.host, port: hostileEndpoints.port)),
                    StaticDevice(name: "Good", endpoint: .init(host: goodEndpoints.host, port: goodEndpoints.port)),
                ]
                return try await withDaemon(devices: devices) { socket, store in
                    let recorder = EventRecorder(store)
                    return try await CastdClient.withConnection(socketPath: socket) { client in
                        // Past the start: a currentTime read as 0 would show.
                        let hostileMedia = try await client.load(
                            Self.media("https://example.com/hostile.mp4"), device: "Hostile", startTime: 100)
                        _ = try await client.load(
                            Self.media("https://example.com/good.mp4"), device: "Good", startTime: 50)
                        let status = try await client.status()
                        // What the devices saw, should a session be missing (a flake seen only
                        // with other suites running alongside: who else spoke to them?).
                        let seen =
                            "\(status.sessions); hostile: \(await hostile.state().launches.count) launches, \(await hostile.state().connections.count) connections; good: \(await good.state().launches.count) launches, \(await good.state().connections.count) connections; events: \(recorder.all.map(Self.summary))"
                        let hostileSession = try #require(
                            status.sessions.first { $0.deviceName == "Hostile" }, "\(seen)")
                        let goodID = try #require(
                            status.sessions.first { $0.deviceName == "Good" }?.deviceID, "\(seen)")
                        let watch = GoodDeviceWatch(socket: socket, deviceID: goodID)
                        try await watch.waitFor(sequence: store.sequence)
                        return try await body(
                            Setup(
                                client: client, store: store, recorder: recorder, hostile: hostile, good: good,
                                hostileID: hostileMedia.deviceID, goodID: goodID, goodWatch: watch,
                                hostileMedia: hostileMedia, hostileSession: hostileSession))
                    }
                }
            }
        }
    }

    /// The good device answers requests, and its watcher saw nothing but what those requests
    /// did (media PAUSED and PLAYING): no link change, no session change, no lag.
    static func expectGoodDeviceUnaffected(_ setup: Setup, since sequence: UInt64) async throws {
        let playing = try await setup.client.play(device: "Good")
        #expect(playing.playerState == .playing)
        #expect(await setup.good.state().mediaStatus?.playerState == "PLAYING")
        try await setup.goodWatch.waitFor(sequence: setup.store.sequence)
        let events = setup.goodWatch.events(after: sequence)
        for event in events {
            guard case .media(let media) = event.kind else {
                Issue.record("a spurious event about the good device: \(event)")
                continue
            }
            #expect([.paused, .playing].contains(media.playerState), "\(media)")
        }
        #expect(events.contains { if case .media(let media) = $0.kind { media.playerState == .paused } else { false } })
        #expect(setup.store.device(id: setup.goodID)?.linkState == .connected)
    }

    static let framingFaults: [EmulatorHostileFrame] = [
        .oversizedFrame(length: 65_537), .oversizedFrame(length: 65_537, trailingBytes: 4096),
        .oversizedFrame(length: 0xFFFF_FFFF), .oversizedFrame(length: 0xFFFF_FFFF, trailingBytes: 100),
        .zeroLengthFrame,
    ]

    /// A frame that breaks CastV2's framing: castd closes that link at once and says why
    /// (through Watch, GetStatus and ListDevices), reconnects on its own and rejoins the same
    /// session; the other device never notices.
    @Test(arguments: framingFaults)
    func aFrameThatBreaksTheFramingClosesOnlyThatLinkWithTheReason(_ frame: EmulatorHostileFrame) async throws {
        try await withTwoDevices { setup in
            let before = setup.store.sequence
            #expect(try await setup.hostile.sendHostile(frame) == 1)
            // During the fault: the other device answers.
            #expect(try await setup.client.pause(device: "Good").playerState == .paused)

            let (down, _) = try await setup.recorder.first("the hostile device's link reported down") {
                event -> CastdDevice? in
                guard event.sequence > before, case .deviceUpdated(let device) = event.kind,
                    device.id == setup.hostileID,
                    device.linkState != .connected, !device.linkError.isEmpty
                else { return nil }
                return device
            }
            print("\(frame): link reported \(down.linkState): \(down.linkError)")
            #expect(down.linkError.contains("frame"), "\(down.linkError)")
            #expect(down.linkError.contains("CastV2"), "\(down.linkError)")
            let (suspended, _) = try await setup.recorder.session(.suspended, of: setup.hostileID)
            #expect(suspended.reason.contains(down.linkError), "\(suspended.reason)")

            // castd reconnects and rejoins the same session, launching nothing.
            let (resumed, _) = try await setup.recorder.session(.resumed, of: setup.hostileID, timeout: .seconds(20))
            #expect(resumed.sessionID == setup.hostileSession.sessionID)
            #expect(await setup.hostile.state().launches.count == 1)
            #expect(setup.store.device(id: setup.hostileID)?.linkState == .connected)
            #expect(
                try await setup.client.requestMediaStatus(device: "Hostile").mediaSessionID
                    == setup.hostileMedia.mediaSessionID)
            try await Self.expectGoodDeviceUnaffected(setup, since: before)
        }
    }

    static let skippedFaults: [EmulatorHostileFrame] = [
        .garbageFrame(length: 1), .garbageFrame(length: 64), .garbageFrame(length: 65_536), .truncatedMessage,
        .emptySourceID, .emptyDestinationID, .emptyNamespace, .stringTypeWithBinaryPayload, .binaryTypeWithUTF8Payload,
        .binaryPayload(namespace: CastNamespace.media), .binaryPayload(namespace: CastNamespace.receiver),
        .notJSON(namespace: CastNamespace.receiver), .notJSON(namespace: CastNamespace.media),
        .deeplyNested(depth: 10_000, namespace: CastNamespace.media),
        .deeplyNested(depth: 10_000, namespace: CastNamespace.receiver),
        // In a message (one object deep): as deep as castd reads, and one deeper.
        .deeplyNested(depth: JSONValue.maximumDepth - 1, namespace: CastNamespace.media),
        .deeplyNested(depth: JSONValue.maximumDepth, namespace: CastNamespace.media),
        .deeplyNested(depth: 32_000, namespace: CastNamespace.media),
        .mediaStatusString, .mediaSessionIDLetters, .currentTimeObject, .volumeLevelString, .receiverVolumeLevelString,
        .applicationsNotArray, .outOfRangeNumbers,
    ]

    /// A frame that is whole but holds no valid CastMessage, a payload of the wrong kind, JSON
    /// that does not parse or has fields of the wrong types: castd keeps the link, skips the
    /// message or ignores the fields it cannot read, and publishes nothing wrong (no media
    /// cleared, no position or volume of 0, no session ended); the other device never notices.
    @Test(arguments: skippedFaults)
    func aBadMessageIsSkippedOrReadLenientlyAndTheLinkGoesOn(_ frame: EmulatorHostileFrame) async throws {
        try await withTwoDevices { setup in
            let before = setup.store.sequence
            let receiverBefore = try #require(setup.store.device(id: setup.hostileID)?.receiver)
            #expect(try await setup.hostile.sendHostile(frame) == 1)
            #expect(try await setup.client.pause(device: "Good").playerState == .paused)
            // A volume change on the device itself, after the fault on the same link: once castd
            // shows it, castd has handled the hostile message.
            try setup.hostile.changeVolumeOnDevice(level: 0.35)
            try await setup.recorder.first("the device's own volume change") { event -> Bool? in
                guard event.sequence > before, case .deviceUpdated(let device) = event.kind,
                    device.id == setup.hostileID,
                    abs(device.receiver.volume.level - 0.35) < 0.001
                else { return nil }
                return true
            }

            for event in setup.hostileEvents(after: before) {
                // Numbers a device sends never become enums protobuf cannot encode.
                #expect(outOfRangeEnumFields(in: event).isEmpty, "\(outOfRangeEnumFields(in: event))")
                switch event.kind {
                case .deviceUpdated(let device):
                    #expect(device.linkState == .connected, "\(device)")
                    #expect(device.receiver.applications == receiverBefore.applications, "\(device.receiver)")
                    #expect(
                        [receiverBefore.volume.level, 0.35].contains { abs($0 - device.receiver.volume.level) < 0.001 },
                        "volume published as \(device.receiver.volume)")
                case .media(let media):
                    #expect(media.mediaSessionID == setup.hostileMedia.mediaSessionID, "\(media)")
                    #expect(media.playerState == .playing, "\(media)")
                    #expect(media.currentTime >= 100 && media.currentTime.isFinite, "\(media)")
                    #expect(media.volume.level == setup.hostileMedia.volume.level, "\(media.volume)")
                default:
                    Issue.record("castd published this about the hostile device: \(event)")
                }
            }
            let status = try await setup.client.status()
            let session = try #require(status.sessions.first { $0.deviceID == setup.hostileID })
            #expect(session.sessionID == setup.hostileSession.sessionID && session.state == setup.hostileSession.state)
            #expect(outOfRangeEnumFields(in: status).isEmpty)
            let media = try #require(status.media.first { $0.deviceID == setup.hostileID })
            #expect(media.mediaSessionID == setup.hostileMedia.mediaSessionID && media.playerState == .playing)
            #expect(media.currentTime >= 100)
            // The link is the same one: still up, and the device answers on it.
            #expect(setup.store.device(id: setup.hostileID)?.linkState == .connected)
            #expect(await setup.hostile.state().connections.count == 1)
            #expect(try await setup.client.pause(device: "Hostile").playerState == .paused)
            try await Self.expectGoodDeviceUnaffected(setup, since: before)
        }
    }
}

/// A device (or any host, before it has authenticated) can send frames castd must skip as fast as
/// it likes; castd logs a few a minute, with how many more there were (SECURITY.md, M4).
struct HostileDeviceLogFloodTests {
    @Test func badFramesFromADeviceAreLoggedAFewAMinute() async throws {
        let logs = CastdLogs(filter: LogFilter(minimum: .info), output: .discard)
        try await withEmulator { emulator, endpoints in
            let device = StaticDevice(name: "Noisy", endpoint: .init(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [device], logs: logs) { socket, store in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    _ = try await client.startSession(device: "Noisy")
                    let frames = 40
                    for _ in 0..<frames { #expect(try await emulator.sendHostile(.garbageFrame(length: 64)) == 1) }
                    // A change on the device after the frames, on the same link: once castd shows
                    // it, castd has read them all.
                    try emulator.changeVolumeOnDevice(level: 0.35)
                    try await eventually("castd to show the device's own volume change") {
                        store.devices().contains { abs($0.receiver.volume.level - 0.35) < 0.001 }
                    }
                    let skipped = logs.buffer.recent(1000).filter {
                        $0.message == "skipped a bad message from the device"
                    }
                    #expect(!skipped.isEmpty && skipped.count <= 5, "\(skipped.count) of \(frames) bad frames logged")
                    #expect(store.devices().first?.linkState == .connected)
                }
            }
        }
    }
}
