import CastProtocol
import CastTestSupport
import NIOCore
import Testing

@testable import CastEmulator

/// Media fetching as the state machine sees it: which URLs it fetches, BUFFERING until the fetch
/// ends, and how the LOAD is answered then. No sockets (MediaFetchTests fetches for real).
@Suite("Media fetching (state machine)", .tags(.cpuBound))
struct MediaFetchStateTests {
    static let fetching = EmulatedDevice.Settings(fetchMedia: true)
    static let local: JSONValue = media(["contentId": "http://127.0.0.1:9/a.mp4"])

    @Test(
        "Only http:// from an IP address or localhost is fetched; nothing else, and no name is resolved",
        arguments: [
            ("http://127.0.0.1:8080/a.mp4?x=1#t", "127.0.0.1", 8080, "/a.mp4?x=1", nil),
            ("http://localhost:9000/b.mp4", "127.0.0.1", 9000, "/b.mp4", nil),
            ("HTTP://[::1]:8080/c.mp4", "::1", 8080, "/c.mp4", nil),
            ("http://10.1.2.3", "10.1.2.3", 80, "/", nil),
            ("https://127.0.0.1/a.mp4", nil, 0, "", "https://"),
            ("https://example.com/a.mp4", nil, 0, "", "https://"),
            ("http://example.com/a.mp4", nil, 0, "", "is not an IP address or localhost"),
            ("http://media.local:8000/a.mp4", nil, 0, "", "names are not resolved"),
            ("http://user:pw@127.0.0.1/a.mp4", nil, 0, "", "user information"),
            ("http://127.0.0.1:99999/a.mp4", nil, 0, "", "port"),
            ("file:///tmp/a.mp4", nil, 0, "", "not an http:// URL"),
            ("rtsp://127.0.0.1/a", nil, 0, "", "not an http:// URL"),
        ] as [(String, String?, Int, String, String?)]
    )
    func urlPolicy(url: String, address: String?, port: Int, path: String, refusal: String?) throws {
        switch MediaFetchTarget.parse(url) {
        case .success(let target):
            #expect(refusal == nil, "\(url) should not be fetched")
            #expect(target.address.ipAddress == address)
            #expect(target.address.port == port)
            #expect(target.path == path)
        case .failure(let reason):
            let refusal = try #require(refusal, "\(url) should be fetched, not: \(reason)")
            #expect(reason.description.contains(refusal))
        }
    }

    @Test("A LOAD waits BUFFERING for its fetch; PLAY and PAUSE meanwhile decide how it starts; then it is answered")
    func loadWaitsForTheFetch() throws {
        let harness = DeviceHarness(settings: Self.fetching)
        try harness.launch()
        let sent = harness.load(Self.local, extra: ["autoplay": "false"])
        #expect(sent.reply(to: 800) == nil, "no answer before the media is fetched")
        #expect(sent.broadcastStatuses.last?["playerState"] == "BUFFERING")
        let session = try #require(harness.device.player)
        let plan = try #require(session.fetch?.plan)
        #expect(plan.content?.url == "http://127.0.0.1:9/a.mp4")
        #expect(harness.status()?["playerState"] == "BUFFERING")

        // Time does not run while buffering; PLAY is remembered.
        _ = harness.advance(by: .seconds(30))
        let play = harness.command("PLAY", 801)
        #expect(play.reply(to: 801)?.firstStatus?["playerState"] == "BUFFERING")

        harness.now += .seconds(1)
        let done = DeviceHarness.parsed(
            harness.device.mediaFetched(
                mediaSessionID: session.mediaSessionID, entry: session.entries, failure: nil, now: harness.now))
        let status = try #require(done.reply(to: 800)?.firstStatus)
        #expect(status["playerState"] == "PLAYING")
        #expect(status["currentTime"]?.doubleValue == 0)
        #expect(status["media"]?["contentId"] == "http://127.0.0.1:9/a.mp4")
        #expect(done.broadcastStatuses.last?["playerState"] == "PLAYING")
        #expect(harness.device.history.loads.last?.result == .loaded)
        _ = harness.advance(by: .seconds(10))
        #expect(harness.status()?["currentTime"]?.doubleValue == 10)
    }

    @Test("Media the model cannot play ends the session IDLE ERROR: LOAD_FAILED, detailedErrorCode 104")
    func unplayableMedia() throws {
        let harness = DeviceHarness(settings: Self.fetching)
        try harness.launch()
        _ = harness.load(Self.local)
        let session = try #require(harness.device.player)
        let done = DeviceHarness.parsed(
            harness.device.mediaFetched(
                mediaSessionID: session.mediaSessionID, entry: session.entries,
                failure: .unplayable("the Chromecast cannot play it"), now: harness.now))
        let failed = try #require(done.reply(to: 800))
        #expect(failed["type"] == "LOAD_FAILED" && failed["detailedErrorCode"] == 104)
        #expect(done.broadcastStatuses.last?["idleReason"] == "ERROR")
        #expect(harness.device.history.loads.last?.result == .loadFailed)
    }

