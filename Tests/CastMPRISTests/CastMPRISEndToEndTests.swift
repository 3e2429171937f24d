import CastClient
import CastDevices
import CastEmulator
import CastMPRIS
import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// cast-mpris as a desktop meets it: a process on a private session bus, castd and an emulated
/// device behind it, and Debian's playerctl and dbus-monitor as the independent clients.
@Suite(.serialized)
struct CastMPRISEndToEndTests {
    /// Three tracks of 200 s by "Band", loaded as a queue; the first plays.
    static func loadAlbum(_ client: CastdClient, device: String = "") async throws -> CastdMediaStatus {
        var load = Castd_V1_QueueLoadRequest()
        load.device = device
        load.items = (1...3).map { number in
            var item = QueueFixture.track(number)
            item.media.metadata.artist = "Band"
            item.media.metadata.albumName = "Album"
            return item
        }
        return try await client.unary(.queueLoad, load, as: CastdMediaStatus.self)
    }

    /// An emulator with a message log, castd with it as "TV", a client, and the session bus.
    static func withSetUp(
        _ body: (CastdClient, _ socket: String, SessionBus, EmulatorMessages, _ deviceID: String) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            var configuration = EmulatorConfiguration()
            configuration.logFile = directory + "/emulator.jsonl"
            try await withEmulator(configuration) { _, endpoints in
                let device = StaticDevice(
                    name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
                try await withDaemon(devices: [device]) { socket, _ in
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        let id = try #require(try await client.listDevices().first?.id)
                        try await SessionBus.with { bus in
                            try await body(client, socket, bus, EmulatorMessages(path: configuration.logFile!), id)
                        }
                    }
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func playerctlSeesThePlayerWithTheDevicesMetadata() async throws {
        try await Self.withSetUp { client, socket, bus, _, id in
            let bridge = try bus.startBridge(socket: socket)
            let player = SessionBus.playerName(deviceID: id)
            // No media session yet: no player.
            try await eventually("cast-mpris to reach castd") { bridge.stderr.contains("connected to castd") }
            #expect(try await bus.players().isEmpty)

            _ = try await Self.loadAlbum(client)
            try await bus.waitForPlayer(player, bridge: bridge)
            let metadata = try await bus.playerctl([
                "--player", player, "metadata", "--format",
                "{{xesam:title}}|{{xesam:artist}}|{{xesam:album}}|{{mpris:length}}|{{mpris:trackid}}",
            ])
            expectSuccess(metadata)
            // playerctl quotes an object path.
            #expect(metadata.stdout == "Track 1|Band|Album|200000000|'/org/castd/track/item1'\n", "\(metadata)")
            let status = try await bus.playerctl(["--player", player, "status"])
            #expect(status.stdout == "Playing\n", "\(status)")
            // playerctl names the player by its bus name, without the instance: castd.
            let name = try await bus.playerctl(["--player", player, "metadata", "--format", "{{playerName}}"])
            #expect(name.stdout == "castd\n", "\(name)")
            let identity = try await bus.playerctl(["--player", player, "metadata", "--format", "{{playerInstance}}"])
            #expect(identity.stdout == player + "\n", "\(identity)")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func playerctlsCommandsReachTheDeviceAsCastMessages() async throws {
        try await Self.withSetUp { client, socket, bus, device, id in
            let bridge = try bus.startBridge(socket: socket)
            let player = SessionBus.playerName(deviceID: id)
            _ = try await Self.loadAlbum(client)
            try await bus.waitForPlayer(player, bridge: bridge)
            func playerctl(_ arguments: String...) async throws {
                let result = try await bus.playerctl(["--player", player] + arguments)
                expectSuccess(result)
            }
            func waitForStatus(_ what: String, _ check: @escaping (CastdMediaStatus) -> Bool) async throws {
                try await eventually(timeout: .seconds(20), what) {
                    guard let media = try await client.status().media.first else { return false }
                    return check(media)
                }
            }
            /// Waits for cast-mpris to show `text` for a playerctl query: it follows castd's events.
            func waitForPlayerctl(_ query: [String], _ text: String) async throws {
                try await eventually(timeout: .seconds(20), "playerctl \(query) to say \(text)") {
                    try await bus.playerctl(["--player", player] + query).stdout == text + "\n"
                }
            }

            try await playerctl("play-pause")
            try await waitForStatus("the pause") { $0.playerState == .paused }
            #expect(device.received(EmulatorMessages.media, type: "PAUSE").count == 1)
            try await waitForPlayerctl(["status"], "Paused")
            try await playerctl("play-pause")
            try await waitForStatus("the resume") { $0.playerState == .playing }
            #expect(device.received(EmulatorMessages.media, type: "PLAY").count == 1)
            try await waitForPlayerctl(["status"], "Playing")

            try await waitForPlayerctl(["metadata", "--format", "{{xesam:title}}"], "Track 1")
            try await playerctl("next")
            try await waitForPlayerctl(["metadata", "--format", "{{xesam:title}}"], "Track 2")
            try await playerctl("previous")
            try await waitForPlayerctl(["metadata", "--format", "{{xesam:title}}"], "Track 1")
            let jumps = device.received(EmulatorMessages.media, type: "QUEUE_UPDATE").compactMap { $0["jump"] as? Int }
            #expect(jumps == [1, -1])

            try await playerctl("pause")
            try await waitForPlayerctl(["status"], "Paused")
            try await playerctl("position", "30")
            try await waitForPlayerctl(["position", "--format", "{{position}}"], "30000000")
            try await playerctl("position", "10+")
            try await waitForPlayerctl(["position", "--format", "{{position}}"], "40000000")
            let seeks = device.received(EmulatorMessages.media, type: "SEEK").compactMap {
                $0["currentTime"] as? Double
            }
            #expect(seeks == [30, 40])

            try await playerctl("volume", "0.4")
            try await eventually(timeout: .seconds(20), "the device's volume to be 0.4") {
                device.received(EmulatorMessages.receiver, type: "SET_VOLUME").contains {
                    ($0["volume"] as? [String: Any])?["level"] as? Double == 0.4
                }
            }
            try await waitForPlayerctl(["volume"], "0.400000")

            try await playerctl("loop", "Playlist")
            try await waitForPlayerctl(["loop"], "Playlist")
            try await playerctl("shuffle", "On")
            try await waitForPlayerctl(["shuffle"], "On")
            let modes = device.received(EmulatorMessages.media, type: "QUEUE_UPDATE").compactMap {
                $0["repeatMode"] as? String
            }
            #expect(modes == ["REPEAT_ALL", "REPEAT_ALL_AND_SHUFFLE"])
            #expect(try await client.status().media.first?.repeatMode == .allAndShuffle)
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func anotherClientsPauseAndSeekReachTheBusAsSignals() async throws {
        try await Self.withSetUp { client, socket, bus, _, id in
            let bridge = try bus.startBridge(socket: socket)
            let player = SessionBus.playerName(deviceID: id)
            _ = try await Self.loadAlbum(client)
            try await bus.waitForPlayer(player, bridge: bridge)
            let monitor = try bus.monitor()
            try await eventually("dbus-monitor to start") { monitor.stdout.contains("NameAcquired") }

            expectSuccess(try await run("castc", ["--socket", socket, "pause"]))
            try await eventually(timeout: .seconds(20), "PropertiesChanged with PlaybackStatus Paused") {
                monitor.stdout.contains("string \"PlaybackStatus\"") && monitor.stdout.contains("string \"Paused\"")
            }
            // That a pause is no jump (no Seeked) is MPRISPropertiesTests' to show: here, castd's
            // time stamps move with the machine's load, and a second of it would look like a seek.
            expectSuccess(try await run("castc", ["--socket", socket, "seek", "50"]))
            try await eventually(timeout: .seconds(20), "Seeked with 50 s") {
                monitor.stdout.contains("member=Seeked") && monitor.stdout.contains("int64 50000000")
            }
            // The properties that did not change are not in the signal: a pause changes
            // PlaybackStatus (and what follows from it), not the Metadata.
            let pauseSignal = monitor.stdout.components(separatedBy: "signal time=").first {
                $0.contains("\"PlaybackStatus\"")
            }
            #expect(pauseSignal?.contains("\"Metadata\"") == false, "\(pauseSignal ?? "")")
            #expect(pauseSignal?.contains("\"Identity\"") == false)
        }
    }

    @Test(.timeLimit(.minutes(4)))
    func playersComeAndGoWithSessionsAndWithCastd() async throws {
        try await withTemporaryDirectory { directory in
            try await withEmulator { _, endpoints in
                let device = StaticDevice(
                    name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
                let socket = directory + "/castd.sock"
                try await SessionBus.with { bus in
                    var player = ""
                    var bridge: ChildProcess?
                    try await withDaemon(devices: [device], socketPath: socket) { socket, _ in
                        try await CastdClient.withConnection(socketPath: socket) { client in
                            let id = try #require(try await client.listDevices().first?.id)
                            player = SessionBus.playerName(deviceID: id)
                            let started = try bus.startBridge(socket: socket)
                            bridge = started
                            _ = try await Self.loadAlbum(client)
                            try await bus.waitForPlayer(player, bridge: started)
                            // The session ends: the player goes. A new one: it is back.
                            _ = try await client.endSession(stopApp: true)
                            try await bus.waitForPlayer(player, present: false, bridge: started)
                            _ = try await Self.loadAlbum(client)
                            try await bus.waitForPlayer(player, bridge: started)
                        }
                    }
                    // castd stops: every player goes, and cast-mpris waits for castd.
                    let running = try #require(bridge)
                    try await bus.waitForPlayer(player, present: false, bridge: running)
                    try await eventually("cast-mpris to notice castd went") { running.stderr.contains("lost castd") }
                    // castd comes back on its socket, and the player with it once a session plays.
                    try await withDaemon(devices: [device], socketPath: socket) { socket, _ in
                        try await CastdClient.withConnection(socketPath: socket) { client in
                            try await eventually(timeout: .seconds(20), "cast-mpris to reconnect") {
                                running.stderr.components(separatedBy: "connected to castd").count == 3
                            }
                            _ = try await Self.loadAlbum(client)
                            try await bus.waitForPlayer(player, bridge: running)
                        }
                    }
                    #expect(running.isRunning)
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func oversizedTitlesAreCutAndSaid() async throws {
        try await Self.withSetUp { client, socket, bus, _, id in
            let bridge = try bus.startBridge(socket: socket)
            let player = SessionBus.playerName(deviceID: id)
            // A title of 1 MiB does not reach a device (a CastV2 message holds 64 KiB): castd
            // refuses the load, and says why.
            var huge = CastdMediaInformation(url: "https://example.com/a.mp3", contentType: "audio/mpeg")
            huge.metadata.title = String(repeating: "x", count: 1 << 20)
            await #expect(throws: CastdError.self) { _ = try await client.load(huge) }
            // A title of 24,000 bytes reaches cast-mpris (the device echoes it in its status): D-Bus
            // clients get 4 KiB of it, and the log says so once.
            var long = CastdMediaInformation(url: "https://example.com/a.mp3", contentType: "audio/mpeg")
            long.metadata.title = String(repeating: "é", count: 12_000)
            _ = try await client.load(long)
            try await bus.waitForPlayer(player, bridge: bridge)
            let title = try await bus.playerctl(["--player", player, "metadata", "xesam:title"])
            expectSuccess(title)
            #expect(title.stdout == String(repeating: "é", count: BusText.maximumBytes / 2) + "\n")
            try await eventually("the log line about the cut title") {
                bridge.stderr.contains("xesam:title is 24000 bytes or holds a NUL")
            }
            _ = try await client.pause()
            try await eventually("the pause to reach playerctl") {
                try await bus.playerctl(["--player", player, "status"]).stdout == "Paused\n"
            }
            #expect(bridge.stderr.components(separatedBy: "xesam:title is 24000 bytes").count == 2, "said once")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func eachDeviceHasAPlayerOfItsOwnThatGoesWithTheDevice() async throws {
        try await withEmulator { _, first in
            try await withEmulator { _, second in
                let devices = [
                    StaticDevice(name: "Kitchen", endpoint: DeviceEndpoint(host: first.host, port: first.port)),
                    StaticDevice(name: "Den", endpoint: DeviceEndpoint(host: second.host, port: second.port)),
                ]
                try await withDaemon(devices: devices) { socket, store in
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        try await SessionBus.with { bus in
                            let bridge = try bus.startBridge(socket: socket)
                            let ids = try await client.listDevices().map(\.id)
                            #expect(ids.count == 2)
                            for id in ids { _ = try await Self.loadAlbum(client, device: id) }
                            let players = ids.map { SessionBus.playerName(deviceID: $0) }
                            for player in players { try await bus.waitForPlayer(player, bridge: bridge) }
                            // Each player is its device: pausing one leaves the other playing.
                            expectSuccess(try await bus.playerctl(["--player", players[0], "pause"]))
                            try await eventually("the first device to pause") {
                                try await client.status().media.first { $0.deviceID == ids[0] }?.playerState == .paused
                            }
                            #expect(try await bus.playerctl(["--player", players[1], "status"]).stdout == "Playing\n")
                            // A device that goes (as castd's registry says when mDNS loses it) takes its
                            // player with it; the other stays.
                            store.removeDevice(id: ids[0])
                            try await bus.waitForPlayer(players[0], present: false, bridge: bridge)
                            #expect(try await bus.players() == [players[1]])
                            try await eventually("the log line for the player that went") {
                                bridge.stderr.contains("left the session bus")
                            }
                        }
                    }
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func aCallTheDeviceRefusesIsADBusErrorWithCastdsStatus() async throws {
        var configuration = EmulatorConfiguration()
        configuration.fixedVolume = true
        try await withEmulator(configuration) { _, endpoints in
            let device = StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [device]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    try await SessionBus.with { bus in
                        let bridge = try bus.startBridge(socket: socket)
                        let id = try #require(try await client.listDevices().first?.id)
                        _ = try await Self.loadAlbum(client)
                        try await bus.waitForPlayer(SessionBus.playerName(deviceID: id), bridge: bridge)
                        // The device's volume is fixed: it refuses a level. The D-Bus caller gets
                        // castd's status as the error's name and castd's words as its message.
                        let set = try await run(
                            SessionBus.dbusSend,
                            [
                                "--session", "--print-reply", "--dest=" + MPRISBusName.name(forDeviceID: id),
                                "/org/mpris/MediaPlayer2", "org.freedesktop.DBus.Properties.Set",
                                "string:org.mpris.MediaPlayer2.Player", "string:Volume", "variant:double:0.4",
                            ], environment: bus.environment)
                        #expect(set.status != 0, "\(set)")
                        #expect(set.stderr.hasPrefix("Error org.castd.Error."), "\(set)")
                        #expect(set.stderr.contains("fixed") || set.stderr.contains("BAD_PARAMETER"), "\(set)")
                        // An unknown property is the specification's error, not a crash.
                        let bad = try await run(
                            SessionBus.dbusSend,
                            [
                                "--session", "--print-reply", "--dest=" + MPRISBusName.name(forDeviceID: id),
                                "/org/mpris/MediaPlayer2", "org.freedesktop.DBus.Properties.Set",
                                "string:org.mpris.MediaPlayer2.Player", "string:PlaybackStatus",
                                "variant:string:Playing",
                            ], environment: bus.environment)
                        #expect(bad.stderr.hasPrefix("Error org.freedesktop.DBus.Error.PropertyReadOnly"), "\(bad)")
                        #expect(bridge.isRunning)
                    }
                }
            }
        }
    }
}
