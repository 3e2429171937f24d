import CastTestSupport
import CastdAPI
import Foundation
import SwiftProtobuf
import Testing

/// The files beside a local file, handed over with it: subtitles beside a video (SubRip
/// converted to WebVTT by castd), a cover beside an audio file; and a queue item's files let go
/// when it is removed.
extension SystemServiceTests {
    /// A SubRip file as Windows tools write it: a BOM, CRLF, commas in the times.
    static let subRip =
        "\u{FEFF}1\r\n00:00:01,500 --> 00:00:03,000\r\n<i>Hello</i>, world\r\n\r\n2\r\n00:00:04,000 --> 00:00:05,250\r\nBye\r\n"

    @Test func subtitlesBesideAVideoOrGivenAreServedAsWebVTT() async throws {
        try await withDaemon { daemon in
            let folder = daemon.directory
            try Self.mp4Bytes(count: 2000).write(to: URL(fileURLWithPath: folder + "/Film.mp4"))
            try Data(Self.subRip.utf8).write(to: URL(fileURLWithPath: folder + "/Film.srt"))
            try Data("WEBVTT\n\n00:00:02.000 --> 00:00:03.000\nBonjour\n".utf8)
                .write(to: URL(fileURLWithPath: folder + "/Film.fr.vtt"))

            let loaded = try await daemon.castc(["load", folder + "/Film.mp4"])
            #expect(loaded.status == 0, "\(loaded)")
            let status = try #require(try await daemon.status().media.first)
            let tracks = status.media.tracks
            #expect(tracks.map(\.trackID) == [1, 2])
            #expect(tracks.map(\.language) == ["", "fr"])
            #expect(tracks.map(\.contentType) == ["text/vtt", "text/vtt"])
            #expect(tracks.map(\.name) == ["Film", "fr"])
            #expect(status.activeTrackIds == [1])
            let copy = folder + "/fetched.vtt"
            #expect(try await Self.fetch(tracks[0].contentID, to: copy) == 200)
            let vtt = try String(contentsOfFile: copy, encoding: .utf8)
            #expect(vtt.hasPrefix("WEBVTT"), "\(vtt)")
            #expect(vtt.contains("00:00:01.500 --> 00:00:03.000\n<i>Hello</i>, world"), "\(vtt)")
            #expect(!vtt.contains("\r"), "\(vtt)")
            #expect(try await Self.fetch(tracks[1].contentID, to: copy) == 200)
            #expect(try String(contentsOfFile: copy, encoding: .utf8).contains("Bonjour"))

            // Given with --subtitles (its language by --subtitles-lang), those beside are not offered.
            try Data(Self.subRip.utf8).write(to: URL(fileURLWithPath: folder + "/other.srt"))
            let given = try await daemon.castc([
                "load", folder + "/Film.mp4", "--subtitles", folder + "/other.srt", "--subtitles-lang", "de",
            ])
            #expect(given.status == 0, "\(given)")
            let givenTracks = try #require(try await daemon.status().media.first).media.tracks
            #expect(givenTracks.map(\.language) == ["de"] && givenTracks.map(\.name) == ["other"])
            // The first load's subtitles are no longer served.
            #expect(try await Self.fetch(tracks[0].contentID, to: copy) == 404)

            let none = try await daemon.castc(["load", folder + "/Film.mp4", "--no-sidecar-subtitles"])
            #expect(none.status == 0, "\(none)")
            #expect(try #require(try await daemon.status().media.first).media.tracks.isEmpty)

            // Something that is no subtitles: castd says so, and nothing is loaded.
            try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(
                to: URL(fileURLWithPath: folder + "/junk.srt"))
            let junk = try await daemon.castc(["load", folder + "/Film.mp4", "--subtitles", folder + "/junk.srt"])
            #expect(junk.status != 0 && junk.stderr.contains("junk.srt"), "\(junk)")
        }
    }

    @Test func aCoverBesideAnAudioFileIsItsImage() async throws {
        try await withDaemon { daemon in
            let album = daemon.directory + "/Album"
            try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
            let cover = Data([0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0x42, count: 3000))
            try cover.write(to: URL(fileURLWithPath: album + "/Folder.jpg"))
            for name in ["1 One.mp3", "2 Two.mp3"] {
                try Data([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 500))
                    .write(to: URL(fileURLWithPath: album + "/" + name))
            }
            let loaded = try await daemon.castc(["queue", "load", album])
            #expect(loaded.status == 0, "\(loaded)")
            let listed = try await daemon.castc(["queue", "--json"])
            var options = JSONDecodingOptions()
            options.ignoreUnknownFields = true
            let queue = try Castd_V1_Queue(jsonString: listed.stdout, options: options)
            #expect(queue.items.count == 2)
            let copy = daemon.directory + "/fetched"
            for item in queue.items {
                let image = try #require(item.media.metadata.images.first, "\(item.media)")
                #expect(image.url.hasPrefix("http://127.0.0.1:") && image.file.isEmpty, "\(image)")
                #expect(try await Self.fetch(image.url, to: copy) == 200)
                #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == cover)
            }

            // The second item leaves the queue: its file and cover are no longer served; the
            // first's still are.
            let removed = try await daemon.castc(["queue", "remove", "#\(queue.items[1].itemID)"])
            #expect(removed.status == 0, "\(removed)")
            #expect(try await Self.fetch(queue.items[1].media.contentID, to: copy) == 404)
            #expect(try await Self.fetch(queue.items[1].media.metadata.images[0].url, to: copy) == 404)
            #expect(try await Self.fetch(queue.items[0].media.contentID, to: copy) == 200)
            #expect(try await Self.fetch(queue.items[0].media.metadata.images[0].url, to: copy) == 200)

            // An explicit --image wins over the cover.
            let explicit = try await daemon.castc([
                "load", album + "/1 One.mp3", "--image", "https://example.com/art.jpg",
            ])
            #expect(explicit.status == 0, "\(explicit)")
            let images = try #require(try await daemon.status().media.first).media.metadata.images
            #expect(images.map(\.url) == ["https://example.com/art.jpg"])
        }
    }
}

extension SystemServiceTests {
    /// An audio file's tags (written by ffmpeg, as people's files are) become its metadata when
    /// castc gives none; --title still wins.
    @Test func anAudioFilesTagsAreItsMetadata() async throws {
        try await withDaemon { daemon in
            let song = daemon.directory + "/01 track.mp3"
            let made = try await run(
                "/usr/bin/ffmpeg",
                [
                    "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-metadata",
                    "title=Hoppípolla",
                    "-metadata", "artist=Sigur Rós", "-metadata", "album=Takk...", "-metadata", "track=3/11", song,
                ])
            #expect(made.status == 0, "\(made)")
            let loaded = try await daemon.castc(["load", song])
            #expect(loaded.status == 0, "\(loaded)")
            let metadata = try #require(try await daemon.status().media.first).media.metadata
            #expect(metadata.metadataType == .musicTrack)
            #expect(metadata.title == "Hoppípolla" && metadata.artist == "Sigur Rós", "\(metadata)")
            #expect(metadata.albumName == "Takk..." && metadata.trackNumber == 3, "\(metadata)")

            let titled = try await daemon.castc(["load", song, "--title", "Mine"])
            #expect(titled.status == 0, "\(titled)")
            #expect(try #require(try await daemon.status().media.first).media.metadata.title == "Mine")
        }
    }
}