    @Test("A failed fetch ends the session IDLE ERROR and fails the LOAD: LOAD_FAILED, detailedErrorCode 103")
    func failedFetch() throws {
        let harness = DeviceHarness(settings: Self.fetching)
        try harness.launch()
        _ = harness.load(Self.local)
        let session = try #require(harness.device.player)
        let done = DeviceHarness.parsed(
            harness.device.mediaFetched(
                mediaSessionID: session.mediaSessionID, entry: session.entries, failure: .unreachable("refused"),
                now: harness.now))
        let failed = try #require(done.reply(to: 800))
        #expect(failed["type"] == "LOAD_FAILED")
        #expect(failed["detailedErrorCode"] == 103)
        #expect(failed["itemId"] == .number(Double(session.current.itemID)))
        #expect(done.broadcastStatuses.last?["playerState"] == "IDLE")
        #expect(done.broadcastStatuses.last?["idleReason"] == "ERROR")
        #expect(harness.device.player == nil)
        #expect(harness.device.history.loads.last?.result == .loadFailed)
        #expect(CastDetailedErrorCode.name(of: 103) == "MEDIA_NETWORK")
    }

    @Test("A fetch for an item that is no longer waiting is ignored; a LOAD replaced while waiting gets LOAD_CANCELLED")
    func staleFetchAndCancelledLoad() throws {
        let harness = DeviceHarness(settings: Self.fetching)
        try harness.launch()
        _ = harness.load(Self.local)
        let first = try #require(harness.device.player)
        var second = Self.local.objectValue ?? [:]
        second["contentId"] = "http://127.0.0.1:9/b.mp4"
        let replaced = harness.media(["type": "LOAD", "requestId": 810, "media": .object(second)])
        #expect(replaced.reply(to: 800)?["type"] == "LOAD_CANCELLED")
        #expect(harness.device.history.loads.first?.result == .loadCancelled)
        let stale = harness.device.mediaFetched(
            mediaSessionID: first.mediaSessionID, entry: first.entries, failure: nil, now: harness.now)
        #expect(stale.deliveries.isEmpty)
        #expect(harness.status()?["playerState"] == "BUFFERING")

        let stopped = harness.command("STOP", 811)
        #expect(stopped.reply(to: 810)?["type"] == "LOAD_CANCELLED")
        #expect(harness.device.player == nil)
    }

    @Test("URLs that are not fetched are recorded, and their LOAD plays at once as before")
    func notFetchedPlaysAtOnce() throws {
        let tracks: JSONValue = [
            ["trackId": 1, "type": "TEXT", "trackContentId": "https://example.com/en.vtt"],
            ["trackId": 2, "type": "AUDIO"],
        ]
        let harness = try DeviceHarness.loaded(
            media(["contentId": "https://example.com/a.mp4", "tracks": tracks]), settings: Self.fetching)
        #expect(harness.status()?["playerState"] == "PLAYING")
        let records = harness.device.history.fetches
        #expect(records.map(\.url) == ["https://example.com/a.mp4", "https://example.com/en.vtt"])
        #expect(records.map(\.purpose) == [.load, .textTrack])
        #expect(records.allSatisfy { $0.notFetched?.contains("https://") == true && $0.status == nil })
        #expect(records.first?.json["notFetched"] != nil)
    }

    @Test("Without fetchMedia nothing is planned: local URLs play at once")
    func offByDefault() throws {
        #expect(EmulatorConfiguration().fetchMedia == false)
        let harness = try DeviceHarness.loaded(Self.local)
        #expect(harness.device.player?.fetch == nil)
        #expect(harness.device.history.fetches.isEmpty)
    }

    @Test("Lenient LOADs: autoplay as a string, streamType missing or null, currentTime as a string")
    func lenientLoadShapes() throws {
        let cases: [(extra: [String: JSONValue], media: [String: JSONValue], state: String, time: Double)] = [
            (["autoplay": "false"], [:], "PAUSED", 0),
            (["autoplay": "False"], [:], "PAUSED", 0),
            (["autoplay": "true"], [:], "PLAYING", 0),
            (["autoplay": "TRUE", "currentTime": "12.5"], [:], "PLAYING", 12.5),
            (["autoplay": .null, "currentTime": " 7 "], [:], "PLAYING", 7),
            (["currentTime": "soon"], [:], "PLAYING", 0),
            (["autoplay": 0], ["streamType": .null], "PAUSED", 0),
            ([:], ["streamType": "buffered-ish"], "PLAYING", 0),
        ]
        for (extra, fields, state, time) in cases {
            var sent = sampleMedia.objectValue ?? [:]
            sent["streamType"] = nil
            for (key, value) in fields { sent[key] = value }
            let harness = try DeviceHarness.loaded(.object(sent), extra: extra)
            let status = try #require(harness.status())
            #expect(status["playerState"] == .string(state), "\(extra) \(fields)")
            #expect(status["currentTime"]?.doubleValue == time, "\(extra)")
            #expect(status["media"]?["streamType"] == "BUFFERED", "\(fields)")
        }
        // QUEUE_LOAD items too.
        let harness = DeviceHarness()
        try harness.launch()
        let queued = harness.media([
            "type": "QUEUE_LOAD", "requestId": 820, "currentTime": "3",
            "items": [["media": sampleMedia, "autoplay": "false"], ["media": sampleMedia]],
        ])
        let status = try #require(queued.reply(to: 820)?.firstStatus)
        #expect(status["playerState"] == "PAUSED")
        #expect(status["currentTime"]?.doubleValue == 3)
    }
}
