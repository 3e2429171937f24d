import CastdAPI
import Foundation
import Testing

@testable import CastClient

/// What a client takes for a file on this machine, the order a folder's files are queued in,
/// and the files offered beside them: subtitles beside a video, a cover beside an audio file.
struct LocalFilesTests {
    @Test(arguments: [
        ("movie.mp4", true), ("./a/b.mkv", true), ("/srv/x.mp3", true), ("file:///srv/x.mp3", true),
        ("FILE:///srv/x.mp3", true), ("Holiday 2024.mp4", true), ("https://example.com/a.mp4", false),
        ("http://192.168.1.5:8000/song.flac", false), ("rtsp://cam/stream", false),
    ])
    func aLocalFileIsAnythingWithoutAURLScheme(text: String, local: Bool) {
        #expect(LocalFiles.isLocal(text) == local)
    }

    @Test func aFileURLNamesItsPathPercentDecoded() throws {
        #expect(try LocalFiles.path("file:///home/me/My%20Film.mp4") == "/home/me/My Film.mp4")
        #expect(try LocalFiles.path("file://localhost/srv/a.mp3") == "/srv/a.mp3")
        #expect(try LocalFiles.path("./a.mp3") == "./a.mp3")
        let elsewhere = try #require(throws: LocalFileError.self) { try LocalFiles.path("file://nas/srv/a.mp3") }
        #expect(elsewhere.message.contains("on nas"))
        #expect(throws: LocalFileError.self) { try LocalFiles.path("file:///bad%zz") }
    }

    @Test func naturalOrderPutsTrackTwoBeforeTrackTen() {
        let names = [
            "Track 10.flac", "track 1.flac", "Track 2.flac", "Track 02b.flac", "Intro.flac", "Track 2.flac.bak",
        ]
        #expect(
            names.sorted(by: LocalFiles.naturalOrder) == [
                "Intro.flac", "track 1.flac", "Track 2.flac", "Track 2.flac.bak", "Track 02b.flac", "Track 10.flac",
            ])
        #expect(["b10", "b9", "a100"].sorted(by: LocalFiles.naturalOrder) == ["a100", "b9", "b10"])
    }

    @Test func subtitlesBesideAVideoAreItsOwnFirstThenByLabel() {
        let names = [
            "Movie.mp4", "Movie.srt", "movie.fr.srt", "Movie.en.vtt", "Movie.pt-BR.srt", "Movie.forced.en.srt",
            "Movie.SDH.srt", "Movie 2.srt", "Movies.srt", "Other.srt", "Movie.txt", "Movie.en.ass",
        ]
        let found = LocalFiles.sidecarSubtitles(for: "Movie.mp4", among: names)
        #expect(
            found.map(\.path) == [
                "Movie.srt", "Movie.en.vtt", "Movie.forced.en.srt", "movie.fr.srt", "Movie.pt-BR.srt", "Movie.SDH.srt",
            ])
        #expect(found.map(\.language) == ["", "en", "en", "fr", "pt-BR", ""])
        #expect(found.map(\.name) == ["", "en", "forced.en", "fr", "pt-BR", "SDH"])
        #expect(LocalFiles.sidecarSubtitles(for: "noextension", among: names).isEmpty)
        let many = (1...40).map { "Movie.part\($0).srt" }
        #expect(LocalFiles.sidecarSubtitles(for: "Movie.mkv", among: many).count == LocalFiles.maximumSidecars)
    }

    @Test(arguments: [
        ("en", true), ("fra", true), ("pt-BR", true), ("zh-Hant", true), ("SDH", false), ("forced", false),
        ("e", false), ("en-", false), ("1080p", false),
    ])
    func languageTags(text: String, isTag: Bool) {
        #expect(LocalFiles.isLanguageTag(text) == isTag)
    }

    @Test func aCoverIsCoverThenFolderThenFrontInAnyCase() {
        #expect(LocalFiles.cover(among: ["Front.PNG", "Folder.jpg", "01.flac"]) == "Folder.jpg")
        #expect(LocalFiles.cover(among: ["front.png", "01.flac"]) == "front.png")
        #expect(LocalFiles.cover(among: ["COVER.JPG", "folder.jpg"]) == "COVER.JPG")
        #expect(LocalFiles.cover(among: ["back.jpg", "01.flac"]) == nil)
    }

    @Test func itemsFindTheFilesBesideOnDisk() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("castd-local-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["Film.mkv", "Film.de.srt", "Song.flac", "cover.jpg"] {
            #expect(FileManager.default.createFile(atPath: folder + "/" + name, contents: Data([0])))
        }
        let items = LocalFiles.items([
            .file(folder + "/Film.mkv"), .file(folder + "/Song.flac"), .url("https://example.com/a.mp4"),
        ])
        #expect(
            items[0]
                == LocalItemFiles(
                    media: folder + "/Film.mkv",
                    subtitles: [LocalSubtitles(path: folder + "/Film.de.srt", language: "de", name: "de")]))
        #expect(items[1] == LocalItemFiles(media: folder + "/Song.flac", cover: folder + "/cover.jpg"))
        #expect(items[2] == LocalItemFiles(media: nil))
        #expect(LocalFiles.items([.file(folder + "/Film.mkv")], companions: false)[0].subtitles.isEmpty)
    }

    @Test func pastCastdsBoundTheItemsOwnFilesGoFirst() {
        let count = CastdFileHandover.maximumUntaken - 10
        let items = (0..<count).map { LocalItemFiles(media: "/m/\($0).flac", cover: "/m/cover.jpg") }
        let bounded = LocalFiles.withinBound(items)
        #expect(bounded.flatMap(\.paths).count == CastdFileHandover.maximumUntaken)
        #expect(bounded.prefix(10).allSatisfy { $0.cover != nil })
        #expect(bounded.dropFirst(10).allSatisfy { $0.cover == nil && $0.media != nil })
    }

    @Test func handlesNameTheFilesTracksAndImageOfTheMedia() {
        var media = CastdMediaInformation()
        media.tracks = [CastdMediaTrack(subtitlesID: 1, url: "https://example.com/en.vtt", language: "en")]
        let handles = LocalItemHandles(
            media: "m",
            subtitles: [.init(handle: "s1", language: "de", name: "de"), .init(handle: "s2", language: "", name: "")],
            cover: "c")
        #expect(handles.apply(to: &media) == [2, 3])
        #expect(media.file == "m")
        #expect(media.tracks.map(\.file) == ["", "s1", "s2"])
        #expect(media.tracks.map(\.language) == ["en", "de", ""])
        #expect(media.metadata.images.map(\.file) == ["c"])
        var withImage = CastdMediaInformation()
        var image = CastdImage()
        image.url = "https://example.com/a.jpg"
        withImage.metadata.images = [image]
        LocalItemHandles(cover: "c").apply(to: &withImage)
        #expect(withImage.metadata.images.map(\.file) == [""])
    }
}
