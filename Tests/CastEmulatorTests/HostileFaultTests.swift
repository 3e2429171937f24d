import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import LengthPrefixFraming
import Testing

@Suite("Hostile-device faults over real TLS: broken frames, invalid messages, wrong payloads, a flood")
struct HostileFaultTests {
    /// Reads until the device's own volume change (made after the fault): what came before it.
    static func messagesUntilVolumeChange(_ sender: RawCastSender, _ emulator: CastDeviceEmulator) async throws
        -> [CastMessage]
    {
        try emulator.changeVolumeOnDevice(level: 0.35)
        var before: [CastMessage] = []
        while true {
            let message = try await sender.next(timeout: .seconds(10))
            let payload = (try? JSONValue.parse(message.payloadUtf8)) ?? .null
            if message.namespace == CastNamespace.receiver, message.sourceID == "receiver-0",
                payload["status"]?["volume"]?["level"]?.doubleValue == Double(Float(0.35))
            {
                return before
            }
            before.append(message)
        }
    }

    // MARK: framing

    @Test(
        "A frame over 64 KiB or of length 0 reaches every link, and a sender's decoder refuses it",
        arguments: [
            (
                EmulatorHostileFrame.oversizedFrame(length: 65_537),
                LengthPrefixError.frameTooLarge(length: 65_537, limit: 65_536)
            ),
            (
                .oversizedFrame(length: 0xFFFF_FFFF, trailingBytes: 300),
                .frameTooLarge(length: 0xFFFF_FFFF, limit: 65_536)
            ),
            (.zeroLengthFrame, .emptyFrame),
        ])
    func brokenFraming(_ frame: EmulatorHostileFrame, _ expected: LengthPrefixError) async throws {
        try await withEmulator { emulator, endpoints in
            let first = try await RawCastSender.connect(to: endpoints)
            let second = try await RawCastSender.connect(to: endpoints)
            try await first.roundTrip(connectingFirst: true)
            try await second.roundTrip(connectingFirst: true)
            #expect(frame.breaksFraming)
            #expect(try await emulator.sendHostile(frame) == 2)
            for sender in [first, second] {
                let error = await #expect(throws: ConnectionClosed.self) { _ = try await sender.next() }
                #expect(error?.cause as? LengthPrefixError == expected, "\(String(describing: error))")
            }
        }
    }

    // MARK: frames that are not valid CastMessages

    @Test("A garbage frame and a truncated CastMessage keep the framing but do not decode")
    func undecodableFrames() async throws {
        try await withEmulator { emulator, endpoints in
            for frame in [EmulatorHostileFrame.garbageFrame(length: 64), .truncatedMessage] {
                let sender = try await RawCastSender.connect(to: endpoints)
                try await sender.roundTrip(connectingFirst: true)
                #expect(!frame.breaksFraming)
                #expect(try await emulator.sendHostile(frame) == 1)
                // The test's sender gives up on a frame it cannot decode; the length was fine.
                let error = await #expect(throws: ConnectionClosed.self) { _ = try await sender.next() }
                #expect(error?.cause != nil && !(error?.cause is LengthPrefixError), "\(String(describing: error))")
                await sender.close()
            }
        }
    }

    @Test("Invalid CastMessages: empty ids or namespace, a payload that does not match its type")
    func invalidMessages() async throws {
        try await withEmulator { emulator, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.roundTrip(connectingFirst: true)
            let frames: [EmulatorHostileFrame] = [
                .emptySourceID, .emptyDestinationID, .emptyNamespace, .stringTypeWithBinaryPayload,
                .binaryTypeWithUTF8Payload,
            ]
            for frame in frames { #expect(try await emulator.sendHostile(frame) == 1) }
            let received = try await Self.messagesUntilVolumeChange(sender, emulator)
            try #require(received.count == frames.count, "\(received.map(\.summary))")
            #expect(received[0].sourceID == "" && received[0].destinationID == "*")
            #expect(received[1].destinationID == "" && received[1].sourceID == "receiver-0")
            #expect(received[2].namespace == "")
            #expect(received[3].payloadType == .string && !received[3].hasPayloadUtf8 && received[3].hasPayloadBinary)
            #expect(received[4].payloadType == .binary && received[4].hasPayloadUtf8 && !received[4].hasPayloadBinary)
            for message in received {
                #expect(throws: CastProtocolError.self) { try message.validate() }
            }
            // The payloads are the device's real RECEIVER_STATUS.
            #expect(try JSONValue.parse(received[0].payloadUtf8)["type"] == "RECEIVER_STATUS")
            #expect(
                try JSONValue.parse(String(decoding: received[3].payloadBinary, as: UTF8.self))["type"]
                    == "RECEIVER_STATUS")
        }
    }

