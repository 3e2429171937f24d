import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import Testing

/// A device that fetches its media (`fetchMedia`), against a real HTTP server on 127.0.0.1
/// (MediaTestServer, a Python process that logs each request and its Range).
///
/// The emulator's clock is manual: reading onward paces itself on it, so a test moves time only
/// while the reader sleeps (it is one of the clock's sleepers then) and sees one read per step.
@Suite("Media fetching (a real HTTP server)")
struct MediaFetchTests {
    /// 1000 chunks of 64 KiB: with a duration of 1000 s, one chunk per second of playback.
    static let size = 65_536_000

    static func media(_ url: String, duration: Double = 1000, extra: [String: JSONValue] = [:]) -> JSONValue {
        var fields: [String: JSONValue] = [
            "contentId": .string(url), "contentType": "video/mp4", "streamType": "BUFFERED",
            "duration": .number(duration),
        ]
        for (key, value) in extra { fields[key] = value }
        return .object(fields)
    }

    /// An emulator that fetches its media, on a manual clock, with a sender connected to the
    /// Default Media Receiver.
    static func withFetchingDevice<T>(
        logFile: String? = nil, timeout: Duration = .seconds(5),
        _ body: (CastDeviceEmulator, ManualEmulatorClock, RawCastSender, String) async throws -> T
    ) async throws -> T {
        var (configuration, clock) = manualClockConfiguration()
        configuration.fetchMedia = true
        configuration.mediaFetchTimeout = timeout
        configuration.logFile = logFile
        return try await withEmulator(configuration) { emulator, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launchMediaReceiver()
            return try await body(emulator, clock, sender, transportID)
        }
    }

    /// LOAD and its reply (LOAD_FAILED or MEDIA_STATUS), whatever it is.
    static func load(
        _ sender: RawCastSender, _ transportID: String, _ media: JSONValue, requestID: Int = 800,
        extra: [String: JSONValue] = [:]
    ) async throws -> JSONValue {
        var request: [String: JSONValue] = ["type": "LOAD", "requestId": .number(Double(requestID)), "media": media]
        for (key, value) in extra { request[key] = value }
        try await sender.media(transportID, .object(request))
        return try await sender.reply(to: requestID)
    }

    @Test("A LOAD of a reachable URL fetches bytes=0-65535 first (BUFFERING meanwhile), then plays")
    func reachableLoad() async throws {
        try await MediaTestServer.with { server in
            try await Self.withFetchingDevice { emulator, _, sender, transportID in
                let path = "/media/\(Self.size)/movie.mp4"
                try await sender.media(
                    transportID, ["type": "LOAD", "requestId": 800, "media": Self.media(server.url(path))])
                let buffering = try await sender.next(timeout: .seconds(15), "the BUFFERING broadcast") { _, payload in
                    payload["type"] == "MEDIA_STATUS" && payload["requestId"] == 0
                }
                #expect(buffering.payload.firstStatus?["playerState"] == "BUFFERING")
                let reply = try await sender.reply(to: 800)
                #expect(reply["type"] == "MEDIA_STATUS")
                #expect(reply.firstStatus?["playerState"] == "PLAYING")
                #expect(server.requests(for: path).first == .init(method: "GET", path: path, range: "bytes=0-65535"))

                let state = await emulator.state()
                let record = try #require(state.fetches.first)
                #expect(record.purpose == .load)
                #expect(record.range == "bytes=0-65535")
                #expect(record.status == 206)
                #expect(record.bytes == 65_536)
                #expect(record.size == Int64(Self.size))
                #expect(record.error == nil)
                #expect(record.mediaSessionID == reply.firstStatus?["mediaSessionId"]?.intValue.map(Int.init))
                #expect(state.loads.last?.result == .loaded)
            }
        }
    }

    @Test("A LOAD of an unreachable URL (a refused port) fails: IDLE ERROR, LOAD_FAILED, detailedErrorCode 103")
    func unreachableLoad() async throws {
        try await withRefusingTCPPort { port in
            try await Self.withFetchingDevice { emulator, _, sender, transportID in
                let url = "http://127.0.0.1:\(port)/movie.mp4"
                let reply = try await Self.load(sender, transportID, Self.media(url))
                #expect(reply["type"] == "LOAD_FAILED")
                #expect(reply["detailedErrorCode"] == 103)
                #expect(reply["itemId"]?.intValue != nil)
                let status = try await sender.mediaStatus(transportID, requestID: 801)
                #expect(status["status"] == [])
                let state = await emulator.state()
                #expect(state.loads.last?.result == .loadFailed)
                let record = try #require(state.fetches.last)
                #expect(record.url == url)
                #expect(record.status == nil)
                #expect(record.error?.contains("cannot connect") == true)
            }
        }
    }

