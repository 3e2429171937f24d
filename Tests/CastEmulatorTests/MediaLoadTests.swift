import CastTestSupport
import CastProtocol
import Testing

@testable import CastEmulator

/// LOAD with everything a sender SDK puts in it, and the status fields that follow from it.
@Suite("Media LOAD and status (state machine)", .tags(.cpuBound))
struct MediaLoadTests {
    static let tracks: JSONValue = [
        [
            "trackId": 1, "type": "TEXT", "subtype": "SUBTITLES", "trackContentId": "http://x.invalid/en.vtt",
            "trackContentType": "text/vtt", "name": "English", "language": "en-US",
        ],
        [
            "trackId": 2, "type": "TEXT", "subtype": "CAPTIONS", "trackContentId": "http://x.invalid/fr.vtt",
            "trackContentType": "text/vtt", "name": "Français", "language": "fr",
        ],
        ["trackId": 3, "type": "AUDIO", "name": "Director's commentary", "language": "en"],
        ["trackId": 4, "type": "VIDEO", "name": "Main"],
    ]

    static let fullMedia = media([
        "entity": "https://example.invalid/watch/42",
        "tracks": tracks,
        "textTrackStyle": ["foregroundColor": "#FFFFFFFF", "fontScale": 1.2],
        "customData": ["drm": "none"],
        "breaks": [["id": "mid", "position": 60, "breakClipIds": ["c1"], "isWatched": false]],
        "breakClips": [["id": "c1", "duration": 5, "title": "Ad"]],
    ])

    @Test("LOAD keeps media as sent and honours autoplay, currentTime, playbackRate, activeTrackIds, customData")
    func fullLoad() throws {
        let harness = DeviceHarness()
        try harness.launch()
        let sent = harness.load(
            Self.fullMedia,
            extra: [
                "autoplay": false, "currentTime": 12.5, "playbackRate": 1.5, "activeTrackIds": [1, 3],
                "credentials": "token-1", "credentialsType": "cloud", "customData": ["queue": "x"],
            ]
        )
        let status = try #require(sent.reply(to: 800)?.firstStatus)
        #expect(status["playerState"] == "PAUSED")
        #expect(status["currentTime"]?.doubleValue == 12.5)
        #expect(status["playbackRate"]?.doubleValue == 1.5)
        #expect(status["activeTrackIds"] == [1, 3])
        let media = try #require(status["media"])
        for key in [
            "entity", "tracks", "textTrackStyle", "customData", "breaks", "breakClips", "metadata", "contentType",
        ] {
            #expect(media[key] == Self.fullMedia[key], "media.\(key) kept as sent")
        }
        #expect(media["contentId"] == sampleMedia["contentId"])
        let item = try #require(status["items"]?.arrayValue?.first)
        #expect(item["itemId"] == status["currentItemId"])
        #expect(item["autoplay"] == false)
        #expect(item["startTime"]?.doubleValue == 12.5)
        #expect(item["activeTrackIds"] == [1, 3])
        #expect(item["orderId"] == 0)
        #expect(item["customData"] == ["queue": "x"])
        #expect(item["media"] == status["media"])

        // Playing at 1.5: 10 s of clock are 15 s of media.
        _ = harness.command("PLAY", 801)
        _ = harness.advance(by: .seconds(10))
        #expect(harness.status()?["currentTime"]?.doubleValue == 27.5)

        let record = try #require(harness.device.history.loads.last)
        #expect(record.credentials == "token-1")
        #expect(record.credentialsType == "cloud")
        #expect(record.result == .loaded)
    }

    @Test("LOAD with activeTrackIds that are not the media's tracks: INVALID_REQUEST INVALID_PARAMS, nothing changes")
    func unknownActiveTracks() throws {
        let harness = try DeviceHarness.loaded(sampleMedia)
        let session = harness.device.player?.mediaSessionID
        for tracks: JSONValue in [[99], [1, "x"], "1"] {
            let sent = harness.load(Self.fullMedia, extra: ["activeTrackIds": tracks])
            #expect(sent.count == 1)
            #expect(sent.reply(to: 800) == ["type": "INVALID_REQUEST", "requestId": 800, "reason": "INVALID_PARAMS"])
        }
        #expect(harness.device.player?.mediaSessionID == session)
        #expect(harness.device.history.loads.last?.result == .invalidRequest)
    }

    @Test("LOAD with playbackRate outside 0.5…2.0: INVALID_REQUEST INVALID_PARAMS", arguments: [0.25, 2.5, -1.0])
    func badPlaybackRate(rate: Double) throws {
        let harness = DeviceHarness()
        try harness.launch()
        let sent = harness.load(sampleMedia, extra: ["playbackRate": .number(rate)])
        #expect(sent.reply(to: 800)?["reason"] == "INVALID_PARAMS")
        #expect(harness.device.player == nil)
    }

