import CastTestSupport
import CastProtocol
import Testing

@testable import CastEmulator

/// PLAY, PAUSE, SEEK, SET_PLAYBACK_RATE, EDIT_TRACKS_INFO, SET_VOLUME on a loaded session.
@Suite("Media control commands (state machine)", .tags(.cpuBound))
struct MediaControlTests {
    static let withTracks = media(["tracks": MediaLoadTests.tracks])

    @Test("Every accepted command answers the requester (its requestId) and broadcasts the same status (requestId 0)")
    func replyAndBroadcast() throws {
        let harness = try DeviceHarness.loaded(Self.withTracks)
        let commands: [(String, [String: JSONValue])] = [
            ("PAUSE", [:]), ("PLAY", [:]), ("SEEK", ["currentTime": 3]), ("SET_VOLUME", ["volume": ["muted": true]]),
            ("SET_PLAYBACK_RATE", ["playbackRate": 2]), ("EDIT_TRACKS_INFO", ["activeTrackIds": [2]]),
        ]
        for (offset, (type, extra)) in commands.enumerated() {
            let requestID = 10 + offset
            let sent = harness.command(type, requestID, extra)
            #expect(sent.count == 2, "\(type)")
            let reply = try #require(sent.first { !$0.isBroadcast }, "\(type)")
            #expect(reply.destination == DeviceHarness.sender)
            #expect(reply.source == harness.transportID)
            #expect(reply.payload["requestId"]?.intValue == Int64(requestID))
            let broadcast = try #require(sent.first { $0.isBroadcast }, "\(type)")
            #expect(broadcast.payload["requestId"] == 0)
            #expect(broadcast.firstStatus == reply.firstStatus)
        }
    }

    @Test("SEEK: currentTime or relativeTime, clamped to 0…duration; resumeState starts or pauses")
    func seek() throws {
        let harness = try DeviceHarness.loaded(sampleMedia)  // 120 s
        func seek(_ requestID: Int, _ extra: [String: JSONValue]) -> JSONValue? {
            harness.command("SEEK", requestID, extra).reply(to: requestID)?.firstStatus
        }
        #expect(seek(1, ["currentTime": 500])?["currentTime"] == 120)
        #expect(seek(2, ["currentTime": -5])?["currentTime"] == 0)
        #expect(seek(3, ["relativeTime": 30, "resumeState": "PLAYBACK_PAUSE"])?["playerState"] == "PAUSED")
        #expect(seek(4, ["relativeTime": -10])?["currentTime"] == 20)
        let resumed = seek(5, ["currentTime": 50, "resumeState": "PLAYBACK_START"])
        #expect(resumed?["playerState"] == "PLAYING")
        #expect(resumed?["currentTime"] == 50)
        #expect(harness.command("SEEK", 6).reply(to: 6)?["reason"] == "INVALID_PARAMS")
    }

    @Test("SET_PLAYBACK_RATE: absolute or relative, 0.5…2.0, and the clock follows it")
    func playbackRate() throws {
        let harness = try DeviceHarness.loaded(sampleMedia)
        #expect(
            harness.command("SET_PLAYBACK_RATE", 1, ["playbackRate": 2]).reply(to: 1)?.firstStatus?["playbackRate"] == 2
        )
        _ = harness.advance(by: .seconds(10))
        #expect(harness.status()?["currentTime"] == 20)
        let relative = harness.command("SET_PLAYBACK_RATE", 2, ["relativePlaybackRate": 0.25])
        #expect(relative.reply(to: 2)?.firstStatus?["playbackRate"] == 0.5)
        _ = harness.advance(by: .seconds(10))
        #expect(harness.status()?["currentTime"] == 25)
        #expect(harness.device.nextDeadline == harness.now + .seconds(190), "95 s left at half speed")
        for (requestID, extra) in [(3, ["playbackRate": 2.5]), (4, ["relativePlaybackRate": 0.5]), (5, [:])]
            as [(Int, [String: JSONValue])]
        {
            let refused = harness.command("SET_PLAYBACK_RATE", requestID, extra)
            #expect(refused.count == 1)
            #expect(refused.reply(to: requestID)?["reason"] == "INVALID_PARAMS")
        }
        #expect(harness.status()?["playbackRate"] == 0.5)
    }

    @Test(
        "EDIT_TRACKS_INFO: ids must be the media's tracks; textTrackStyle goes into media; language and enableTextTracks"
    )
    func editTracks() throws {
        let harness = try DeviceHarness.loaded(Self.withTracks)
        let chosen = harness.command("EDIT_TRACKS_INFO", 1, ["activeTrackIds": [2, 3]])
        #expect(chosen.reply(to: 1)?.firstStatus?["activeTrackIds"] == [2, 3])
        #expect(chosen.reply(to: 1)?.firstStatus?["items"]?.arrayValue?.first?["activeTrackIds"] == [2, 3])

        let unknown = harness.command("EDIT_TRACKS_INFO", 2, ["activeTrackIds": [2, 7]])
        #expect(unknown.count == 1)
        #expect(unknown.reply(to: 2) == ["type": "INVALID_REQUEST", "requestId": 2, "reason": "INVALID_PARAMS"])
        #expect(harness.status()?["activeTrackIds"] == [2, 3])

        let style: JSONValue = ["backgroundColor": "#00000080", "edgeType": "OUTLINE", "fontScale": 1.5]
        let styled = harness.command("EDIT_TRACKS_INFO", 3, ["textTrackStyle": style])
        #expect(styled.broadcastStatuses.first?["media"]?["textTrackStyle"] == style, "the new media is broadcast")
        #expect(harness.status()?["media"]?["textTrackStyle"] == style)

        let english = harness.command("EDIT_TRACKS_INFO", 4, ["language": "en"])
        #expect(english.reply(to: 4)?.firstStatus?["activeTrackIds"] == [3, 1], "text track 2 replaced by English")
        let off = harness.command("EDIT_TRACKS_INFO", 5, ["enableTextTracks": false])
        #expect(off.reply(to: 5)?.firstStatus?["activeTrackIds"] == [3])
        #expect(harness.command("EDIT_TRACKS_INFO", 6, ["language": "de"]).reply(to: 6)?["reason"] == "INVALID_PARAMS")
    }

    @Test(
        "A stale mediaSessionId is INVALID_MEDIA_SESSION_ID for every command; without a session, INVALID_PLAYER_STATE")
    func staleSession() throws {
        let harness = try DeviceHarness.loaded(sampleMedia)
        let stale = Int64(try #require(harness.device.player?.mediaSessionID)) + 7
        for (offset, type) in ["PLAY", "SEEK", "QUEUE_NEXT", "QUEUE_UPDATE", "SKIP_AD", "EDIT_TRACKS_INFO"].enumerated()
        {
            let sent = harness.command(type, 20 + offset, ["mediaSessionId": .number(Double(stale))])
            #expect(sent.reply(to: 20 + offset)?["reason"] == "INVALID_MEDIA_SESSION_ID", "\(type)")
        }
        _ = harness.command("STOP", 30)
        #expect(harness.command("QUEUE_NEXT", 31).reply(to: 31)?["type"] == "INVALID_PLAYER_STATE")
        #expect(harness.command("DANCE", 32).reply(to: 32)?["reason"] == "INVALID_COMMAND")
    }
}
