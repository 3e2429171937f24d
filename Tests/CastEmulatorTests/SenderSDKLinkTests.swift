import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import Testing

/// The sender-SDK behaviours through a real TLS socket and the real HTTP server, as castd and
/// other senders meet them.
@Suite("Sender SDK behaviours over TLS and HTTP")
struct SenderSDKLinkTests {
    @Test("QUEUE_LOAD, QUEUE_NEXT and an item ending on the clock: statuses reach the sender, same media session")
    func queueOverTLS() async throws {
        let (configuration, clock) = manualClockConfiguration()
        try await withEmulator(configuration) { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launchMediaReceiver()
            try await sender.media(
                transportID,
                [
                    "type": "QUEUE_LOAD", "requestId": 10,
                    "items": [
                        ["media": queueMedia("a", duration: 30)], ["media": queueMedia("b", duration: 30)],
                        ["media": queueMedia("c")],
                    ],
                ]
            )
            let loaded = try #require(try await sender.reply(to: 10).firstStatus)
            let session = try #require(loaded["mediaSessionId"]?.intValue)
            let ids = loaded["items"]?.arrayValue?.compactMap { $0["itemId"]?.intValue } ?? []
            #expect(ids.count == 3)

            let next = try await sender.mediaCommand(transportID, "QUEUE_NEXT", mediaSessionID: session, requestID: 11)
            #expect(next.firstStatus?["currentItemId"]?.intValue == ids[1])
            #expect(next.firstStatus?["mediaSessionId"]?.intValue == session)

            clock.advance(by: .seconds(31))
            let third = try await sender.next(timeout: .seconds(5), "the third item playing") { _, payload in
                payload.firstStatus?["currentItemId"]?.intValue == ids[2]
                    && payload.firstStatus?["playerState"] == "PLAYING"
            }
            #expect(third.message.destinationID == "*")
            #expect(third.payload.firstStatus?["mediaSessionId"]?.intValue == session)
            #expect(third.payload.firstStatus?["media"]?["contentId"] == queueMedia("c")["contentId"])
        }
    }

