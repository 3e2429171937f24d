import CastEmulator
import CastProtocol
import CastTestSupport
import Testing

@Suite("Media player (urn:x-cast:com.google.cast.media on the app's transport)")
struct MediaTests {
    @Test("LOAD goes BUFFERING → PLAYING; PAUSE, SEEK, PLAY, STOP (→ IDLE CANCELLED)")
    func transitions() async throws {
        let (configuration, clock) = manualClockConfiguration()
        try await withEmulator(configuration) { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launchMediaReceiver()

            try await sender.media(transportID, ["type": "LOAD", "requestId": 10, "media": sampleMedia])
            let buffering = try await sender.next()
            #expect(buffering.sourceID == transportID)
            #expect(buffering.destinationID == "*")
            let bufferingPayload = try JSONValue.parse(buffering.payloadUtf8)
            #expect(bufferingPayload["requestId"]?.intValue == 0)
            #expect(bufferingPayload.firstStatus?["playerState"] == "BUFFERING")
            let reply = try await sender.next()
            #expect(reply.destinationID == sender.sourceID)
            let replyPayload = try JSONValue.parse(reply.payloadUtf8)
            #expect(replyPayload["type"] == "MEDIA_STATUS")
            #expect(replyPayload["requestId"]?.intValue == 10)
            let loaded = try #require(replyPayload.firstStatus)
            #expect(loaded["playerState"] == "PLAYING")
            #expect(loaded["media"]?["contentId"] == sampleMedia["contentId"])
            #expect(loaded["media"]?["duration"]?.doubleValue == 120)
            #expect(loaded["supportedMediaCommands"]?.intValue == 274_447)
            #expect(loaded["repeatMode"] == "REPEAT_OFF")
            #expect(loaded["activeTrackIds"] == [])
            #expect(loaded["volume"]?["level"]?.doubleValue == 1)
            let session = try #require(loaded["mediaSessionId"]?.intValue)
            #expect(CastMediaStatus(json: loaded)?.media?.metadata?.title == "Big Buck Bunny")
            let broadcast = try await sender.nextPayload()
            #expect(broadcast["requestId"]?.intValue == 0)
            #expect(broadcast.firstStatus?["playerState"] == "PLAYING")

            clock.advance(by: .seconds(5))
            let paused = try await sender.mediaCommand(transportID, "PAUSE", mediaSessionID: session, requestID: 11)
            #expect(paused.firstStatus?["playerState"] == "PAUSED")
            #expect(paused.firstStatus?["currentTime"]?.doubleValue == 5)

            let seek = try await sender.mediaCommand(
                transportID, "SEEK", mediaSessionID: session, requestID: 12,
                extra: ["currentTime": 42, "resumeState": "PLAYBACK_PAUSE"]
            )
            #expect(seek.firstStatus?["playerState"] == "PAUSED")
            #expect(seek.firstStatus?["currentTime"]?.doubleValue == 42)

            let relative = try await sender.mediaCommand(
                transportID, "SEEK", mediaSessionID: session, requestID: 13, extra: ["relativeTime": -2]
            )
            #expect(relative.firstStatus?["currentTime"]?.doubleValue == 40)
            #expect(relative.firstStatus?["playerState"] == "PAUSED")

            let playing = try await sender.mediaCommand(transportID, "PLAY", mediaSessionID: session, requestID: 14)
            #expect(playing.firstStatus?["playerState"] == "PLAYING")

            let stopped = try await sender.mediaCommand(transportID, "STOP", mediaSessionID: session, requestID: 15)
            #expect(stopped.firstStatus?["playerState"] == "IDLE")
            #expect(stopped.firstStatus?["idleReason"] == "CANCELLED")

            let status = try await sender.mediaStatus(transportID, requestID: 16)
            #expect(status["status"] == [])
        }
    }

