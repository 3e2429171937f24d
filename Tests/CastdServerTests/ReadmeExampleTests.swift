import CastClient
import CastDevices
import CastEmulator
import CastTestSupport
import CastdAPI
import Testing

/// The Swift example in README.md ("Writing programs against castd"), kept in step with it
/// (the README's names its socket through CASTD_SOCKET instead of `socket`), run against castd
/// and an emulated device.
struct ReadmeExampleTests {
    func readmeExample(socket: String) async throws -> (
        playing: CastdMediaStatus, firstEvent: CastdEvent?, devices: [String]
    ) {
        var firstEvent: CastdEvent?
        let playing = try await CastdClient.withConnection(socketPath: socket) { client in
            var media = CastdMediaInformation(url: "https://example.com/film.mp4", contentType: "video/mp4")
            media.metadata.title = "Film"
            let playing = try await client.load(media, device: "Living Room TV")
            for try await event in client.watch() {  // a snapshot, then every change, in castd's order
                firstEvent = event
                break
            }
            return playing
        }
        // One call and exit, as castc does: no event loop is started. CastdMethods has every method
        // with its request and response types.
        let status = try await CastdClient.unaryOnce(
            socketPath: socket, CastdMethods.getStatus, Castd_V1_GetStatusRequest())
        return (playing, firstEvent, status.devices.map(\.friendlyName))
    }

    @Test func theReadmesExampleRuns() async throws {
        try await withEmulator { _, endpoints in
            let tv = StaticDevice(
                name: "Living Room TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [tv]) { socket, _ in
                let result = try await readmeExample(socket: socket)
                #expect(result.playing.playerState == .playing && result.playing.media.metadata.title == "Film")
                if case .snapshot? = result.firstEvent?.kind {
                } else {
                    Issue.record("the first event is not the snapshot: \(String(describing: result.firstEvent))")
                }
                #expect(result.devices == ["Living Room TV"])
            }
        }
    }
}
