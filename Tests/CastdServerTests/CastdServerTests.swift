import CastClient
import CastDevices
import CastEmulator
import CastTestSupport
import CastdAPI
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// castd.v1 over a real Unix socket, against real device links to cast-emulator.
struct CastdServerTests {
    func device(_ endpoints: EmulatorEndpoints, name: String) -> StaticDevice {
        StaticDevice(name: name, endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
    }

    @Test func devicesAreListedSortedByName() async throws {
        try await withEmulator { _, zed in
            try await withEmulator { _, alpha in
                try await withDaemon(devices: [device(zed, name: "Zed TV"), device(alpha, name: "alpha speaker")]) {
                    socket, _ in
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        let devices = try await client.listDevices()
                        #expect(devices.map(\.friendlyName) == ["alpha speaker", "Zed TV"])
                        #expect(devices.allSatisfy { $0.source == .static && $0.linkState == .disconnected })
                    }
                }
            }
        }
    }

    @Test func loadAndControlReachTheDevice() async throws {
        try await withEmulator { emulator, endpoints in
            try await withDaemon(devices: [device(endpoints, name: "Living Room TV")]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    let session = try await client.startSession(device: "living room tv")
                    #expect(session.appID == "CC1AD845" && session.state == .started && !session.joined)
                    var media = CastdMediaInformation()
                    media.contentURL = "https://example.com/big_buck_bunny.mp4"
                    media.contentType = "video/mp4"
                    media.metadata.title = "Big Buck Bunny"
                    let loaded = try await client.load(media)
                    #expect(loaded.playerState == .playing)
                    #expect(loaded.media.metadata.title == "Big Buck Bunny")
                    let paused = try await client.pause()
                    #expect(paused.playerState == .paused)
                    #expect(await emulator.state().mediaStatus?.playerState == "PAUSED")
                    let seeked = try await client.seek(to: 120)
                    #expect(abs(seeked.currentTime - 120) < 0.5)
                    let volume = try await client.setVolume(level: 0.25)
                    #expect(abs(volume.level - 0.25) < 0.001)
                    let ended = try await client.endSession(stopApp: true)
                    #expect(ended.state == .ended)
                    #expect(await emulator.state().receiverStatus.applications.allSatisfy(\.isIdleScreen))
                }
            }
        }
    }

    @Test func twoClientsShareOneSessionAndEveryWatcherSeesTheSameOrder() async throws {
        try await withEmulator { _, endpoints in
            try await withDaemon(devices: [device(endpoints, name: "TV")]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { controller in
                    try await CastdClient.withConnection(socketPath: socket) { watcherA in
                        try await CastdClient.withConnection(socketPath: socket) { watcherB in
                            var media = CastdMediaInformation()
                            media.contentURL = "https://example.com/a.mp4"
                            _ = try await controller.load(media)
                            let streamA = watcherA.watch()
                            let streamB = watcherB.watch()
                            var iteratorA = streamA.makeAsyncIterator()
                            var iteratorB = streamB.makeAsyncIterator()
                            let firstA = try #require(try await iteratorA.next())
                            let firstB = try #require(try await iteratorB.next())
                            guard case .snapshot(let snapshot)? = firstA.kind, case .snapshot? = firstB.kind else {
                                Issue.record("the first event must be a snapshot")
                                return
                            }
                            #expect(snapshot.media.first?.playerState == .playing)
                            // Another client's pause reaches both watchers, in the same order.
                            _ = try await controller.pause()
                            var seenA: [UInt64] = []
                            var seenB: [UInt64] = []
                            while let event = try await iteratorA.next() {
                                seenA.append(event.sequence)
                                if case .media(let m)? = event.kind, m.playerState == .paused { break }
                            }
                            while seenB.count < seenA.count, let event = try await iteratorB.next() {
                                seenB.append(event.sequence)
                            }
                            #expect(seenA == seenB)
                            #expect(seenA == Array(seenA.sorted()))
                            #expect(
                                firstA.sequence == firstB.sequence || seenA.first.map { $0 > firstA.sequence } == true)
                        }
                    }
                }
            }
        }
    }

    @Test func stopAppAfterLeavingStopsWhatRuns() async throws {
        try await withEmulator { emulator, endpoints in
            try await withDaemon(devices: [device(endpoints, name: "TV")]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    _ = try await client.startSession()
                    let left = try await client.endSession()
                    #expect(left.state == .ended)
                    #expect(await emulator.state().runningApp?.appID == "CC1AD845")
                    let stopped = try await client.endSession(stopApp: true)
                    #expect(stopped.appID == "CC1AD845" && stopped.state == .ended)
                    #expect(await emulator.state().receiverStatus.applications.allSatisfy(\.isIdleScreen))
                    let nothing = await #expect(throws: CastdError.self) { try await client.endSession(stopApp: true) }
                    #expect(nothing?.code == .failedPrecondition)
                }
            }
        }
    }

    @Test func simultaneousStartsShareOneLaunch() async throws {
        try await withTemporaryDirectory { directory in
            var configuration = EmulatorConfiguration()
            configuration.logFile = directory + "/messages.jsonl"
            try await withEmulator(configuration) { _, endpoints in
                try await withDaemon(devices: [device(endpoints, name: "TV")]) { socket, _ in
                    try await CastdClient.withConnection(socketPath: socket) { a in
                        try await CastdClient.withConnection(socketPath: socket) { b in
                            async let first = a.startSession(appID: "CC1AD845")
                            async let second = b.startSession(appID: "CC1AD845")
                            let (one, two) = try await (first, second)
                            #expect(one.sessionID == two.sessionID)
                        }
                    }
                }
            }
            let log = try String(contentsOfFile: directory + "/messages.jsonl", encoding: .utf8)
            let launches = log.split(separator: "\n").filter {
                $0.contains("\"direction\":\"in\"") && $0.contains("\"LAUNCH\"")
            }
            #expect(launches.count == 1)
        }
    }

    @Test func unknownDeviceIsNotFoundNamingTheKnownOnes() async throws {
        try await withEmulator { emulator, endpoints in
            try await withDaemon(devices: [device(endpoints, name: "Kitchen")]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    let error = await #expect(throws: CastdError.self) { try await client.pause(device: "Attic") }
                    #expect(error?.code == .notFound)
                    #expect(error?.message.contains("\"Kitchen\"") == true)
                }
            }
        }
    }

    @Test func badURLIsRefusedBeforeReachingTheDevice() async throws {
        try await withEmulator { emulator, endpoints in
            try await withDaemon(devices: [device(endpoints, name: "TV")]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    for bad in ["not a url", "http://", "/just/a/path.mp4"] {
                        var media = CastdMediaInformation()
                        media.contentURL = bad
                        let error = await #expect(throws: CastdError.self) { try await client.load(media) }
                        #expect(error?.code == .invalidArgument)
                        #expect(error?.message.contains(bad) == true)
                    }
                    let volume = await #expect(throws: CastdError.self) { try await client.setVolume(level: 1.5) }
                    #expect(volume?.code == .invalidArgument)
                    #expect(await emulator.state().connections.isEmpty)
                }
            }
        }
    }

    /// A device whose address refuses connections (a closed port: refused at once) is
    /// UNAVAILABLE, naming the address, and its link is failed. (The connect timeout, for a
    /// peer that never answers, is `CastLinkTests.silentTLSPeerHitsTheConnectDeadline`.)
    @Test func aDeviceThatRefusesConnectionsIsUnavailableNamingItsAddress() async throws {
        try await withRefusingTCPPort { port in
            try await withDaemon(devices: [
                StaticDevice(name: "Gone", endpoint: DeviceEndpoint(host: "127.0.0.1", port: port))
            ]) { socket, store in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    let error = await #expect(throws: CastdError.self) { try await client.startSession() }
                    #expect(error?.code == .unavailable)
                    #expect(error?.message.contains("127.0.0.1:\(port)") == true)
                    #expect(store.devices().first?.linkState == .failed)
                }
            }
        }
    }

    @Test func deadlineExceededIsReported() async throws {
        let (fd, port) = try silentTCPListener()
        defer { close(fd) }
        try await withDaemon(devices: [
            StaticDevice(name: "Silent", endpoint: DeviceEndpoint(host: "127.0.0.1", port: port))
        ]) { socket, _ in
            try await CastdClient.withConnection(socketPath: socket) { client in
                let error = await #expect(throws: CastdError.self) {
                    _ = try await client.unary(
                        .startSession, Castd_V1_StartSessionRequest(), as: CastdSession.self,
                        timeout: .milliseconds(300))
                }
                #expect(error?.code == .deadlineExceeded)
            }
        }
    }

    @Test func unknownMethodAndMalformedRequestsGetStatuses() async throws {
        try await withDaemon { socket, _ in
            let raw = try RawSocket(path: socket)
            try raw.start(callID: 1, method: "/castd.v1.Cast/Teleport", request: Castd_V1_ListDevicesRequest())
            let unknown = try #require(try await raw.receive())
            #expect(unknown.callID == 1 && unknown.status.code == .unimplemented)
            #expect(unknown.status.message.contains("Teleport"))

            var frame = Castd_V1_Frame()
            frame.callID = 2
            var start = Castd_V1_CallStart()
            start.method = CastdMethod.seek.path
            start.request = Data([0xFF, 0xFF, 0xFF])
            frame.start = start
            try raw.send(frame)
            let malformed = try #require(try await raw.receive())
            #expect(malformed.callID == 2 && malformed.status.code == .invalidArgument)

            // The same connection still works.
            try raw.start(callID: 3, method: CastdMethod.listDevices.path, request: Castd_V1_ListDevicesRequest())
            let message = try #require(try await raw.receive())
            #expect(message.callID == 3)
            #expect(try await raw.receive()?.status.code == .ok)
        }
    }

    @Test func oversizedFrameClosesOnlyThatClient() async throws {
        try await withDaemon(maximumFrameLength: 1024) { socket, _ in
            try await CastdClient.withConnection(socketPath: socket) { bystander in
                // The bystander speaks first: castd's idle timeout closes only connections that
                // sent nothing, and a CI run once took longer than it before the bystander spoke.
                _ = try await bystander.listDevices()
                let raw = try RawSocket(path: socket)
                try raw.write([0, 0, 0x10, 0])  // announces 4096 bytes
                let status = try #require(try await raw.receive())
                #expect(status.callID == 0 && status.status.code == .resourceExhausted)
                #expect(status.status.message.contains("4096"))
                #expect(try await raw.receive() == nil)  // closed
                _ = try await bystander.listDevices()
                // castd counts the connection out as its task ends, just after closing it: the
                // client can see the close first.
                try await eventually("castd to count one client") {
                    try await bystander.status().daemon.clients == 1
                }
            }
        }
    }

    @Test func garbageFramesDoNotHurtAnyone() async throws {
        try await withDaemon { socket, _ in
            let raw = try RawSocket(path: socket)
            try raw.write([0, 0, 0, 4, 0xDE, 0xAD, 0xBE, 0xEF])
            let status = try #require(try await raw.receive())
            #expect(status.callID == 0 && status.status.code == .invalidArgument)
            try await CastdClient.withConnection(socketPath: socket) { client in
                let devices = try await client.listDevices()
                #expect(devices.isEmpty)
            }
        }
    }

    @Test func cancellingAWatchFreesItOnTheDaemon() async throws {
        try await withDaemon { socket, store in
            try await CastdClient.withConnection(socketPath: socket) { client in
                let watching = Task {
                    for try await _ in client.watch() {}
                }
                try await eventually("the watch to register") { store.watcherCount == 1 }
                watching.cancel()
                try await eventually("the watch to be released") { store.watcherCount == 0 }
            }
        }
    }
}

