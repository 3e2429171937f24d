import CastClient
import CastDevices
import CastEmulator
import CastMPRIS
import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// Texts sd-bus refuses, end to end: a device's title and name with Unicode noncharacters
/// (which castd's JSON reader accepts), read by playerctl, and a castd error that carries one,
/// answered to the D-Bus caller at once.
@Suite(.serialized)
struct CastMPRISTextTests {
    /// U+FFFF, U+FFFE, U+FDD0, U+FDEF, U+1FFFE, U+10FFFF: every kind sd-bus refuses.
    /// (By value: Swift's string literals refuse U+FFFE and U+FFFF.)
    static let refused = String(
        String.UnicodeScalarView(
            [0xFFFF, 0xFFFE, 0xFDD0, 0xFDEF, 0x1FFFE, 0x10FFFF].map { Unicode.Scalar(UInt32($0))! }))
    static let uffff = String(Unicode.Scalar(0xFFFF as UInt32)!)
    static let replaced = String(repeating: "\u{FFFD}", count: 6)

    @Test(.timeLimit(.minutes(3)))
    func noncharactersReachDBusClientsAsReplacementCharacters() async throws {
        var configuration = EmulatorConfiguration()
        configuration.fixedVolume = true
        configuration.name = "TV" + Self.refused
        try await withEmulator(configuration) { _, endpoints in
            let device = StaticDevice(
                name: "TV" + Self.refused, endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [device]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    try await SessionBus.with { bus in
                        let bridge = try bus.startBridge(socket: socket)
                        let id = try #require(try await client.listDevices().first?.id)
                        let player = SessionBus.playerName(deviceID: id)
                        var media = CastdMediaInformation(url: "https://example.com/a.mp3", contentType: "audio/mpeg")
                        media.metadata.title = "A" + Self.refused + "Z"
                        media.metadata.artist = "B" + Self.uffff
                        media.metadata.albumName = "C" + String(Unicode.Scalar(0xFDD0 as UInt32)!)
                        _ = try await client.load(media)
                        try await bus.waitForPlayer(player, bridge: bridge)
                        // The whole player reads (GetAll), with U+FFFD where sd-bus refuses.
                        let metadata = try await bus.playerctl([
                            "--player", player, "metadata", "--format",
                            "{{xesam:title}}|{{xesam:artist}}|{{xesam:album}}",
                        ])
                        expectSuccess(metadata)
                        #expect(metadata.stdout == "A\(Self.replaced)Z|B\u{FFFD}|C\u{FFFD}\n", "\(metadata)")
                        let status = try await bus.playerctl(["--player", player, "status"])
                        #expect(status.stdout == "Playing\n", "\(status)")
                        // Changes reach clients too (PropertiesChanged).
                        _ = try await client.pause()
                        try await eventually("the pause to reach playerctl") {
                            try await bus.playerctl(["--player", player, "status"]).stdout == "Paused\n"
                        }

                        // The device refuses a volume (it is fixed), and castd's message names the
                        // device, noncharacters and all: the caller gets the error at once, not
                        // after its 25 s timeout.
                        let clock = ContinuousClock()
                        let start = clock.now
                        let set = try await run(
                            SessionBus.dbusSend,
                            [
                                "--session", "--print-reply", "--dest=" + MPRISBusName.name(forDeviceID: id),
                                "/org/mpris/MediaPlayer2", "org.freedesktop.DBus.Properties.Set",
                                "string:org.mpris.MediaPlayer2.Player", "string:Volume", "variant:double:0.4",
                            ], environment: bus.environment)
                        let elapsed = clock.now - start
                        #expect(set.status != 0, "\(set)")
                        #expect(set.stderr.hasPrefix("Error org.castd.Error.FAILED_PRECONDITION"), "\(set)")
                        #expect(set.stderr.contains("TV\(Self.replaced) has a fixed volume"), "\(set)")
                        #expect(elapsed < Duration.seconds(10).scaledForTests, "\(elapsed)")
                        #expect(!bridge.stderr.contains("Invalid argument"), "\(bridge.stderr)")
                        #expect(bridge.isRunning)
                    }
                }
            }
        }
    }
}
