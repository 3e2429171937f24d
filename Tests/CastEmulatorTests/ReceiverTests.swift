import CastEmulator
import CastProtocol
import CastTestSupport
import Testing

@Suite("Platform receiver (receiver-0)")
struct ReceiverTests {
    @Test("GET_STATUS: Backdrop idle screen, real-device fields, reply addressed to the requester")
    func getStatusShowsBackdrop() async throws {
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()
            try await sender.receiver(["type": "GET_STATUS", "requestId": 1])
            let message = try await sender.next()
            #expect(message.sourceID == "receiver-0")
            #expect(message.destinationID == sender.sourceID)
            #expect(message.namespace == CastNamespace.receiver)
            let payload = try JSONValue.parse(message.payloadUtf8)
            #expect(payload["type"] == "RECEIVER_STATUS")
            #expect(payload["requestId"]?.intValue == 1)
            let app = try #require(payload.firstApplication)
            #expect(app["appId"] == "E8C28D3C")
            #expect(app["displayName"] == "Backdrop")
            #expect(app["isIdleScreen"] == true)
            #expect(app["launchedFromCloud"] == false)
            #expect(app["statusText"] == "")
            #expect(app["iconUrl"] == "")
            #expect(app["sessionId"]?.stringValue?.count == 36)
            #expect(app["transportId"] == app["sessionId"])
            #expect(
                app["namespaces"]?.arrayValue?.compactMap { $0["name"]?.stringValue }.contains(CastNamespace.media)
                    == false)
            let volume = try #require(payload["status"]?["volume"])
            #expect(volume["controlType"] == "attenuation")
            #expect(volume["level"]?.doubleValue == 1)
            #expect(volume["muted"] == false)
            #expect(volume["stepInterval"]?.doubleValue == Double(Float(0.05)))
            #expect(payload["status"]?["userEq"] == [:])
            // The requester's message parses as castd parses real devices.
            let status = CastReceiverStatus(payload: payload)
            #expect(status.applications.first?.isIdleScreen == true)
        }
    }

    @Test(
        "LAUNCH CC1AD845: reply echoes requestId with transportId and media namespace, then a * broadcast with requestId 0"
    )
    func launchRepliesThenBroadcasts() async throws {
        try await withEmulator { emulator, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()
            try await sender.receiver(["type": "GET_STATUS", "requestId": 1])
            let backdropSession = try await sender.reply(to: 1).firstApplication?["sessionId"]?.stringValue

            try await sender.receiver(["type": "LAUNCH", "appId": "CC1AD845", "requestId": 7])
            let reply = try await sender.next()
            let replyPayload = try JSONValue.parse(reply.payloadUtf8)
            #expect(reply.destinationID == sender.sourceID)
            #expect(replyPayload["type"] == "RECEIVER_STATUS")
            #expect(replyPayload["requestId"]?.intValue == 7)
            let app = try #require(replyPayload.firstApplication)
            #expect(app["appId"] == "CC1AD845")
            #expect(app["displayName"] == "Default Media Receiver")
            #expect(app["isIdleScreen"] == false)
            let transportID = try #require(app["transportId"]?.stringValue)
            #expect(!transportID.isEmpty)
            #expect(app["sessionId"]?.stringValue != backdropSession)
            let namespaces = app["namespaces"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            #expect(namespaces.contains(CastNamespace.media))

            let broadcast = try await sender.next()
            let broadcastPayload = try JSONValue.parse(broadcast.payloadUtf8)
            #expect(broadcast.destinationID == "*")
            #expect(broadcast.sourceID == "receiver-0")
            #expect(broadcastPayload["requestId"]?.intValue == 0)
            #expect(broadcastPayload.firstApplication?["transportId"]?.stringValue == transportID)

            let state = await emulator.state()
            #expect(state.runningApp?.transportID == transportID)
        }
    }

    @Test("A second LAUNCH of the running app keeps its session")
    func relaunchKeepsSession() async throws {
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launch(requestID: 2)
            try await sender.receiver(["type": "LAUNCH", "appId": "CC1AD845", "requestId": 3])
            let reply = try await sender.reply(to: 3)
            #expect(reply.firstApplication?["transportId"]?.stringValue == transportID)
        }
    }

    @Test("LAUNCH of an unknown app: LAUNCH_ERROR NOT_FOUND, nothing changes")
    func launchUnknownApp() async throws {
        try await withEmulator { emulator, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()
            try await sender.receiver(["type": "LAUNCH", "appId": "DEADBEEF", "requestId": 4])
            let payload = try await sender.nextPayload()
            #expect(payload["type"] == "LAUNCH_ERROR")
            #expect(payload["reason"] == "NOT_FOUND")
            #expect(payload["requestId"]?.intValue == 4)
            #expect(CastDeviceError(payload: payload)?.reason == "NOT_FOUND")
            // No broadcast followed: the next message is the answer to the next request.
            try await sender.receiver(["type": "GET_STATUS", "requestId": 5])
            let next = try await sender.nextPayload()
            #expect(next["requestId"]?.intValue == 5)
            #expect(next.firstApplication?["appId"] == "E8C28D3C")
            #expect(await emulator.state().runningApp?.appID == "E8C28D3C")
        }
    }

    @Test("GET_APP_AVAILABILITY answers with responseType, not type")
    func appAvailability() async throws {
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()
            try await sender.receiver([
                "type": "GET_APP_AVAILABILITY", "appId": ["CC1AD845", "00000000"], "requestId": 6,
            ])
            let payload = try await sender.reply(to: 6)
            #expect(payload["responseType"] == "GET_APP_AVAILABILITY")
            #expect(payload["type"] == nil)
            #expect(payload["availability"]?["CC1AD845"] == "APP_AVAILABLE")
            #expect(payload["availability"]?["00000000"] == "APP_UNAVAILABLE")
            #expect(CastEnvelope(payload).type == "GET_APP_AVAILABILITY")
        }
    }

    @Test(
        "STOP: a wrong sessionId is INVALID_SESSION_ID; the right one goes back to Backdrop and CLOSEs the app's senders"
    )
    func stop() async throws {
        try await withEmulator { emulator, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launchMediaReceiver()
            try await sender.receiver(["type": "STOP", "sessionId": "not-the-session", "requestId": 10])
            let error = try await sender.reply(to: 10)
            #expect(error["type"] == "INVALID_REQUEST")
            #expect(error["reason"] == "INVALID_SESSION_ID")

            try await sender.receiver(["type": "STOP", "sessionId": .string(transportID), "requestId": 11])
            // The app's virtual connection is closed by the device first.
            let close = try await sender.next()
            #expect(close.namespace == CastNamespace.connection)
            #expect(close.sourceID == transportID)
            #expect(close.destinationID == sender.sourceID)
            #expect(try JSONValue.parse(close.payloadUtf8)["type"] == "CLOSE")
            let reply = try await sender.reply(to: 11)
            #expect(reply.firstApplication?["appId"] == "E8C28D3C")
            #expect(reply.firstApplication?["isIdleScreen"] == true)
            #expect(reply.firstApplication?["sessionId"]?.stringValue != transportID)
            let broadcast = try await sender.nextPayload()
            #expect(broadcast["requestId"]?.intValue == 0)
            #expect(await emulator.state().connections.first?.virtualConnections.map(\.endpoint) == ["receiver-0"])
        }
    }

    @Test("SET_VOLUME: level and muted change and are broadcast; out of range is INVALID_REQUEST")
    func setVolume() async throws {
        try await withEmulator { _, endpoints in
            let a = try await RawCastSender.connect(to: endpoints)
            let b = try await RawCastSender.connect(to: endpoints)
            try await a.connect()
            try await b.connect()
            try await b.roundTrip()  // b's CONNECT is in force before a changes the volume
            try await a.receiver(["type": "SET_VOLUME", "volume": ["level": 0.3], "requestId": 20])
            let reply = try await a.reply(to: 20)
            let level = try #require(reply["status"]?["volume"]?["level"]?.doubleValue)
            #expect(abs(level - 0.3) < 1e-6)
            let seenByB = try await b.nextPayload()
            #expect(seenByB["requestId"]?.intValue == 0)
            #expect(abs((seenByB["status"]?["volume"]?["level"]?.doubleValue ?? 0) - 0.3) < 1e-6)

            try await a.receiver(["type": "SET_VOLUME", "volume": ["muted": true], "requestId": 21])
            #expect(try await a.reply(to: 21)["status"]?["volume"]?["muted"] == true)

            try await a.receiver(["type": "SET_VOLUME", "volume": ["level": 1.5], "requestId": 22])
            let error = try await a.reply(to: 22)
            #expect(error["type"] == "INVALID_REQUEST")
            #expect(error["reason"] == "BAD_PARAMETER")
        }
    }

    @Test("CONNECTED only when the CONNECT offers protocol versions")
    func connectedOnlyWithVersions() async throws {
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()  // Chromium-style CONNECT: senderInfo, no versions
            try await sender.receiver(["type": "GET_STATUS", "requestId": 1])
            let first = try await sender.nextPayload()
            #expect(first["type"] == "RECEIVER_STATUS")  // not CONNECTED

            try await sender.send(
                .json(
                    source: "sender-versions", destination: "receiver-0", namespace: CastNamespace.connection,
                    payload: ["type": "CONNECT", "connType": 0, "protocolVersionList": [0, 1, 2, 3]]
                )
            )
            let connected = try await sender.next()
            #expect(connected.namespace == CastNamespace.connection)
            #expect(connected.sourceID == "receiver-0")
            #expect(connected.destinationID == "sender-versions")
            let payload = try JSONValue.parse(connected.payloadUtf8)
            #expect(payload["type"] == "CONNECTED")
            #expect(payload["protocolVersion"]?.intValue == 3)
        }
    }

    @Test("A message without CONNECT is dropped; after CONNECT the same request is answered")
    func messageWithoutConnectIsDropped() async throws {
        try await withEmulator { emulator, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.receiver(["type": "GET_STATUS", "requestId": 1])  // no virtual connection yet
            try await sender.receiver(["type": "LAUNCH", "appId": "CC1AD845", "requestId": 2])
            try await sender.connect()
            try await sender.receiver(["type": "GET_STATUS", "requestId": 3])
            // Messages on one connection are handled in order: had 1 or 2 been answered, their
            // replies would come before this one.
            let first = try await sender.nextPayload()
            #expect(first["requestId"]?.intValue == 3)
            #expect(first.firstApplication?["appId"] == "E8C28D3C")
            #expect(await emulator.state().senders == [sender.sourceID])
        }
    }

    @Test("A payload that is not JSON is ignored and the link goes on")
    func badJSONIsIgnored() async throws {
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()
            try await sender.send(
                .string(
                    source: sender.sourceID, destination: "receiver-0", namespace: CastNamespace.receiver,
                    text: "{not json")
            )
            try await sender.receiver(["type": "GET_STATUS", "requestId": 2])
            #expect(try await sender.nextPayload()["requestId"]?.intValue == 2)
            #expect(sender.isActive)
        }
    }

    @Test("An unknown receiver request type is INVALID_REQUEST INVALID_COMMAND")
    func unknownRequestType() async throws {
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()
            try await sender.receiver(["type": "DANCE", "requestId": 3])
            let payload = try await sender.reply(to: 3)
            #expect(payload["type"] == "INVALID_REQUEST")
            #expect(payload["reason"] == "INVALID_COMMAND")
        }
    }

    @Test(
        "TXT record: realistic keys; st and rs follow the running app, and changes are announced",
        .timeLimit(.minutes(1)))
    func txtRecord() async throws {
        var configuration = EmulatorConfiguration()
        configuration.name = "Living Room TV"
        configuration.deviceID = "8d8f27dc2b7d4e0a9d4b1b1e6c1f3f2a"
        try await withEmulator(configuration) { emulator, endpoints in
            let idle = emulator.txtRecord
            #expect(Set(idle.keys) == ["id", "cd", "rm", "ve", "md", "ic", "fn", "ca", "st", "bs", "nf", "rs"])
            #expect(idle["id"] == "8d8f27dc2b7d4e0a9d4b1b1e6c1f3f2a")
            #expect(idle["fn"] == "Living Room TV")
            #expect(idle["md"] == "Chromecast")
            #expect(idle["ca"] == "5")
            #expect(idle["ve"] == "05")
            #expect(idle["ic"] == "/setup/icon.png")
            #expect(idle["st"] == "0")
            #expect(idle["rs"] == "")
            #expect(idle["cd"]?.count == 32)
            #expect(idle["cd"] == idle["cd"]?.uppercased())
            #expect(idle["bs"]?.hasPrefix("FA8FCA") == true)

            var changes = emulator.txtRecordChanges().makeAsyncIterator()
            #expect(await changes.next() == idle)

            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launch()
            #expect(emulator.txtRecord["st"] == "1")
            #expect(emulator.txtRecord["rs"] == "Default Media Receiver")
            #expect(emulator.txtRecord["cd"] == idle["cd"])
            #expect(await changes.next() == emulator.txtRecord)

            try await sender.receiver(["type": "STOP", "sessionId": .string(transportID), "requestId": 5])
            _ = try await sender.reply(to: 5)
            #expect(await changes.next() == idle)
        }
    }
}