    @Test("Sloppy LOADs are accepted: streamType null or absent, LIVE, no duration, autoplay false, contentUrl only")
    func sloppyLoads() async throws {
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launchMediaReceiver()

            let catt = try await sender.load(
                transportID,
                media: ["contentId": "http://x.invalid/a.mp4", "contentType": "video/mp4", "streamType": nil],
                requestID: 20
            )
            #expect(catt["playerState"] == "PLAYING")
            #expect(catt["media"]?["streamType"] == "BUFFERED")
            #expect(catt["media"]?["duration"]?.doubleValue == 596.5)

            let pychromecast = try await sender.load(
                transportID,
                media: ["contentId": "http://x.invalid/b.mp4", "contentType": "video/mp4", "streamType": "LIVE"],
                autoplay: false, currentTime: 12, requestID: 21
            )
            #expect(pychromecast["media"]?["streamType"] == "LIVE")
            #expect(pychromecast["playerState"] == "PAUSED")
            #expect(pychromecast["currentTime"]?.doubleValue == 12)

            let urlOnly = try await sender.load(
                transportID, media: ["contentUrl": "http://x.invalid/c.mp4"], requestID: 22)
            #expect(urlOnly["media"]?["contentId"] == "http://x.invalid/c.mp4")

            try await sender.media(
                transportID, ["type": "LOAD", "requestId": 23, "media": ["contentType": "video/mp4"]])
            let error = try await sender.reply(to: 23)
            #expect(error["type"] == "INVALID_REQUEST")
            #expect(error["reason"] == "INVALID_PARAMS")
        }
    }

    @Test("A new LOAD ends the previous session (IDLE INTERRUPTED) and gets a new mediaSessionId; the old id is stale")
    func staleMediaSession() async throws {
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launchMediaReceiver()
            let first = try #require(
                try await sender.load(transportID, media: sampleMedia, requestID: 30)["mediaSessionId"]?.intValue)

            try await sender.media(transportID, ["type": "LOAD", "requestId": 31, "media": sampleMedia])
            let interrupted = try await sender.nextPayload()
            #expect(interrupted["requestId"]?.intValue == 0)
            #expect(interrupted.firstStatus?["mediaSessionId"]?.intValue == first)
            #expect(interrupted.firstStatus?["playerState"] == "IDLE")
            #expect(interrupted.firstStatus?["idleReason"] == "INTERRUPTED")
            let second = try #require(try await sender.reply(to: 31).firstStatus?["mediaSessionId"]?.intValue)
            #expect(second == first + 1)

            let stale = try await sender.mediaCommand(
                transportID, "PAUSE", mediaSessionID: first, requestID: 32, expectBroadcast: false
            )
            #expect(stale["type"] == "INVALID_REQUEST")
            #expect(stale["reason"] == "INVALID_MEDIA_SESSION_ID")
        }
    }

    @Test("PLAY or PAUSE with nothing loaded is INVALID_PLAYER_STATE")
    func nothingLoaded() async throws {
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launchMediaReceiver()
            #expect(try await sender.mediaStatus(transportID, requestID: 40)["status"] == [])
            for (requestID, type) in [(41, "PLAY"), (42, "PAUSE")] {
                try await sender.media(
                    transportID, ["type": .string(type), "requestId": .number(Double(requestID)), "mediaSessionId": 1])
                let error = try await sender.reply(to: requestID)
                #expect(error["type"] == "INVALID_PLAYER_STATE")
            }
        }
    }

    @Test("Two senders: one pauses, the other receives the PAUSED broadcast")
    func broadcastReachesOtherSender() async throws {
        try await withEmulator { _, endpoints in
            let a = try await RawCastSender.connect(to: endpoints, sourceID: "sender-a")
            let b = try await RawCastSender.connect(to: endpoints, sourceID: "sender-b")
            let transportID = try await a.launchMediaReceiver()
            try await b.connect()
            try await b.connect(to: transportID)
            try await b.roundTrip()  // both CONNECTs are in force before a pauses
            let session = try #require(
                try await a.load(transportID, media: sampleMedia, requestID: 50)["mediaSessionId"]?.intValue)

            _ = try await a.mediaCommand(transportID, "PAUSE", mediaSessionID: session, requestID: 51)
            let seen = try await b.next(timeout: .seconds(5), "PAUSED on sender-b") { message, payload in
                message.namespace == CastNamespace.media && payload.firstStatus?["playerState"] == "PAUSED"
            }
            #expect(seen.message.destinationID == "*")
            #expect(seen.message.sourceID == transportID)
            #expect(seen.payload["requestId"]?.intValue == 0)
        }
    }

    @Test("Media time follows the injected clock: +10 s playing is +10, at rate 2 +20, paused +0")
    func clockDrivesCurrentTime() async throws {
        let (configuration, clock) = manualClockConfiguration()
        try await withEmulator(configuration) { emulator, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launchMediaReceiver()
            let loaded = try await sender.load(transportID, media: sampleMedia, requestID: 60)
            let session = try #require(loaded["mediaSessionId"]?.intValue)
            #expect(loaded["currentTime"]?.doubleValue == 0)

            clock.advance(by: .seconds(10))
            #expect(
                try await sender.mediaStatus(transportID, requestID: 61).firstStatus?["currentTime"]?.doubleValue == 10)
            #expect(await emulator.state().mediaStatus?.currentTime == 10)

            let rate = try await sender.mediaCommand(
                transportID, "SET_PLAYBACK_RATE", mediaSessionID: session, requestID: 62, extra: ["playbackRate": 2]
            )
            #expect(rate.firstStatus?["playbackRate"]?.doubleValue == 2)
            clock.advance(by: .seconds(10))
            #expect(
                try await sender.mediaStatus(transportID, requestID: 63).firstStatus?["currentTime"]?.doubleValue == 30)

            _ = try await sender.mediaCommand(transportID, "PAUSE", mediaSessionID: session, requestID: 64)
            clock.advance(by: .seconds(10))
            #expect(
                try await sender.mediaStatus(transportID, requestID: 65).firstStatus?["currentTime"]?.doubleValue == 30)
        }
    }

    @Test("Reaching the media's duration: IDLE FINISHED is broadcast and the session ends")
    func reachingDurationFinishes() async throws {
        let (configuration, clock) = manualClockConfiguration()
        try await withEmulator(configuration) { emulator, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launchMediaReceiver()
            var media = sampleMedia
            if case .object(var fields) = media {
                fields["duration"] = 30
                media = .object(fields)
            }
            let session = try #require(
                try await sender.load(transportID, media: media, requestID: 70)["mediaSessionId"]?.intValue)
            clock.advance(by: .seconds(29))
            #expect(try await sender.mediaStatus(transportID, requestID: 71).firstStatus?["playerState"] == "PLAYING")

            clock.advance(by: .seconds(2))
            let finished = try await sender.next(timeout: .seconds(5), "IDLE FINISHED") { _, payload in
                payload.firstStatus?["idleReason"] == "FINISHED"
            }
            #expect(finished.message.destinationID == "*")
            #expect(finished.payload["requestId"]?.intValue == 0)
            #expect(finished.payload.firstStatus?["playerState"] == "IDLE")
            #expect(finished.payload.firstStatus?["mediaSessionId"]?.intValue == session)
            #expect(await emulator.state().mediaStatus == nil)
            #expect(try await sender.mediaStatus(transportID, requestID: 72)["status"] == [])
        }
    }

    @Test("Stream volume: SET_VOLUME on the media namespace; out of range is INVALID_PARAMS")
    func streamVolume() async throws {
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launchMediaReceiver()
            let session = try #require(
                try await sender.load(transportID, media: sampleMedia, requestID: 80)["mediaSessionId"]?.intValue)
            let reply = try await sender.mediaCommand(
                transportID, "SET_VOLUME", mediaSessionID: session, requestID: 81,
                extra: ["volume": ["level": 0.5, "muted": true]]
            )
            #expect(reply.firstStatus?["volume"] == ["level": 0.5, "muted": true])
            let error = try await sender.mediaCommand(
                transportID, "SET_VOLUME", mediaSessionID: session, requestID: 82, extra: ["volume": ["level": -1]],
                expectBroadcast: false
            )
            #expect(error["reason"] == "INVALID_PARAMS")
        }
    }

    @Test("Media messages to an app without a media player are dropped, like a real device")
    func mediaToBackdropIsDropped() async throws {
        try await withEmulator { emulator, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()
            let backdrop = try #require(await emulator.state().runningApp?.transportID)
            try await sender.connect(to: backdrop)
            try await sender.media(backdrop, ["type": "GET_STATUS", "requestId": 90])
            try await sender.media(backdrop, ["type": "LOAD", "requestId": 91, "media": sampleMedia])
            try await sender.receiver(["type": "GET_STATUS", "requestId": 92])
            #expect(try await sender.nextPayload()["requestId"]?.intValue == 92)
        }
    }
}