    // MARK: payloads a sender must not trust

    @Test("Binary payloads on JSON namespaces, JSON of the wrong types, text that is not JSON, deep nesting")
    func untrustworthyPayloads() async throws {
        try await withEmulator { emulator, endpoints in
            let playing = try await startPlaying(on: endpoints)
            let sender = playing.sender
            let frames: [EmulatorHostileFrame] = [
                .binaryPayload(namespace: CastNamespace.media), .mediaStatusString, .mediaSessionIDLetters,
                .currentTimeObject, .volumeLevelString, .receiverVolumeLevelString, .applicationsNotArray,
                .notJSON(namespace: CastNamespace.receiver),
                .deeplyNested(depth: 10_000, namespace: CastNamespace.media), .outOfRangeNumbers,
            ]
            for frame in frames { #expect(try await emulator.sendHostile(frame) == 1) }
            let received = try await Self.messagesUntilVolumeChange(sender, emulator)
            try #require(received.count == frames.count, "\(received.map(\.summary))")
            for message in received { try message.validate() }  // valid CastMessages, all of them

            let binary = received[0]
            #expect(binary.payloadType == .binary && binary.namespace == CastNamespace.media)
            #expect(binary.sourceID == playing.transportID)
            let binaryStatus = try JSONValue.parse(String(decoding: binary.payloadBinary, as: UTF8.self))
            #expect(binaryStatus.firstStatus?["mediaSessionId"]?.intValue == playing.mediaSessionID)

            let payloads = received.dropFirst().map { (try? JSONValue.parse($0.payloadUtf8)) ?? .null }
            #expect(payloads[0]["type"] == "MEDIA_STATUS" && payloads[0]["status"] == "PLAYING")
            #expect(payloads[1].firstStatus?["mediaSessionId"] == "abc")
            #expect(payloads[2].firstStatus?["currentTime"]?.objectValue != nil)
            #expect(payloads[2].firstStatus?["mediaSessionId"]?.intValue == playing.mediaSessionID)
            #expect(payloads[3].firstStatus?["volume"]?["level"] == "loud")
            #expect(payloads[4]["type"] == "RECEIVER_STATUS" && payloads[4]["status"]?["volume"]?["level"] == "loud")
            #expect(payloads[5]["status"]?["applications"]?["sessionId"]?.stringValue == playing.sessionID)
            #expect(received[7].namespace == CastNamespace.receiver && payloads[6] == .null)
            #expect(received[7].payloadUtf8.contains("not JSON"))
            let nested = received[8].payloadUtf8
            #expect(nested.filter { $0 == "[" }.count == 10_000 && nested.filter { $0 == "]" }.count == 10_000)
            #expect(received[8].namespace == CastNamespace.media && received[8].sourceID == playing.transportID)
            let outOfRange = try #require(payloads[8].firstStatus)
            #expect(outOfRange["media"]?["metadata"]?["metadataType"] == .number(1_099_511_627_776))
            #expect(
                outOfRange["items"]?.arrayValue?.first?["media"]?["metadata"]?["metadataType"]?.intValue == -1 << 40)
            #expect(outOfRange["mediaSessionId"]?.intValue == playing.mediaSessionID)

            // The device itself is as it was, and answers.
            let status = try await sender.mediaStatus(playing.transportID, requestID: 2)
            #expect(status.firstStatus?["playerState"] == "PLAYING")
        }
    }

    // MARK: flood

