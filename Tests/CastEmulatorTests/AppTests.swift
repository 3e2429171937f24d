import CastTestSupport
import CastProtocol
import Testing

@testable import CastEmulator

/// The receiver side of the sender SDK: launch options, the Android TV app, echoing apps,
/// `--app` apps, fixed volume and multizone groups.
@Suite("Apps, launch options, fixed volume, groups (state machine)", .tags(.cpuBound))
struct AppTests {
    static let androidTV = EmulatorApp.androidTV.appID
    static let echo = EmulatorApp.echo.appID

    @Test(
        "Android TV app: LAUNCH_ERROR NOT_FOUND unless supportedAppTypes has ANDROID_TV; then appType ANDROID_TV with media"
    )
    func androidTVApp() throws {
        let harness = DeviceHarness()
        for (requestID, types) in [(1, nil), (2, ["WEB"]), (3, [])] as [(Int, JSONValue?)] {
            var launch: [String: JSONValue] = [
                "type": "LAUNCH", "appId": .string(Self.androidTV), "requestId": .number(Double(requestID)),
            ]
            if let types { launch["supportedAppTypes"] = types }
            let sent = harness.receiver(.object(launch))
            #expect(sent.count == 1)
            #expect(
                sent.reply(to: requestID) == [
                    "type": "LAUNCH_ERROR", "requestId": .number(Double(requestID)), "reason": "NOT_FOUND",
                ])
        }
        #expect(harness.device.running?.app.appID == CastAppID.backdrop)
        #expect(harness.device.history.launches.isEmpty, "refused launches are not recorded")

        let sent = try harness.launch(Self.androidTV, extra: ["supportedAppTypes": ["WEB", "ANDROID_TV"]])
        let app = try #require(sent.reply(to: 900)?.firstApplication)
        #expect(app["appType"] == "ANDROID_TV")
        #expect(app["displayName"] == "Emulated Android TV app")
        #expect(app["namespaces"]?.arrayValue?.contains(["name": .string(CastNamespace.media)]) == true)
        #expect(harness.load(sampleMedia).reply(to: 800)?["type"] == "MEDIA_STATUS")