    @Test("A LOAD whose URL answers 404 fails with LOAD_FAILED 103, after the IDLE ERROR broadcast")
    func notFound() async throws {
        try await MediaTestServer.with { server in
            try await Self.withFetchingDevice { emulator, _, sender, transportID in
                let path = "/status/404/movie.mp4"
                try await sender.media(
                    transportID, ["type": "LOAD", "requestId": 800, "media": Self.media(server.url(path))])
                let idle = try await sender.next(timeout: .seconds(15), "the IDLE broadcast") { _, payload in
                    payload["requestId"] == 0 && payload.firstStatus?["playerState"] == "IDLE"
                }
                #expect(idle.payload.firstStatus?["idleReason"] == "ERROR")
                let reply = try await sender.reply(to: 800)
                #expect(reply["type"] == "LOAD_FAILED")
                #expect(reply["detailedErrorCode"] == 103)
                #expect(server.requests(for: path).map(\.range) == ["bytes=0-65535"])
                let record = try #require(await emulator.state().fetches.last)
                #expect(record.status == 404)
                #expect(record.error == "HTTP 404")
            }
        }
    }

    @Test("No answer within the device's timeout fails the LOAD with LOAD_FAILED 103")
    func timeout() async throws {
        try await MediaTestServer.with { server in
            try await Self.withFetchingDevice(timeout: .milliseconds(300)) { emulator, _, sender, transportID in
                let reply = try await Self.load(sender, transportID, Self.media(server.url("/slow/5/movie.mp4")))
                #expect(reply["type"] == "LOAD_FAILED")
                #expect(reply["detailedErrorCode"] == 103)
                #expect(await emulator.state().fetches.last?.error?.contains("no answer within") == true)
            }
        }
    }

    @Test("Text tracks are fetched whole; one that cannot be fetched fails the LOAD")
    func textTracks() async throws {
        try await MediaTestServer.with { server in
            try await Self.withFetchingDevice { emulator, _, sender, transportID in
                let tracks: JSONValue = [
                    ["trackId": 1, "type": "TEXT", "trackContentId": .string(server.url("/text/en.vtt"))],
                    ["trackId": 2, "type": "TEXT", "trackContentId": .string(server.url("/text/fr.vtt"))],
                    ["trackId": 3, "type": "AUDIO", "trackContentId": .string(server.url("/text/audio.mp4"))],
                ]
                let movie = server.url("/media/\(Self.size)/movie.mp4")
                let reply = try await Self.load(
                    sender, transportID, Self.media(movie, extra: ["tracks": tracks]), extra: ["activeTrackIds": [1]])
                #expect(reply.firstStatus?["playerState"] == "PLAYING")
                #expect(server.requests(for: "/text/en.vtt") == [.init(method: "GET", path: "/text/en.vtt")])
                #expect(server.requests(for: "/text/fr.vtt").count == 1)
                #expect(server.requests(for: "/text/audio.mp4").isEmpty)
                let records = await emulator.state().fetches.filter { $0.purpose == .textTrack }
                #expect(records.map(\.status) == [200, 200])
                #expect(records.allSatisfy { $0.range == nil && $0.bytes > 0 })

                let broken: JSONValue = [
                    ["trackId": 1, "type": "TEXT", "trackContentId": .string(server.url("/status/404/en.vtt"))]
                ]
                let failed = try await Self.load(
                    sender, transportID, Self.media(movie, extra: ["tracks": broken]), requestID: 801)
                #expect(failed["type"] == "LOAD_FAILED")
                #expect(failed["detailedErrorCode"] == 103)
            }
        }
    }

