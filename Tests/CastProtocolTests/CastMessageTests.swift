import CastTestSupport
import CastProtocol
import Foundation
import Testing

@Suite(.tags(.cpuBound)) struct CastMessageTests {
    @Test func requiredZeroFieldsAreOnTheWire() throws {
        let message = CastMessage.json(
            source: "sender-1", destination: "receiver-0", namespace: CastNamespace.receiver,
            payload: ["type": "GET_STATUS"])
        let bytes = try message.frameBody()
        // protocol_version (field 1, varint 0) and payload_type (field 5, varint 0) must be present.
        #expect(bytes.starts(with: [0x08, 0x00]))
        #expect(bytes.windowContaining([0x28, 0x00]))
        let back = try CastMessage.decodeFrameBody(bytes)
        #expect(back.hasProtocolVersion && back.hasPayloadType)
    }

    @Test func invalidMessagesAreRefused() throws {
        var m = CastMessage.json(source: "s", destination: "d", namespace: "ns", payload: [:])
        m.sourceID = ""
        #expect(throws: CastProtocolError.self) { try CastMessage.decodeFrameBody(try m.serializedBytes() as [UInt8]) }

        var binary = CastMessage.binary(source: "s", destination: "d", namespace: "ns", bytes: Data([1, 2]))
        binary.payloadType = .string  // says STRING, carries binary
        #expect(throws: CastProtocolError.self) { try binary.validate() }

        var missing = CastMessage()
        missing.sourceID = "s"
        #expect(throws: CastProtocolError.self) {
            try CastMessage.decodeFrameBody(try missing.serializedBytes(partial: true) as [UInt8])
        }

        #expect(throws: CastProtocolError.self) { try CastMessage.decodeFrameBody([0xFF, 0xFF, 0x01]) }
    }

    @Test func binaryPayloadOnJSONNamespaceIsAnErrorNotACrash() throws {
        let m = CastMessage.binary(
            source: "s", destination: "d", namespace: CastNamespace.media, bytes: Data([0, 1, 2]))
        #expect(throws: CastProtocolError.self) { try m.jsonPayload() }
    }

    @Test func oversizedMessageFailsOnlyThatMessage() throws {
        let big = String(repeating: "x", count: CastWire.maximumFrameLength)
        let m = CastMessage.string(source: "s", destination: "d", namespace: "urn:x-cast:test", text: big)
        let error = #expect(throws: CastProtocolError.self) { try m.frameBody() }
        guard case .messageTooLarge(let size)? = error else {
            Issue.record("expected messageTooLarge, got \(String(describing: error))")
            return
        }
        #expect(size > CastWire.maximumFrameLength)
        let small = CastMessage.string(source: "s", destination: "d", namespace: "urn:x-cast:test", text: "ok")
        #expect(try small.frameBody().count < 100)
    }
}

@Suite(.tags(.cpuBound)) struct JSONValueTests {
    @Test func lenientAccessors() throws {
        let json = try JSONValue.parse(#"{"requestId":"42","level":1,"f":0.5,"b":true,"n":null,"s":[1,"2"]}"#)
        #expect(json["requestId"]?.intValue == 42)
        #expect(json["level"]?.doubleValue == 1)
        #expect(json["f"]?.intValue == nil)
        #expect(json["b"]?.boolValue == true)
        #expect(json["b"]?.doubleValue == nil)
        #expect(json["n"]?.isNull == true)
        #expect(json["s"]?.arrayValue?.compactMap(\.intValue) == [1, 2])
        #expect(json["missing"] == nil)
    }

    @Test func envelopeTakesStringRequestIDsAndResponseType() throws {
        #expect(CastEnvelope(try .parse(#"{"type":"PONG"}"#)).requestID == 0)
        #expect(
            CastEnvelope(try .parse(#"{"requestId":"7","responseType":"GET_APP_AVAILABILITY"}"#))
                == CastEnvelope(["type": "GET_APP_AVAILABILITY", "requestId": 7]))
    }

    @Test func printsAndReparses() throws {
        let value: JSONValue = ["a": [1, 2.5, "x\n\"y\u{01}"], "b": nil, "c": ["d": false]]
        #expect(try JSONValue.parse(value.jsonString) == value)
        #expect(JSONValue.number(3).jsonString == "3")
    }

    @Test func malformedJSONIsAClearError() {
        #expect(throws: CastProtocolError.self) { try JSONValue.parse("{\"a\":") }
        #expect(throws: CastProtocolError.self) { try JSONValue.parse("") }
    }

    @Test func statusShapesRealDevicesSend() throws {
        // `status` as an object, an array, a string, or missing: never fatal.
        #expect(
            CastMediaStatus.entries(in: try .parse(#"{"status":{"mediaSessionId":1,"playerState":"PLAYING"}}"#)).count
                == 1)
        #expect(CastMediaStatus.entries(in: try .parse(#"{"status":"nope"}"#)).isEmpty)
        #expect(CastMediaStatus.entries(in: try .parse(#"{"type":"MEDIA_STATUS"}"#)).isEmpty)
        #expect(CastReceiverStatus(payload: try .parse(#"{"status":"x"}"#)).applications.isEmpty)
        let multizone = CastReceiverStatus(
            payload: try .parse(
                #"{"status":{"applications":[{"appId":"MultizoneLeader","displayName":"x","sessionId":"s"}]}}"#))
        #expect(multizone.applications.first?.appID == "MultizoneLeader")
        #expect(multizone.applications.first?.transportID == nil)
    }

    @Test func launchErrorWithExtendedError() throws {
        let e = try #require(
            CastDeviceError(payload: try .parse(#"{"type":"LAUNCH_ERROR","extendedError":"APP_NOT_FOUND"}"#)))
        #expect(e.reason == "APP_NOT_FOUND")
        #expect(CastDeviceError(payload: try .parse(#"{"type":"RECEIVER_STATUS"}"#)) == nil)
    }
}

extension Array where Element == UInt8 {
    func windowContaining(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { Array(self[$0..<$0 + needle.count]) == needle }
    }
}
