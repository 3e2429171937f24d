import CastClient
import CastDevices
import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import Testing

@testable import castc

/// castc's load and queue options as the device receives them: each command's call goes
/// through castd to cast-emulator, and the emulator's message log shows the JSON that arrived.
@Suite struct LoadOptionsOnTheWireTests {
    /// The media-namespace requests of `type` the emulator received, in order.
    func received(_ type: String, in log: String) throws -> [JSONValue] {
        try log.split(separator: "\n").map { try JSONValue.parse(String($0)) }.filter {
            $0["direction"]?.stringValue == "in" && $0["namespace"]?.stringValue == "urn:x-cast:com.google.cast.media"
                && $0["payload"]?["type"]?.stringValue == type
        }.compactMap { $0["payload"] }
    }

    /// Runs `body` with a client of a castd whose one device is an emulator, then returns the
    /// emulator's message log.
    func withDevice(_ body: (CastdClient) async throws -> Void) async throws -> String {
        try await withTemporaryDirectory { directory in
            var configuration = EmulatorConfiguration()
            configuration.logFile = directory + "/messages.jsonl"
            try await withEmulator(configuration) { _, endpoints in
                let device = StaticDevice(
                    name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
                try await withDaemon(devices: [device]) { socket, _ in
                    try await CastdClient.withConnection(socketPath: socket) { try await body($0) }
                }
            }
            return try String(contentsOfFile: directory + "/messages.jsonl", encoding: .utf8)
        }
    }

    @Test func studioReleaseDateAndAdClipsReachTheDevice() async throws {
        let command = try parse(
            [
                "load", "https://example.com/movie.mp4", "--title", "The Movie", "--studio", "Studio",
                "--release-date", "2019-10-04",
                "--ad-break", "pre:vast:https://ads.example.com/tag?sz=640x480",
                "--ad-break", "pre:https://ads.example.com/clip.mp4:15:5",
                "--ad-title", "Sponsor", "--ad-title", "Brand", "--ad-poster", "https://example.com/ad.jpg",
            ],
            as: LoadCommand.self)
        let log = try await withDevice { client in
            let status = try await command.call().send(client)
            // The device plays the pre-roll first: the VAST clip.
            #expect(status.breakStatus.breakClipID == "clip-1", "\(status.breakStatus)")
        }
        let load = try #require(try received("LOAD", in: log).first)
        let metadata = try #require(load["media"]?["metadata"])
        #expect(metadata["metadataType"]?.intValue == 1)  // MOVIE
        #expect(metadata["studio"]?.stringValue == "Studio")
        #expect(metadata["releaseDate"]?.stringValue == "2019-10-04")
        let clips = try #require(load["media"]?["breakClips"]?.arrayValue)
        #expect(clips.count == 2)
        #expect(clips[0]["vastAdsRequest"]?["adTagUrl"]?.stringValue == "https://ads.example.com/tag?sz=640x480")
        #expect(clips[0]["contentId"] == nil && clips[0]["contentUrl"] == nil)
        #expect(clips[0]["title"]?.stringValue == "Sponsor")
        #expect(clips[0]["posterUrl"]?.stringValue == "https://example.com/ad.jpg")
        #expect(clips[1]["contentId"]?.stringValue == "https://ads.example.com/clip.mp4")
        #expect(clips[1]["title"]?.stringValue == "Brand" && clips[1]["whenSkippable"]?.doubleValue == 5)
        #expect(clips[1]["posterUrl"]?.stringValue == "https://example.com/ad.jpg")
        let breaks = try #require(load["media"]?["breaks"]?.arrayValue)
        #expect(breaks.first?["breakClipIds"] == ["clip-1", "clip-2"])
    }

    @Test func eachQueueItemsAutoplayStartAndPreloadReachTheDevice() async throws {
        let load = try parse(
            [
                "queue", "load", "https://x.org/a.mp3", "https://x.org/b.mp3", "https://x.org/c.mp3",
                "--item-autoplay", "on", "--item-autoplay", "off", "--item-autoplay", "on",
                "--item-start", "0", "--item-start", "1:30", "--item-start", "5", "--item-preload", "20",
            ],
            as: QueueLoadCommand.self)
        let add = try parse(
            ["queue", "add", "https://x.org/d.mp3", "--item-start", "2:00", "--item-autoplay", "off"],
            as: QueueAddCommand.self)
        let log = try await withDevice { client in
            let loaded = try await load.call().send(client)
            #expect(loaded.items.count == 3)
            let added = try await add.call(ids: []).send(client)
            #expect(added.items.count == 4)
        }
        let items = try #require(try received("QUEUE_LOAD", in: log).first?["items"]?.arrayValue)
        #expect(items.map { $0["autoplay"]?.boolValue } == [true, false, true])
        #expect(items.map { $0["startTime"]?.doubleValue ?? 0 } == [0, 90, 5])
        #expect(items.map { $0["preloadTime"]?.doubleValue } == [20, 20, 20])
        let inserted = try #require(try received("QUEUE_INSERT", in: log).first?["items"]?.arrayValue)
        #expect(inserted.count == 1)
        #expect(inserted.first?["startTime"]?.doubleValue == 120 && inserted.first?["autoplay"]?.boolValue == false)
        #expect(inserted.first?["preloadTime"] == nil)
    }
}