/// A device that breaks the framing rules closes its own link, is reported, and nobody else
/// notices.
struct HostileDeviceTests {
    @Test(arguments: [
        ("a frame of length 0", [UInt8]([0, 0, 0, 0])),
        ("a frame over 64 KiB", [UInt8]([0, 1, 0, 1]) + [UInt8](repeating: 0, count: 16)),
    ])
    func badFrameClosesOnlyThatLink(_ what: String, _ bytes: [UInt8]) async throws {
        try await withHostileDevice(sending: bytes) { hostilePort in
            try await withEmulator { emulator, endpoints in
                let devices = [
                    StaticDevice(name: "Hostile", endpoint: DeviceEndpoint(host: "127.0.0.1", port: hostilePort)),
                    StaticDevice(name: "Good", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port)),
                ]
                try await withDaemon(devices: devices) { socket, store in
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        let error = await #expect(throws: CastdError.self, "\(what)") {
                            try await client.startSession(device: "Hostile")
                        }
                        #expect(error?.code == .unavailable)
                        let hostile = try #require(store.devices().first { $0.friendlyName == "Hostile" })
                        #expect(hostile.linkState == .failed)
                        #expect(hostile.linkError.contains("frame"), "reported: \(hostile.linkError)")
                        // castd and the other device are unaffected.
                        let session = try await client.startSession(device: "Good")
                        #expect(session.state == .started)
                    }
                }
            }
        }
    }
}