        // A Web app is refused to a sender that only supports Android TV apps.
        let webOnly = harness.receiver([
            "type": "LAUNCH", "appId": "CC1AD845", "supportedAppTypes": ["ANDROID_TV"], "requestId": 5,
        ])
        #expect(webOnly.reply(to: 5)?["type"] == "LAUNCH_ERROR")
    }

    @Test("Credentials are recorded: LAUNCH credentialsData, language, app types; LOAD credentials and credentialsType")
    func credentialsRecorded() throws {
        let harness = DeviceHarness()
        try harness.launch(
            Self.androidTV,
            extra: [
                "language": "nl-BE", "supportedAppTypes": ["WEB", "ANDROID_TV"],
                "appParams": [
                    "launchCheckerParams": [
                        "credentialsData": ["credentials": "launch-token", "credentialsType": "android"]
                    ]
                ],
            ]
        )
        harness.now = .seconds(3)
        _ = harness.load(sampleMedia, extra: ["credentials": "load-token", "credentialsType": "cloud"])
        let launch = try #require(harness.device.history.launches.last)
        #expect(launch.appID == Self.androidTV)
        #expect(launch.sender == DeviceHarness.sender)
        #expect(launch.language == "nl-BE")
        #expect(launch.supportedAppTypes == ["WEB", "ANDROID_TV"])
        #expect(launch.credentials == "launch-token")
        #expect(launch.credentialsType == "android")
        let load = try #require(harness.device.history.loads.last)
        #expect(load.appID == Self.androidTV)
        #expect(load.contentID == sampleMedia["contentId"]?.stringValue)
        #expect(load.credentials == "load-token")
        #expect(load.credentialsType == "cloud")
        #expect(load.time == .seconds(3))
        #expect(load.mediaSessionID == harness.device.player?.mediaSessionID)
    }

    @Test("History keeps the last 100 launches and loads")
    func historyIsBounded() throws {
        let harness = DeviceHarness()
        try harness.launch()
        for index in 0..<105 {
            _ = harness.load(media(["contentId": .string("http://x.invalid/\(index)")]))
            _ = harness.receiver(["type": "LAUNCH", "appId": "CC1AD845", "requestId": .number(Double(1000 + index))])
        }
        #expect(harness.device.history.loads.count == 100)
        #expect(harness.device.history.loads.first?.contentID == "http://x.invalid/5")
        #expect(harness.device.history.launches.count == 100)
    }

    @Test(
        "Echo app: the same payload back to the sender (JSON or not); broadcast: true also to * on every connection to it"
    )
    func echo() throws {
        let harness = DeviceHarness()
        harness.device.connectionOpened(2)
        _ = harness.send(CastNamespace.connection, to: "receiver-0", ["type": "CONNECT"], from: "sender-2", on: 2)
        let app = try #require(try harness.launch(Self.echo).reply(to: 900)?.firstApplication)
        #expect(app["namespaces"] == [["name": .string(EmulatorApp.echoNamespace)]])
        _ = harness.send(
            CastNamespace.connection, to: harness.transportID, ["type": "CONNECT"], from: "sender-2", on: 2)

        let text = #"{"hello": "wörld", "n": 1.50}"#
        let plain = harness.send(
            .string(
                source: DeviceHarness.sender, destination: harness.transportID, namespace: EmulatorApp.echoNamespace,
                text: text))
        #expect(plain.count == 1)
        #expect(plain.first?.message.payloadUtf8 == text, "byte for byte")
        #expect(plain.first?.destination == DeviceHarness.sender)
        #expect(plain.first?.source == harness.transportID)
        #expect(plain.first?.namespace == EmulatorApp.echoNamespace)

        let notJSON = harness.send(
            .string(
                source: DeviceHarness.sender, destination: harness.transportID, namespace: EmulatorApp.echoNamespace,
                text: "ping?"))
        #expect(notJSON.first?.message.payloadUtf8 == "ping?")

        let loud = #"{"broadcast":true,"say":"hi"}"#
        let broadcast = harness.send(
            .string(
                source: "sender-2", destination: harness.transportID, namespace: EmulatorApp.echoNamespace, text: loud),
            on: 2)
        #expect(broadcast.map(\.destination) == ["sender-2", "*", "*"])
        #expect(broadcast.map(\.connection) == [2, 1, 2])
        #expect(broadcast.allSatisfy { $0.message.payloadUtf8 == loud })

        // Undeclared namespaces (media included) and messages without CONNECT: dropped, never answered.
        #expect(harness.send("urn:x-cast:com.example.other", to: harness.transportID, ["x": 1]).isEmpty)
        #expect(harness.media(["type": "GET_STATUS", "requestId": 1]).isEmpty)
        harness.device.connectionOpened(3)
        #expect(
            harness.send(EmulatorApp.echoNamespace, to: harness.transportID, ["x": 1], from: "sender-3", on: 3).isEmpty)
    }

    @Test("--app values: ID:NAME:NAMESPACE[,NAMESPACE…]; clear errors for bad ones")
    func parseApps() throws {
        let chat = try EmulatorApp(parsing: "ABCD1234:Chat room:urn:x-cast:com.example.chat")
        #expect(chat.appID == "ABCD1234")
        #expect(chat.displayName == "Chat room")
        #expect(chat.namespaces == ["urn:x-cast:com.example.chat"])
        #expect(chat.echoes && !chat.hasMediaPlayer)
        let player = try EmulatorApp(
            parsing: "MultizoneLeader:Player:urn:x-cast:com.google.cast.media,urn:x-cast:com.example.ctl")
        #expect(player.hasMediaPlayer)
        #expect(player.customNamespaces == ["urn:x-cast:com.example.ctl"])

        for (value, complaint) in [
            ("ABCD1234", "ID, NAME and at least one NAMESPACE"),
            ("ABCD1234:Chat", "ID, NAME and at least one NAMESPACE"),
            (":Chat:urn:x-cast:a", "the ID must be"),
            ("AB CD:Chat:urn:x-cast:a", "the ID must be"),
            ("ABCD1234: :urn:x-cast:a", "the NAME is empty"),
            ("ABCD1234:Chat:com.example.chat", "is not a namespace"),
            ("ABCD1234:Chat:urn:x-cast:a,,urn:x-cast:b", "is not a namespace"),
        ] {
            #expect(throws: EmulatorError.self, "\(value)") { try EmulatorApp(parsing: value) }
            do {
                _ = try EmulatorApp(parsing: value)
            } catch {
                #expect(error.code == .invalidArgument)
                #expect(error.message.contains(complaint), "\(value): \(error.message)")
                #expect(error.message.contains(value))
            }
        }
    }

    @Test(
        "An --app app echoes on its custom namespaces, plays media when it declares it, and replaces a built-in app with its id"
    )
    func customApp() throws {
        let custom = try EmulatorApp(
            parsing: "CC1AD845:My receiver:urn:x-cast:com.google.cast.media,urn:x-cast:com.example.ctl")
        let harness = DeviceHarness(apps: [custom] + EmulatorApp.builtIn)
        let app = try #require(try harness.launch().reply(to: 900)?.firstApplication)
        #expect(app["displayName"] == "My receiver")
        let echoed = harness.send("urn:x-cast:com.example.ctl", to: harness.transportID, ["cmd": "next"])
        #expect(echoed.first?.payload == ["cmd": "next"])
        #expect(
            harness.load(sampleMedia).reply(to: 800)?["type"] == "MEDIA_STATUS",
            "the media namespace is the player's, not echoed")
    }

    @Test("Fixed volume: controlType fixed; SET_VOLUME with a level is BAD_PARAMETER; mute still works")
    func fixedVolume() throws {
        let harness = DeviceHarness(settings: .init(fixedVolume: true))
        let status = harness.receiver(["type": "GET_STATUS", "requestId": 1]).reply(to: 1)
        #expect(status?["status"]?["volume"]?["controlType"] == "fixed")
        let refused = harness.receiver(["type": "SET_VOLUME", "volume": ["level": 0.5], "requestId": 2])
        #expect(refused.count == 1)
        #expect(refused.reply(to: 2) == ["type": "INVALID_REQUEST", "requestId": 2, "reason": "BAD_PARAMETER"])
        let muted = harness.receiver(["type": "SET_VOLUME", "volume": ["muted": true], "requestId": 3])
        #expect(muted.reply(to: 3)?["status"]?["volume"]?["muted"] == true)
        #expect(muted.reply(to: 3)?["status"]?["volume"]?["level"] == 1)

        let normal = DeviceHarness()
        #expect(
            normal.receiver(["type": "GET_STATUS", "requestId": 1]).reply(to: 1)?["status"]?["volume"]?["controlType"]
                == "attenuation")
    }

    @Test(
        "Multizone group: GET_STATUS on the multizone namespace is MULTIZONE_STATUS with the members; a lone device ignores it"
    )
    func multizone() throws {
        let members = [
            EmulatorGroupMember(deviceID: "0123456789abcdef0123456789abcdef", name: "Kitchen"),
            try EmulatorGroupMember(parsing: "fedcba9876543210fedcba9876543210=Living Room"),
        ]
        let group = DeviceHarness(settings: .init(groupMembers: members))
        let sent = group.send(CastNamespace.multizone, to: "receiver-0", ["type": "GET_STATUS", "requestId": 7])
        #expect(sent.count == 1)
        #expect(sent.first?.namespace == CastNamespace.multizone)
        #expect(sent.first?.source == "receiver-0")
        #expect(
            sent.reply(to: 7) == [
                "type": "MULTIZONE_STATUS", "requestId": 7,
                "status": [
                    "devices": [
                        ["deviceId": "0123456789abcdef0123456789abcdef", "name": "Kitchen", "capabilities": 4],
                        ["deviceId": "fedcba9876543210fedcba9876543210", "name": "Living Room", "capabilities": 4],
                    ],
                    "isMultichannel": false,
                ],
            ]
        )
        #expect(
            group.send(CastNamespace.multizone, to: "receiver-0", ["type": "GET_STATUS"]).isEmpty,
            "no requestId, no answer")
        #expect(
            group.send(CastNamespace.multizone, to: "receiver-0", ["type": "GET_CASTING_GROUPS", "requestId": 8]).reply(
                to: 8)?["type"] == "CASTING_GROUPS")
        // A group plays media like any device.
        try group.launch()
        #expect(group.load(sampleMedia).reply(to: 800)?.firstStatus?["playerState"] == "PLAYING")

        let lone = DeviceHarness()
        #expect(lone.send(CastNamespace.multizone, to: "receiver-0", ["type": "GET_STATUS", "requestId": 7]).isEmpty)

        for bad in ["no-equals", "=Name", "id=", "two words=Name"] {
            #expect(throws: EmulatorError.self, "\(bad)") { try EmulatorGroupMember(parsing: bad) }
        }
    }

    @Test("Groups announce TXT ca bit 32 and the group model")
    func groupTXT() {
        var configuration = EmulatorConfiguration()
        configuration.capabilities = 4
        configuration.makeGroup(of: [EmulatorGroupMember(deviceID: "a", name: "A")])
        let txt = EmulatorDeviceDescription(configuration: configuration).txtRecord(runningApp: nil)
        #expect(txt["ca"] == "36")
        #expect(txt["md"] == "Google Cast Group")
        #expect(
            EmulatorDeviceDescription(configuration: EmulatorConfiguration()).txtRecord(runningApp: nil)["ca"] == "5")
    }
}