    @Test("floodMediaStatus: paced statuses to the app's senders, currentTime moving on; what was sent is reported")
    func flood() async throws {
        try await withEmulator(controlledConfiguration()) { emulator, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            // Nothing loaded: nothing to flood with.
            await #expect(throws: EmulatorError.self) {
                try await emulator.floodMediaStatus(perSecond: 10, for: .seconds(1))
            }
            let idle = try await control("/emulator/faults/flood", #"{"perSecond": 10}"#, port: httpPort)
            #expect(idle.status == 409, "\(idle.json)")

            let playing = try await startPlaying(on: endpoints)
            let bystander = try await RawCastSender.connect(to: endpoints)  // not connected to the app
            try await bystander.roundTrip(connectingFirst: true)
            let report = try await emulator.floodMediaStatus(perSecond: 2_000, for: .milliseconds(500))
            print("flood over the Swift API: \(report)")
            #expect(report.requested == 1_000 && report.links == 1 && report.linksOpen == 1)
            #expect(report.sent > 0 && report.sent <= report.requested)
            let received = try await Self.messagesUntilVolumeChange(playing.sender, emulator)
            let statuses = received.filter { $0.namespace == CastNamespace.media }
            #expect(statuses.count == report.sent)
            let entries = statuses.compactMap { try? JSONValue.parse($0.payloadUtf8).firstStatus }
            #expect(entries.allSatisfy { $0["mediaSessionId"]?.intValue == playing.mediaSessionID })
            #expect(statuses.allSatisfy { $0.sourceID == playing.transportID && $0.destinationID == "*" })
            let times = entries.compactMap { $0["currentTime"]?.doubleValue }
            #expect(times.count == statuses.count && zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
            #expect(try await Self.messagesUntilVolumeChange(bystander, emulator).isEmpty)

            let answer = try await control(
                "/emulator/faults/flood", #"{"perSecond": 100, "durationMs": 50}"#, port: httpPort)
            #expect(answer.status == 200, "\(answer.json)")
            #expect(answer.json["requested"] == 5 && answer.json["links"] == 1)
            #expect((answer.json["sent"]?.intValue ?? 0) > 0)
            for (body, key) in [
                (#"{"perSecond": 0}"#, "perSecond"), (#"{"perSecond": 2000000}"#, "perSecond"),
                (#"{"durationMs": "long"}"#, "durationMs"), (#"{"durationMs": 0}"#, "durationMs"),
                (#"{"rate": 1}"#, "rate"),
            ] {
                let bad = try await control("/emulator/faults/flood", body, port: httpPort)
                #expect(bad.status == 400 && bad.json["key"] == .string(key), "\(body): \(bad.json)")
            }
        }
    }

    // MARK: the control interface

    @Test("POST /emulator/faults/hostile writes the kind asked for; bad kinds and values are 400 naming the key")
    func hostileOverHTTP() async throws {
        try await withEmulator(controlledConfiguration()) { emulator, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.roundTrip(connectingFirst: true)

            let nested = try await control(
                "/emulator/faults/hostile",
                #"{"kind": "deeply-nested", "depth": 3, "namespace": "urn:x-cast:com.example"}"#,
                port: httpPort)
            #expect(nested.status == 200, "\(nested.json)")
            #expect(nested.json == ["kind": "deeply-nested", "breaksFraming": false, "links": 1])
            let received = try await Self.messagesUntilVolumeChange(sender, emulator)
            #expect(received.map(\.payloadUtf8) == [#"{"requestId":0,"status":[[[]]],"type":"MEDIA_STATUS"}"#])
            #expect(received.first?.namespace == "urn:x-cast:com.example")

            for (body, key) in [
                (#"{}"#, "kind"), (#"{"kind": "nonsense"}"#, "kind"), (#"{"kind": 7}"#, "kind"),
                (#"{"kind": "zero-length-frame", "length": 5}"#, "length"),
                (#"{"kind": "oversized-frame", "length": 65536}"#, "length"),
                (#"{"kind": "oversized-frame", "length": 4294967296}"#, "length"),
                (#"{"kind": "oversized-frame", "trailingBytes": -1}"#, "trailingBytes"),
                (#"{"kind": "garbage-frame", "length": 0}"#, "length"),
                (#"{"kind": "deeply-nested", "depth": 0}"#, "depth"),
                (#"{"kind": "deeply-nested", "depth": 40000}"#, "depth"),
                (#"{"kind": "not-json", "namespace": "media"}"#, "namespace"),
                (#"{"kind": "not-json", "depth": 3}"#, "depth"), (#"{"kind": "not-json", "color": 3}"#, "color"),
            ] {
                let bad = try await control("/emulator/faults/hostile", body, port: httpPort)
                #expect(bad.status == 400, "\(body): \(bad.json)")
                #expect(bad.json["key"] == .string(key), "\(body): \(bad.json)")
            }
            await #expect(throws: EmulatorError.self) { try await emulator.sendHostile(.garbageFrame(length: 70_000)) }
            await #expect(throws: EmulatorError.self) { try await emulator.sendHostile(.oversizedFrame(length: 10)) }

            let broken = try await control(
                "/emulator/faults/hostile", #"{"kind": "oversized-frame", "length": 4294967295}"#, port: httpPort)
            #expect(broken.json == ["kind": "oversized-frame", "breaksFraming": true, "links": 1])
            let error = await #expect(throws: ConnectionClosed.self) { _ = try await sender.next() }
            #expect(error?.cause as? LengthPrefixError == .frameTooLarge(length: 0xFFFF_FFFF, limit: 65_536))

            let routes = try await control("/emulator", method: "GET", port: httpPort).json["routes"]?.arrayValue ?? []
            for path in ["/emulator/faults/hostile", "/emulator/faults/flood"] {
                #expect(routes.contains { $0["path"] == .string(path) && $0["method"] == "POST" }, "\(path)")
            }
            #expect(EmulatorHostileFrame.kinds.count == 19)
        }
    }
}
