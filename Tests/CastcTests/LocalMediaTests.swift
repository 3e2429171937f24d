import Testing

@testable import castc

/// What castc takes for a file on this machine, and the order a folder's files are queued in.
struct LocalMediaTests {
    @Test(arguments: [
        ("movie.mp4", true), ("./a/b.mkv", true), ("/srv/x.mp3", true), ("file:///srv/x.mp3", true),
        ("FILE:///srv/x.mp3", true), ("Holiday 2024.mp4", true), ("https://example.com/a.mp4", false),
        ("http://192.168.1.5:8000/song.flac", false), ("rtsp://cam/stream", false),
    ])
    func aLocalFileIsAnythingWithoutAURLScheme(text: String, local: Bool) {
        #expect(LocalMedia.isLocal(text) == local)
    }

    @Test func aFileURLNamesItsPathPercentDecoded() throws {
        #expect(try LocalMedia.path("file:///home/me/My%20Film.mp4") == "/home/me/My Film.mp4")
        #expect(try LocalMedia.path("file://localhost/srv/a.mp3") == "/srv/a.mp3")
        #expect(try LocalMedia.path("./a.mp3") == "./a.mp3")
        let elsewhere = try #require(throws: CastcExit.self) { try LocalMedia.path("file://nas/srv/a.mp3") }
        #expect(elsewhere.code == 66 && elsewhere.line.contains("on nas"))
        #expect(throws: CastcExit.self) { try LocalMedia.path("file:///bad%zz") }
    }

    @Test func naturalOrderPutsTrackTwoBeforeTrackTen() {
        let names = [
            "Track 10.flac", "track 1.flac", "Track 2.flac", "Track 02b.flac", "Intro.flac", "Track 2.flac.bak",
        ]
        #expect(
            names.sorted(by: LocalMedia.naturalOrder) == [
                "Intro.flac", "track 1.flac", "Track 2.flac", "Track 2.flac.bak", "Track 02b.flac", "Track 10.flac",
            ])
        #expect(["b10", "b9", "a100"].sorted(by: LocalMedia.naturalOrder) == ["a100", "b9", "b10"])
    }
}
