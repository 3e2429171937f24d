import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import Testing

@Suite("Stream transfer between emulators: STORE_SESSION, RESUME_SESSION and the orchestration")
struct TransferTests {
    static let trackedMedia: JSONValue = media([
        "tracks": [
            ["trackId": 1, "type": "TEXT", "trackContentId": "http://media.example.invalid/en.vtt", "language": "en"]
        ]
    ])

    /// A configuration whose media clock is `clock`, with the control interface when asked.
    static func configuration(_ clock: ManualEmulatorClock, http: Bool = false) -> EmulatorConfiguration {
        var configuration = EmulatorConfiguration()
        configuration.clock = clock
        if http { configuration.httpPort = 0 }
        return configuration
    }

    @Test(
        "transferSession(to:): the destination plays on at the source's position; the source's senders are told it ended"
    )
    func transferInProcess() async throws {
        let sourceClock = ManualEmulatorClock()
        let destinationClock = ManualEmulatorClock(now: .seconds(1000))
        try await withEmulator(Self.configuration(sourceClock)) { source, sourceEndpoints in
            try await withEmulator(Self.configuration(destinationClock)) { destination, destinationEndpoints in
                let sender = try await RawCastSender.connect(to: sourceEndpoints, sourceID: "sender-source")
                let transportID = try await sender.launchMediaReceiver()
                try await sender.media(
                    transportID,
                    [
                        "type": "LOAD", "requestId": 800, "media": Self.trackedMedia, "activeTrackIds": [1],
                        "playbackRate": 1.5, "customData": ["user": "ann"],
                    ])
                let loaded = try await sender.reply(to: 800)
                #expect(loaded.firstStatus?["playerState"] == "PLAYING")
                let sourceSession = try #require(try await sender.runningApp(requestID: 801)?["sessionId"]?.stringValue)
                sourceClock.advance(by: .seconds(20))  // 30 s of content at 1.5×

                let watcher = try await RawCastSender.connect(to: destinationEndpoints, sourceID: "sender-destination")
                try await watcher.roundTrip(connectingFirst: true)
                var destinationTXT = destination.txtRecordChanges().makeAsyncIterator()
                #expect(await destinationTXT.next()?["st"] == "0")

                let transfer = try await source.transferSession(to: destination)
                #expect(transfer.appID == CastAppID.defaultMediaReceiver)
                #expect(transfer.sourceSessionID == sourceSession)
                #expect(
                    transfer.sourceMediaSessionID.map(Int64.init) == loaded.firstStatus?["mediaSessionId"]?.intValue)
                #expect(transfer.destination.sessionID != sourceSession)
                #expect(transfer.destination.playerState == "PLAYING")
                #expect(transfer.destination.currentTime == 30)

                // The source's sender: the last MEDIA_STATUS, CLOSE from the app, then a
                // RECEIVER_STATUS without it, in that order.
                let idle = try await sender.next("the last MEDIA_STATUS") { _, payload in
                    payload["type"] == "MEDIA_STATUS" && payload.firstStatus?["playerState"] == "IDLE"
                }
                #expect(idle.message.sourceID == transportID)
                #expect(idle.payload["requestId"] == 0)
                #expect(idle.payload.firstStatus?["idleReason"] == "CANCELLED")
                let close = try await sender.next("CLOSE from the app") { message, payload in
                    message.namespace == CastNamespace.connection && payload["type"] == "CLOSE"
                }
                #expect(close.message.sourceID == transportID)
                let receiverStatus = try await sender.next("a RECEIVER_STATUS without the app") { _, payload in
                    payload["type"] == "RECEIVER_STATUS" && payload["requestId"] == 0
                }
                #expect(receiverStatus.payload.firstApplication?["appId"] == .string(CastAppID.backdrop))
                #expect(receiverStatus.payload.firstApplication?["isIdleScreen"] == true)
                #expect(source.txtRecord["st"] == "0")
                #expect(source.txtRecord["rs"] == "")
                let sourceState = await source.state()
                #expect(sourceState.runningApp?.appID == CastAppID.backdrop)
                #expect(sourceState.mediaStatus == nil)

                // The destination: the app runs, announced; the media plays on from 30 s.
                #expect(await destinationTXT.next()?["st"] == "1")
                #expect(destination.txtRecord["rs"] == "Default Media Receiver")
                let announced = try await watcher.next("the destination's RECEIVER_STATUS") { _, payload in
                    payload["type"] == "RECEIVER_STATUS"
                        && payload.firstApplication?["appId"] == .string(CastAppID.defaultMediaReceiver)
                }
                let newTransport = try #require(announced.payload.firstApplication?["transportId"]?.stringValue)
                #expect(announced.payload.firstApplication?["sessionId"]?.stringValue == transfer.destination.sessionID)
                #expect(newTransport == transfer.destination.transportID)
                try await watcher.connect(to: newTransport)
                destinationClock.advance(by: .seconds(10))
                let status = try #require(try await watcher.mediaStatus(newTransport, requestID: 2).firstStatus)
                #expect(status["mediaSessionId"]?.intValue == transfer.destination.mediaSessionID.map(Int64.init))
                #expect(status["playerState"] == "PLAYING")
                #expect(status["currentTime"] == 45)
                #expect(status["playbackRate"] == 1.5)
                #expect(status["activeTrackIds"] == [1])
                #expect(status["media"]?["contentId"] == sampleMedia["contentId"])
                #expect(status["media"]?["metadata"]?["title"] == "Big Buck Bunny")
                #expect(status["media"]?["tracks"]?.arrayValue?.count == 1)
                #expect(status["items"]?.arrayValue?.first?["customData"] == ["user": "ann"])
                #expect(await destination.state().loads.last?.requestType == "RESUME_SESSION")

                await #expect(throws: EmulatorError.self) { try await source.transferSession(to: destination) }
            }
        }
    }

    @Test("A paused queue moves paused, with its items, current item, repeat mode and position")
    func pausedQueue() async throws {
        let sourceClock = ManualEmulatorClock()
        let destinationClock = ManualEmulatorClock()
        try await withEmulator(Self.configuration(sourceClock)) { source, sourceEndpoints in
            try await withEmulator(Self.configuration(destinationClock)) { destination, _ in
                let sender = try await RawCastSender.connect(to: sourceEndpoints)
                let transportID = try await sender.launchMediaReceiver()
                try await sender.media(
                    transportID,
                    [
                        "type": "QUEUE_LOAD", "requestId": 1, "startIndex": 1, "currentTime": 40,
                        "repeatMode": "REPEAT_ALL",
                        "items": [["media": queueMedia("a")], ["media": queueMedia("b")], ["media": queueMedia("c")]],
                    ])
                let loaded = try #require(try await sender.reply(to: 1).firstStatus)
                let session = try #require(loaded["mediaSessionId"]?.intValue)
                _ = try await sender.mediaCommand(transportID, "PAUSE", mediaSessionID: session, requestID: 2)
                sourceClock.advance(by: .seconds(15))

                let transfer = try await source.transferSession(to: destination)
                #expect(transfer.destination.playerState == "PAUSED")
                destinationClock.advance(by: .seconds(15))
                let player = try #require(await destination.state().json["player"])
                #expect(player["playerState"] == "PAUSED")
                #expect(player["currentTime"] == 40)
                #expect(player["contentId"] == "http://media.example.invalid/b")
                #expect(player["repeatMode"] == "REPEAT_ALL")
                #expect(player["itemIds"]?.arrayValue?.count == 3)
                let items = try #require(await destination.state().mediaStatusJSON?["items"]?.arrayValue)
                #expect(
                    items.compactMap { $0["media"]?["contentId"]?.stringValue }
                        == ["a", "b", "c"].map { "http://media.example.invalid/\($0)" })
            }
        }
    }

    @Test("POST /emulator/transfer moves the session through the destination's /emulator/resume-session")
    func transferOverHTTP() async throws {
        try await withEmulator(controlledConfiguration()) { source, sourceEndpoints in
            try await withEmulator(controlledConfiguration()) { destination, destinationEndpoints in
                let sourceHTTP = try #require(sourceEndpoints.httpPort)
                let destinationHTTP = try #require(destinationEndpoints.httpPort)
                let playing = try await startPlaying(on: sourceEndpoints)

                let answer = try await control(
                    "/emulator/transfer", #"{"to": "http://127.0.0.1:\#(destinationHTTP)"}"#, port: sourceHTTP)
                #expect(answer.status == 200, "\(answer.json)")
                #expect(answer.json["appId"] == .string(CastAppID.defaultMediaReceiver))
                #expect(answer.json["from"]?["sessionId"]?.stringValue == playing.sessionID)
                #expect(answer.json["from"]?["mediaSessionId"]?.intValue == playing.mediaSessionID)
                let newSession = try #require(answer.json["to"]?["sessionId"]?.stringValue)
                #expect(newSession != playing.sessionID)
                #expect(answer.json["to"]?["playerState"] == "PLAYING")

                let destinationState = try await control("/emulator/state", method: "GET", port: destinationHTTP).json
                #expect(destinationState["app"]?["sessionId"]?.stringValue == newSession)
                #expect(destinationState["player"]?["contentId"] == sampleMedia["contentId"])
                #expect(destinationState["device"]?["txt"]?["st"] == "1")
                let sourceState = try await control("/emulator/state", method: "GET", port: sourceHTTP).json
                #expect(sourceState["app"]?["isIdleScreen"] == true)
                #expect(sourceState["player"] == .null)
                #expect(sourceState["device"]?["txt"]?["st"] == "0")
                _ = try await playing.sender.next("the last MEDIA_STATUS") { _, payload in
                    payload.firstStatus?["idleReason"] == "CANCELLED"
                }

                // Nothing left to transfer; bad destinations.
                let again = try await control(
                    "/emulator/transfer", #"{"to": "http://127.0.0.1:\#(destinationHTTP)"}"#, port: sourceHTTP)
                #expect(again.status == 409)
                for body in [
                    "{}", #"{"to": 8008}"#, #"{"to": "ftp://127.0.0.1:8008"}"#, #"{"to": "http://127.0.0.1"}"#,
                    #"{"to": "http://127.0.0.1:8008/emulator"}"#,
                ] {
                    let bad = try await control("/emulator/transfer", body, port: destinationHTTP)
                    #expect(bad.status == 400, "\(body)")
                    #expect(bad.json["key"] == "to", "\(body)")
                }
                _ = destination
                _ = source
            }
        }
    }

    @Test(
        "A destination that cannot resume refuses (502 at the source, 400 at the destination); the source keeps its session"
    )
    func refusedTransfer() async throws {
        var appless = controlledConfiguration()
        appless.apps = [.backdrop]
        try await withEmulator(controlledConfiguration()) { source, sourceEndpoints in
            try await withEmulator(appless) { destination, destinationEndpoints in
                let sourceHTTP = try #require(sourceEndpoints.httpPort)
                let destinationHTTP = try #require(destinationEndpoints.httpPort)
                let playing = try await startPlaying(on: sourceEndpoints)

                let answer = try await control(
                    "/emulator/transfer", #"{"to": "http://127.0.0.1:\#(destinationHTTP)"}"#, port: sourceHTTP)
                #expect(answer.status == 502)
                #expect(answer.json["error"]?.stringValue?.contains("CC1AD845") == true, "\(answer.json)")
                let state = await source.state()
                #expect(state.runningApp?.sessionID == playing.sessionID)
                #expect(state.mediaStatus?.playerState == "PLAYING")
                await #expect(throws: EmulatorError.self) { try await source.transferSession(to: destination) }
                #expect(await source.state().runningApp?.sessionID == playing.sessionID)

                for (body, key) in [
                    (#"{"appId": "CC1AD845", "sessionState": {}}"#, "appId"),
                    (#"{"sessionState": {}}"#, "appId"),
                    (#"{"appId": "E8C28D3C"}"#, "sessionState"),
                    (#"{"appId": "E8C28D3C", "sessionState": {"loadRequestData": {"media": {}}}}"#, "appId"),
                    (#"{"appId": "E8C28D3C", "sessionState": [], "x": 1}"#, "x"),
                ] {
                    let bad = try await control("/emulator/resume-session", body, port: destinationHTTP)
                    #expect(bad.status == 400, "\(body)")
                    #expect(bad.json["key"] == .string(key), "\(body): \(bad.json)")
                }
                #expect(await destination.state().runningApp?.appID == CastAppID.backdrop)
            }
        }
    }

    @Test("A session state that does not load is refused at the destination, which stays as it was")
    func unloadableSessionState() async throws {
        try await withEmulator(controlledConfiguration()) { destination, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            let bad = try await control(
                "/emulator/resume-session",
                #"{"appId": "CC1AD845", "sessionState": {"loadRequestData": {"media": {"contentType": "video/mp4"}}}}"#,
                port: httpPort)
            #expect(bad.status == 400)
            #expect(bad.json["key"] == "sessionState")
            #expect(await destination.state().runningApp?.appID == CastAppID.backdrop)
            #expect(destination.txtRecord["st"] == "0")

            let good = try await control(
                "/emulator/resume-session",
                #"{"appId": "CC1AD845", "sessionState": {"loadRequestData": {"media": {"contentId": "http://media.example.invalid/x.mp3"}, "currentTime": 7, "autoplay": false}}}"#,
                port: httpPort)
            #expect(good.status == 200, "\(good.json)")
            #expect(good.json["playerState"] == "PAUSED")
            #expect(good.json["currentTime"] == 7)
            #expect(good.json["mediaSessionId"]?.intValue != nil)
        }
    }

    @Test("STORE_SESSION answers SESSION_STATE and changes nothing; RESUME_SESSION loads it on another device")
    func storeAndResumeOverCastV2() async throws {
        let sourceClock = ManualEmulatorClock()
        let destinationClock = ManualEmulatorClock()
        try await withEmulator(Self.configuration(sourceClock)) { _, sourceEndpoints in
            try await withEmulator(Self.configuration(destinationClock)) { _, destinationEndpoints in
                let playing = try await startPlaying(on: sourceEndpoints)
                sourceClock.advance(by: .seconds(12))
                try await playing.sender.media(playing.transportID, ["type": "STORE_SESSION", "requestId": 50])
                let stored = try await playing.sender.reply(to: 50)
                #expect(stored["type"] == "SESSION_STATE")
                let sessionState = try #require(stored["sessionState"])
                let load = try #require(sessionState["loadRequestData"])
                #expect(load["media"]?["contentId"] == sampleMedia["contentId"])
                #expect(load["currentTime"] == 12)
                #expect(load["autoplay"] == true)
                #expect(load["playbackRate"] == 1)
                #expect(load["queueData"] == nil)
                let unchanged = try #require(
                    try await playing.sender.mediaStatus(playing.transportID, requestID: 51).firstStatus)
                #expect(unchanged["mediaSessionId"]?.intValue == playing.mediaSessionID)
                #expect(unchanged["playerState"] == "PLAYING")

                let receiver = try await RawCastSender.connect(to: destinationEndpoints)
                let transportID = try await receiver.launchMediaReceiver()
                try await receiver.media(transportID, ["type": "STORE_SESSION", "requestId": 59])
                #expect(try await receiver.reply(to: 59)["sessionState"] == [:])
                try await receiver.media(
                    transportID, ["type": "RESUME_SESSION", "requestId": 60, "sessionState": sessionState])
                let resumed = try #require(try await receiver.reply(to: 60).firstStatus)
                #expect(resumed["playerState"] == "PLAYING")
                #expect(resumed["currentTime"] == 12)
                #expect(resumed["media"]?["contentId"] == sampleMedia["contentId"])

                try await receiver.media(transportID, ["type": "RESUME_SESSION", "requestId": 61, "sessionState": [:]])
                let refused = try await receiver.reply(to: 61)
                #expect(refused["type"] == "INVALID_REQUEST")
                #expect(refused["reason"] == "INVALID_PARAMS")

                // Paused stays paused.
                _ = try await playing.sender.mediaCommand(
                    playing.transportID, "PAUSE", mediaSessionID: playing.mediaSessionID, requestID: 52)
                try await playing.sender.media(playing.transportID, ["type": "STORE_SESSION", "requestId": 53])
                let pausedState = try #require(try await playing.sender.reply(to: 53)["sessionState"])
                #expect(pausedState["loadRequestData"]?["autoplay"] == false)
                try await receiver.media(
                    transportID, ["type": "RESUME_SESSION", "requestId": 62, "sessionState": pausedState])
                #expect(try await receiver.reply(to: 62).firstStatus?["playerState"] == "PAUSED")
            }
        }
    }
}