    @Test("An unplayable LOAD over TLS: IDLE ERROR broadcast, then LOAD_FAILED with detailedErrorCode 104")
    func loadFailedOverTLS() async throws {
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launchMediaReceiver()
            try await sender.media(
                transportID,
                [
                    "type": "LOAD", "requestId": 20,
                    "media": ["contentId": "http://x.invalid/a.flv", "contentType": "video/x-flv"],
                ]
            )
            let idle = try await sender.nextPayload()
            #expect(idle["requestId"] == 0)
            #expect(idle.firstStatus?["idleReason"] == "ERROR")
            let failed = try await sender.nextPayload()
            #expect(failed["type"] == "LOAD_FAILED")
            #expect(failed["requestId"] == 20)
            #expect(failed["detailedErrorCode"] == 104)
            #expect(CastDeviceError(payload: failed) != nil, "castd's parser takes it as a device error")
        }
    }

    @Test("The echo app over TLS: the sender gets its payload back; with broadcast: true, every connected sender does")
    func echoOverTLS() async throws {
        try await withEmulator { _, endpoints in
            let a = try await RawCastSender.connect(to: endpoints, sourceID: "sender-a")
            let b = try await RawCastSender.connect(to: endpoints, sourceID: "sender-b")
            let transportID = try await a.launch(EmulatorApp.echo.appID)
            try await a.connect(to: transportID)
            try await b.connect()
            try await b.connect(to: transportID)
            try await b.roundTrip()

            try await a.send(
                .string(
                    source: "sender-a", destination: transportID, namespace: EmulatorApp.echoNamespace, text: "just me")
            )
            let back = try await a.next()
            #expect(back.payloadUtf8 == "just me")
            #expect(back.destinationID == "sender-a")
            #expect(back.sourceID == transportID)

            let loud = #"{"broadcast": true, "text": "all of you"}"#
            try await a.send(
                .string(source: "sender-a", destination: transportID, namespace: EmulatorApp.echoNamespace, text: loud))
            #expect(try await a.next().destinationID == "sender-a")
            #expect(try await a.next().destinationID == "*")
            let seenByB = try await b.next(timeout: .seconds(5), "the echo broadcast") { message, _ in
                message.namespace == EmulatorApp.echoNamespace
            }
            #expect(seenByB.message.destinationID == "*")
            #expect(seenByB.message.payloadUtf8 == loud)
        }
    }

    @Test("A group over TLS: MULTIZONE_STATUS lists the members; the TXT record has ca bit 32 and the group model")
    func groupOverTLS() async throws {
        var configuration = EmulatorConfiguration()
        configuration.capabilities = 4
        configuration.makeGroup(of: [EmulatorGroupMember(deviceID: "0123456789abcdef0123456789abcdef", name: "Kitchen")]
        )
        try await withEmulator(configuration) { emulator, endpoints in
            #expect(emulator.txtRecord["ca"] == "36")
            #expect(emulator.txtRecord["md"] == "Google Cast Group")
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()
            try await sender.send(
                to: "receiver-0", namespace: CastNamespace.multizone, ["type": "GET_STATUS", "requestId": 3])
            let status = try await sender.reply(to: 3)
            #expect(status["type"] == "MULTIZONE_STATUS")
            #expect(status["status"]?["devices"]?.arrayValue?.first?["name"] == "Kitchen")
            #expect(status["status"]?["isMultichannel"] == false)
        }
    }

    @Test("GET /emulator/state over HTTP: app, player, volume, senders, launches and loads with their credentials")
    func stateEndpoint() async throws {
        var configuration = EmulatorConfiguration()
        configuration.httpPort = 0
        configuration.fixedVolume = true
        try await withEmulator(configuration) { emulator, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            let sender = try await RawCastSender.connect(to: endpoints, sourceID: "sender-state")
            try await sender.connect()
            try await sender.receiver([
                "type": "LAUNCH", "appId": .string(EmulatorApp.androidTV.appID), "requestId": 1, "language": "fr-CA",
                "supportedAppTypes": ["WEB", "ANDROID_TV"],
                "appParams": [
                    "launchCheckerParams": [
                        "credentialsData": ["credentials": "atv-cred", "credentialsType": "android"]
                    ]
                ],
            ])
            let transportID = try #require(try await sender.reply(to: 1).firstApplication?["transportId"]?.stringValue)
            try await sender.connect(to: transportID)
            try await sender.media(
                transportID,
                [
                    "type": "LOAD", "requestId": 2, "media": sampleMedia, "credentials": "load-cred",
                    "credentialsType": "cloud", "autoplay": false,
                ]
            )
            _ = try await sender.reply(to: 2)

            let response = try await HTTPFetch.get(
                host: endpoints.host, port: httpPort, path: "/emulator/state", tls: false)
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/json")
            let state = try JSONValue.parse(response.body)
            #expect(state["app"]?["appId"] == .string(EmulatorApp.androidTV.appID))
            #expect(state["app"]?["appType"] == "ANDROID_TV")
            #expect(state["app"]?["sessionId"] == .string(transportID))
            #expect(state["player"]?["playerState"] == "PAUSED")
            #expect(state["player"]?["contentId"] == sampleMedia["contentId"])
            #expect(state["player"]?["itemIds"]?.arrayValue?.count == 1)
            #expect(state["player"]?["currentItemId"] == state["player"]?["itemIds"]?.arrayValue?.first)
            #expect(state["player"]?["repeatMode"] == "REPEAT_OFF")
            #expect(state["player"]?["break"] == .null)
            #expect(state["volume"]?["controlType"] == "fixed")
            #expect(state["senders"] == ["sender-state"])
            #expect(state["device"]?["fixedVolume"] == true)
            #expect(state["device"]?["txt"]?["st"] == "1")
            let launch = try #require(state["launches"]?.arrayValue?.last)
            #expect(launch["appId"] == .string(EmulatorApp.androidTV.appID))
            #expect(launch["language"] == "fr-CA")
            #expect(launch["supportedAppTypes"] == ["WEB", "ANDROID_TV"])
            #expect(launch["credentials"] == "atv-cred")
            #expect(launch["credentialsType"] == "android")
            #expect(launch["sender"] == "sender-state")
            let load = try #require(state["loads"]?.arrayValue?.last)
            #expect(load["contentId"] == sampleMedia["contentId"])
            #expect(load["credentials"] == "load-cred")
            #expect(load["credentialsType"] == "cloud")
            #expect(load["result"] == "LOADED")
            #expect(await emulator.state().loads.last?.credentials == "load-cred")

            let index = try await HTTPFetch.get(host: endpoints.host, port: httpPort, path: "/emulator", tls: false)
            #expect(
                try JSONValue.parse(index.body)["routes"]?.arrayValue?.contains { $0["path"] == "/emulator/state" }
                    == true)
            let missing = try await HTTPFetch.get(
                host: endpoints.host, port: httpPort, path: "/emulator/nope", tls: false)
            #expect(missing.status == 404)
            #expect(try JSONValue.parse(missing.body)["error"] != nil)
            #expect(
                try await HTTPFetch.get(host: endpoints.host, port: httpPort, path: "/setup/eureka_info", tls: false)
                    .status == 200)
        }
    }

    @Test("The state endpoint refuses other methods with 405 and a JSON error")
    func stateEndpointMethods() async throws {
        var configuration = EmulatorConfiguration()
        configuration.httpPort = 0
        try await withEmulator(configuration) { _, endpoints in
            let response = try await HTTPFetch.request(
                method: "POST", host: endpoints.host, port: try #require(endpoints.httpPort), path: "/emulator/state",
                body: #"{"x":1}"#, tls: false
            )
            #expect(response.status == 405)
            #expect(response.headers["allow"] == "GET")
            #expect(try JSONValue.parse(response.body)["error"] != nil)
        }
    }
}
