import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// A local file as a TV plays it: the emulator, published as a real device is (so it fetches
/// media, `--fetch-media`), reads the start of the file from castd's media server at LOAD, and
/// reads again where a seek lands; castd answers each with the bytes asked for.
extension EndToEndTests {
    /// The emulator's `{"fetch": …}` records (its `--log`), in order.
    static func fetches(_ setup: Setup) -> [[String: Any]] {
        let text = (try? String(contentsOfFile: setup.emulatorLog, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["fetch"] as? [String: Any]
        }
    }

    @Test func theDeviceFetchesALocalFileFromCastd() async throws {
        try await withSetup { setup in
            let movie = setup.directory + "/movie.mp4"
            // A 4 MiB file whose bytes say where they are: a range fetched can be checked.
            let size = 4 << 20
            try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 / 4096) }).write(to: URL(fileURLWithPath: movie))
            let loaded = try await setup.castc(["load", movie, "--duration", "100", "--device", setup.deviceName])
            #expect(loaded.status == 0, "\(loaded)")
            let url = try #require(try await setup.status().media.first?.media.contentID)
            #expect(url.hasPrefix("http://127.0.0.1:"), "\(url)")

            // At LOAD, the start, from castd's server: 206 and 64 KiB.
            let first = try #require(
                Self.fetches(setup).first { $0["url"] as? String == url }, "\(Self.fetches(setup))")
            #expect(first["range"] as? String == "bytes=0-65535")
            #expect(first["status"] as? Int == 206 && first["bytes"] as? Int == 65536, "\(first)")
            #expect(first["size"] as? Int == size, "\(first)")

            // A seek to 50 s of 100: a ranged read at the middle of the file.
            let sought = try await setup.castc(["seek", "50", "--device", setup.deviceName])
            #expect(sought.status == 0, "\(sought)")
            // Where the seek landed, give or take the moment the device took: 50 s to 51 s.
            let landed = (size / 2)...(size / 2 + size / 100)
            func offset(_ record: [String: Any]) -> Int? {
                (record["range"] as? String)?.dropFirst("bytes=".count).split(separator: "-").first.flatMap { Int($0) }
            }
            try await eventually("the device to read where the seek landed") {
                Self.fetches(setup).contains { record in
                    record["purpose"] as? String == "seek" && record["status"] as? Int == 206
                        && offset(record).map(landed.contains) == true
                }
            }
        }
    }

    /// A folder of three episodes, one with subtitles beside it, queued: the device fetches the
    /// first one's start and its subtitles (WebVTT, converted by castd from SubRip), then the
    /// next one's start when the queue moves on.
    @Test func theDeviceFetchesAQueuedFolderAndItsSubtitlesFromCastd() async throws {
        try await withSetup { setup in
            let show = setup.directory + "/Show"
            try FileManager.default.createDirectory(atPath: show, withIntermediateDirectories: true)
            for episode in 1...3 {
                try Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* episode) })
                    .write(to: URL(fileURLWithPath: show + "/Episode \(episode).mp4"))
            }
            try Data("1\r\n00:00:01,000 --> 00:00:02,000\r\nHello\r\n".utf8)
                .write(to: URL(fileURLWithPath: show + "/Episode 1.en.srt"))
            let loaded = try await setup.castc(["queue", "load", show, "--device", setup.deviceName])
            #expect(loaded.status == 0, "\(loaded)")
            let media = try #require(try await setup.status().media.first).media
            #expect(media.metadata.title == "Episode 1")
            let track = try #require(media.tracks.first, "\(media)")
            #expect(track.language == "en" && track.contentType == "text/vtt")

            try await eventually("the device to fetch the first episode's start and its subtitles") {
                let records = Self.fetches(setup)
                return records.contains {
                    $0["url"] as? String == media.contentID && $0["purpose"] as? String == "load"
                        && $0["status"] as? Int == 206
                }
                    && records.contains {
                        $0["url"] as? String == track.contentID && $0["purpose"] as? String == "textTrack"
                            && $0["status"] as? Int == 200
                    }
            }
            let next = try await setup.castc(["queue", "next", "--device", setup.deviceName])
            #expect(next.status == 0, "\(next)")
            let second = try #require(try await setup.status().media.first).media
            #expect(second.metadata.title == "Episode 2" && second.contentID != media.contentID)
            try await eventually("the device to fetch the second episode's start") {
                Self.fetches(setup).contains {
                    $0["url"] as? String == second.contentID && $0["purpose"] as? String == "load"
                        && $0["status"] as? Int == 206
                }
            }
        }
    }
}
