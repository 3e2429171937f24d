import CastClient
import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// `playerctl open file:///…`: cast-mpris opens the file with the user's permissions and hands
/// it to castd, which serves it to the device; a folder is queued.
extension CastMPRISEndToEndTests {
    @Test(.timeLimit(.minutes(3)))
    func playerctlOpenCastsAFileOrAFolderOnThisMachine() async throws {
        try await Self.withSetUp { client, socket, bus, _, id in
            try await withTemporaryDirectory { directory in
                let bridge = try bus.startBridge(socket: socket)
                let player = SessionBus.playerName(deviceID: id)
                _ = try await Self.loadAlbum(client)
                try await bus.waitForPlayer(player, bridge: bridge)

                let film = directory + "/Home Movie.mp4"
                let bytes = Data([0, 0, 0, 0x18] + Array("ftypisom".utf8) + [UInt8](repeating: 7, count: 5000))
                try bytes.write(to: URL(fileURLWithPath: film))
                let opened = try await bus.playerctl([
                    "--player", player, "open", "file://" + directory + "/Home%20Movie.mp4",
                ])
                expectSuccess(opened)
                try await eventually(timeout: .seconds(20), "the file to play, served by castd") {
                    guard let media = try await client.status().media.first?.media else { return false }
                    return media.metadata.title == "Home Movie" && media.contentID.hasPrefix("http://127.0.0.1:")
                }
                let url = try #require(try await client.status().media.first?.media.contentID)
                let fetched = try await run(
                    "/usr/bin/curl", ["-s", "--max-time", "20", "-o", directory + "/copy", url])
                #expect(fetched.status == 0, "\(fetched)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/copy")) == bytes)

                // A folder becomes a queue, in natural order.
                let album = directory + "/Album"
                try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
                for name in ["10 Ten.mp3", "2 Two.mp3"] {
                    try Data([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 100))
                        .write(to: URL(fileURLWithPath: album + "/" + name))
                }
                expectSuccess(try await bus.playerctl(["--player", player, "open", "file://" + album + "/"]))
                try await eventually(timeout: .seconds(20), "the folder to be queued") {
                    let titles = try await client.queue(device: id).items.map(\.media.metadata.title)
                    return titles == ["2 Two", "10 Ten"]
                }

                // A file cast-mpris cannot open: the D-Bus call fails with the reason.
                let missing = try await bus.playerctl(["--player", player, "open", "file://" + directory + "/nope.mp4"])
                #expect(missing.status != 0 && missing.stderr.contains("No such file"), "\(missing)")
            }
        }
    }
}