    @Test(
        "Unplayable content type: IDLE ERROR broadcast, then LOAD_FAILED 104 to the requester; the list is configurable"
    )
    func unplayable() throws {
        let harness = try DeviceHarness.loaded(sampleMedia)
        let previous = try #require(harness.device.player?.mediaSessionID)
        let sent = harness.load(media(["contentType": "Video/X-FLV; codecs=avc1"]))
        #expect(sent.map(\.isBroadcast) == [true, true, false])
        #expect(sent[0].firstStatus?["mediaSessionId"]?.intValue == Int64(previous))
        #expect(sent[0].firstStatus?["idleReason"] == "INTERRUPTED")
        let error = try #require(sent[1].firstStatus)
        #expect(error["playerState"] == "IDLE")
        #expect(error["idleReason"] == "ERROR")
        #expect(error["mediaSessionId"]?.intValue == Int64(previous + 1))
        let reply = sent[2].payload
        #expect(reply["type"] == "LOAD_FAILED")
        #expect(reply["requestId"] == 800)
        #expect(reply["detailedErrorCode"] == 104)
        #expect(harness.device.player == nil)
        #expect(harness.status() == nil)
        #expect(harness.device.history.loads.last?.result == .loadFailed)

        // With another list, FLV plays and WebM does not.
        let custom = DeviceHarness(settings: .init(unplayableContentTypes: ["video/webm"]))
        try custom.launch()
        #expect(custom.load(media(["contentType": "video/x-flv"])).reply(to: 800)?["type"] == "MEDIA_STATUS")
        #expect(custom.load(media(["contentType": "video/webm"])).reply(to: 800)?["type"] == "LOAD_FAILED")
    }

    @Test(
        "LOAD: BUFFERING names the item in loadingItemId, then PLAYING without it; broadcasts after commands omit media"
    )
    func fullAndPartialStatuses() throws {
        let harness = DeviceHarness()
        try harness.launch()
        let sent = harness.load(sampleMedia)
        let buffering = try #require(sent.broadcastStatuses.first)
        #expect(buffering["playerState"] == "BUFFERING")
        #expect(buffering["loadingItemId"] == buffering["currentItemId"])
        #expect(buffering["media"] != nil)
        let reply = try #require(sent.reply(to: 800)?.firstStatus)
        #expect(reply["loadingItemId"] == nil)
        #expect(reply["supportedMediaCommands"] == 274_447)

        let paused = harness.command("PAUSE", 801)
        let broadcast = try #require(paused.broadcastStatuses.first)
        #expect(paused.reply(to: 801)?.firstStatus == broadcast)
        #expect(broadcast["media"] == nil)
        let item = try #require(broadcast["items"]?.arrayValue?.first)
        #expect(item["media"] == nil)
        #expect(item["itemId"] == broadcast["currentItemId"])
        #expect(harness.status()?["items"]?.arrayValue?.first?["media"] != nil, "GET_STATUS is a full status")
    }

    @Test("videoInfo 1920×1080 sdr for video on a device with a screen; not for audio, not on a speaker")
    func videoInfo() throws {
        let video = try DeviceHarness.loaded(sampleMedia)
        #expect(video.status()?["videoInfo"] == ["width": 1920, "height": 1080, "hdrType": "sdr"])
        let hls = try DeviceHarness.loaded(media(["contentType": "application/x-mpegURL"]))
        #expect(hls.status()?["videoInfo"] != nil)
        let audio = try DeviceHarness.loaded(media(["contentType": "audio/mp3"]))
        #expect(audio.status()?["videoInfo"] == nil)
        let speaker = try DeviceHarness.loaded(sampleMedia, settings: .init(hasDisplay: false))
        #expect(speaker.status()?["videoInfo"] == nil)
    }

    @Test("LIVE: liveSeekableRange is a moving window of the last hour that follows the clock; SEEK stays inside it")
    func liveSeekableRange() throws {
        let harness = try DeviceHarness.loaded(
            media(["streamType": "LIVE", "duration": nil, "contentType": "application/x-mpegURL"]),
            extra: ["currentTime": 5000])
        let range = try #require(harness.status()?["liveSeekableRange"])
        #expect(range == ["start": 1400, "end": 5000, "isMovingWindow": true, "isLiveDone": false])
        _ = harness.command("PAUSE", 1)
        _ = harness.advance(by: .seconds(100))
        #expect(harness.status()?["liveSeekableRange"]?["start"] == 1500)
        #expect(harness.status()?["liveSeekableRange"]?["end"] == 5100)
        let early = harness.command("SEEK", 2, ["currentTime": 10])
        #expect(early.reply(to: 2)?.firstStatus?["currentTime"] == 1500)
        let late = harness.command("SEEK", 3, ["currentTime": 9999])
        #expect(late.reply(to: 3)?.firstStatus?["currentTime"] == 5100)

        let buffered = try DeviceHarness.loaded(sampleMedia)
        #expect(buffered.status()?["liveSeekableRange"] == nil)
    }

    @Test("LIVE joined at 5000 s with a duration of 60 s ends 60 s later, at 5060")
    func liveEnds() throws {
        let harness = try DeviceHarness.loaded(
            media(["streamType": "LIVE", "duration": 60, "contentType": "application/x-mpegURL"]),
            extra: ["currentTime": 5000])
        #expect(harness.device.nextDeadline == .seconds(60))
        _ = harness.advance(by: .seconds(59))
        #expect(harness.status()?["currentTime"] == 5059)
        let end = harness.advance(by: .seconds(1)).broadcastStatuses
        #expect(end.last?["idleReason"] == "FINISHED")
    }

    @Test("LOAD with queueData loads the whole queue")
    func loadWithQueueData() throws {
        let harness = DeviceHarness()
        try harness.launch()
        let sent = harness.media([
            "type": "LOAD", "requestId": 5,
            "queueData": [
                "items": [["media": queueMedia("a")], ["media": queueMedia("b")]], "startIndex": 1,
                "repeatMode": "REPEAT_ALL",
            ],
        ])
        let status = try #require(sent.reply(to: 5)?.firstStatus)
        #expect(status["items"]?.arrayValue?.count == 2)
        #expect(status["media"]?["contentId"] == queueMedia("b")["contentId"])
        #expect(status["repeatMode"] == "REPEAT_ALL")
    }
}