    @Test(
        "A SEEK (and a LOAD's currentTime) reads 64 KiB at the offset the position maps to: size × position / duration")
    func seek() async throws {
        try await MediaTestServer.with { server in
            try await Self.withFetchingDevice { emulator, _, sender, transportID in
                let path = "/media/\(Self.size)/movie.mp4"
                let loaded = try await Self.load(
                    sender, transportID, Self.media(server.url(path)), extra: ["autoplay": false])
                #expect(loaded.firstStatus?["playerState"] == "PAUSED")
                let session = try #require(loaded.firstStatus?["mediaSessionId"]?.intValue)
                _ = try await sender.mediaCommand(
                    transportID, "SEEK", mediaSessionID: session, requestID: 801, extra: ["currentTime": 250])
                // 65 536 000 × 250 / 1000
                let range = "bytes=16384000-16449535"
                try await CastTestSupport.eventually("the seek's read") {
                    server.requests(for: path).contains { $0.range == range }
                }
                try await CastTestSupport.eventually("the seek's record") {
                    await emulator.state().fetches.contains { $0.purpose == .seek && $0.range == range }
                }
                let record = try #require(await emulator.state().fetches.last)
                #expect(record.status == 206)
                #expect(record.bytes == 65_536)
                // Paused: nothing more is read.
                try await CastTestSupport.eventually("the reader to stop") { await !emulator.state().isFetchingMedia }
                #expect(server.requests(for: path).map(\.range) == ["bytes=0-65535", range])

                // A LOAD that starts later reads there once it has the content's size.
                let later = "/media/\(Self.size)/later.mp4"
                _ = try await Self.load(
                    sender, transportID, Self.media(server.url(later)), requestID: 802,
                    extra: ["autoplay": false, "currentTime": 500])
                try await CastTestSupport.eventually("the read at the start position") {
                    server.requests(for: later).map(\.range) == ["bytes=0-65535", "bytes=32768000-32833535"]
                }
            }
        }
    }

    @Test("While PLAYING the device reads on, 64 KiB at the playback rate; PAUSE stops it, PLAY goes on")
    func readsOnward() async throws {
        try await MediaTestServer.with { server in
            try await Self.withFetchingDevice { emulator, clock, sender, transportID in
                let path = "/media/\(Self.size)/movie.mp4"
                let loaded = try await Self.load(sender, transportID, Self.media(server.url(path)))
                let session = try #require(loaded.firstStatus?["mediaSessionId"]?.intValue)
                func ranges() -> [String?] { server.requests(for: path).map(\.range) }
                func expected(_ count: Int) -> [String?] {
                    (0..<count).map { "bytes=\($0 * 65_536)-\($0 * 65_536 + 65_535)" }
                }
                /// One second of playback (one chunk) at a time, each while the reader sleeps
                /// (it and the end-of-media timer are the clock's sleepers), having recorded
                /// every read the server saw; until `count` reads, the last one done.
                func play(until count: Int) async throws {
                    try await CastTestSupport.eventually("\(count) reads") {
                        let recorded = await emulator.state().fetches.count
                        let settled = clock.sleeperCount >= 2 && recorded == ranges().count
                        if settled, ranges().count >= count { return true }
                        if settled { clock.advance(by: .seconds(1)) }
                        return false
                    }
                }
                try await play(until: 4)
                #expect(ranges() == expected(4))

                _ = try await sender.mediaCommand(transportID, "PAUSE", mediaSessionID: session, requestID: 801)
                try await CastTestSupport.eventually("the reader to stop") { await !emulator.state().isFetchingMedia }
                let paused = ranges().count
                for _ in 0..<5 { clock.advance(by: .seconds(1)) }
                try await sender.roundTrip()
                #expect(await !emulator.state().isFetchingMedia)
                #expect(ranges().count == paused)

                _ = try await sender.mediaCommand(transportID, "PLAY", mediaSessionID: session, requestID: 802)
                try await play(until: paused + 2)
                #expect(ranges() == expected(paused + 2))
                #expect(await emulator.state().fetches.suffix(2).allSatisfy { $0.purpose == .read && $0.status == 206 })

                _ = try await sender.mediaCommand(transportID, "STOP", mediaSessionID: session, requestID: 803)
                try await CastTestSupport.eventually("the reader to stop") { await !emulator.state().isFetchingMedia }
            }
        }
    }

