import CastClient

try await CastdClient.withConnection { client in  // $CASTD_SOCKET, else castd's usual socket
    var media = CastdMediaInformation(url: "https://example.com/film.mp4", contentType: "video/mp4")
    media.metadata.title = "Film"
    let playing = try await client.load(media, device: "Living Room TV")
    print(playing.playerState)  // .playing, once the device says so
    for try await event in client.watch() {  // a snapshot, then every change, in castd's order
        print(event)
        if case .media(let status) = event.kind, status.playerState == .idle { break }  // it ended
    }
}
// One call and exit, as castc does: no event loop is started. CastdMethods has every method
// with its request and response types.
let status = try await CastdClient.unaryOnce(CastdMethods.getStatus, Castd_V1_GetStatusRequest())
print(status.devices.map(\.friendlyName))