    @Test("Reading onward stops at the end of the content")
    func readsToTheEnd() async throws {
        try await MediaTestServer.with { server in
            try await Self.withFetchingDevice { emulator, clock, sender, transportID in
                // Three chunks and a half, over 100 s: a chunk every 28 s or so.
                let path = "/media/\(65_536 * 3 + 32_768)/short.mp4"
                _ = try await Self.load(sender, transportID, Self.media(server.url(path), duration: 100))
                try await CastTestSupport.eventually("the reader to reach the end") {
                    if await !emulator.state().isFetchingMedia { return true }
                    if clock.sleeperCount >= 2 { clock.advance(by: .seconds(2)) }
                    return false
                }
                #expect(
                    server.requests(for: path).map(\.range) == [
                        "bytes=0-65535", "bytes=65536-131071", "bytes=131072-196607", "bytes=196608-262143",
                    ])
                #expect(await emulator.state().fetches.last?.bytes == 32_768)
            }
        }
    }

    @Test("QUEUE_LOAD fetches its first item; the next one is fetched when it becomes current")
    func queue() async throws {
        try await MediaTestServer.with { server in
            try await Self.withFetchingDevice { _, _, sender, transportID in
                let first = "/media/\(Self.size)/one.mp4"
                let second = "/media/\(Self.size)/two.mp4"
                try await sender.media(
                    transportID,
                    [
                        "type": "QUEUE_LOAD", "requestId": 800,
                        "items": [
                            ["media": Self.media(server.url(first)), "autoplay": false],
                            ["media": Self.media(server.url(second)), "autoplay": false],
                        ],
                    ])
                let reply = try await sender.reply(to: 800)
                #expect(reply.firstStatus?["playerState"] == "PAUSED")
                #expect(server.requests(for: first).map(\.range) == ["bytes=0-65535"])
                #expect(server.requests(for: second).isEmpty)
                let session = try #require(reply.firstStatus?["mediaSessionId"]?.intValue)
                _ = try await sender.mediaCommand(transportID, "QUEUE_NEXT", mediaSessionID: session, requestID: 801)
                try await CastTestSupport.eventually("the second item's fetch") {
                    server.requests(for: second).map(\.range) == ["bytes=0-65535"]
                }
            }
        }
    }

    @Test("https:// and host names are not fetched (nor resolved): recorded, and the LOAD plays as before")
    func notFetched() async throws {
        try await Self.withFetchingDevice { emulator, _, sender, transportID in
            let reply = try await Self.load(sender, transportID, Self.media("https://example.com/movie.mp4"))
            #expect(reply.firstStatus?["playerState"] == "PLAYING")
            let named = try await Self.load(
                sender, transportID, Self.media("http://media.example.invalid/movie.mp4"), requestID: 801)
            #expect(named.firstStatus?["playerState"] == "PLAYING")
            let records = await emulator.state().fetches
            #expect(records.count == 2)
            #expect(records.first?.notFetched?.contains("https://") == true)
            #expect(records.last?.notFetched?.contains("names are not resolved") == true)
            #expect(await !emulator.state().isFetchingMedia)
        }
    }

    @Test("A LOAD replaced while its media is being fetched is answered LOAD_CANCELLED")
    func cancelledLoad() async throws {
        try await MediaTestServer.with { server in
            // The first answer would take a minute, and the device waits for it that long.
            try await Self.withFetchingDevice(timeout: .seconds(60)) { _, _, sender, transportID in
                try await sender.media(
                    transportID,
                    ["type": "LOAD", "requestId": 800, "media": Self.media(server.url("/slow/60/movie.mp4"))])
                try await CastTestSupport.eventually("the slow request") {
                    !server.requests(for: "/slow/60/movie.mp4").isEmpty
                }
                try await sender.media(
                    transportID,
                    ["type": "LOAD", "requestId": 801, "media": Self.media(server.url("/media/\(Self.size)/b.mp4"))])
                // Cancelled as the second LOAD arrives, before that one is answered.
                #expect(try await sender.reply(to: 800)["type"] == "LOAD_CANCELLED")
                #expect(try await sender.reply(to: 801).firstStatus?["playerState"] == "PLAYING")
            }
        }
    }

    @Test("--log records each fetch: url, range, status, bytes; and the URLs not fetched")
    func logRecords() async throws {
        try await withTemporaryDirectory { directory in
            let log = directory + "/messages.jsonl"
            try await MediaTestServer.with { server in
                let url = server.url("/media/\(Self.size)/movie.mp4")
                try await Self.withFetchingDevice(logFile: log) { _, _, sender, transportID in
                    _ = try await Self.load(sender, transportID, Self.media(url))
                    _ = try await Self.load(
                        sender, transportID, Self.media("https://example.com/a.mp4"), requestID: 801)
                }
                let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map {
                    try JSONValue.parse(String($0))
                }
                let fetches = lines.compactMap { $0["fetch"] }
                let fetched = try #require(fetches.first)
                #expect(fetched["url"] == .string(url))
                #expect(fetched["purpose"] == "load")
                #expect(fetched["range"] == "bytes=0-65535")
                #expect(fetched["status"] == 206)
                #expect(fetched["bytes"] == 65_536)
                #expect(fetched["size"] == .number(Double(Self.size)))
                #expect(fetched["error"] == nil)
                #expect(lines.first { $0["fetch"] != nil }?["time"]?.stringValue != nil)
                #expect(fetches.last?["url"] == "https://example.com/a.mp4")
                #expect(fetches.last?["notFetched"]?.stringValue?.contains("https://") == true)
                // Messages are still logged beside them.
                #expect(lines.contains { $0["payload"]?["type"] == "LOAD" })
            }
        }
    }
}
