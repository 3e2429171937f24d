import CastTestSupport
import CastProtocol
import Foundation
import Testing

/// Every payload captured from real devices and senders (Fixtures/real-messages, copied from
/// the project's shared captures with their sources) must go through the wire codec and the
/// typed parsers without failing.
@Suite(.tags(.cpuBound)) struct RealMessagesTests {
    struct Fixture: CustomTestStringConvertible, Sendable {
        var file: String
        var line: Int
        var namespace: String
        var payload: JSONValue
        var testDescription: String { "\(file):\(line)" }
    }

    static func load(_ name: String) throws -> [Fixture] {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/real-messages/\(name)", withExtension: "jsonl"))
        let text = try String(contentsOf: url, encoding: .utf8)
        var fixtures: [Fixture] = []
        for (index, line) in text.split(separator: "\n").enumerated()
        where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let row = try JSONValue.parse(String(line))
            fixtures.append(
                Fixture(
                    file: name, line: index + 1, namespace: row["namespace"]?.stringValue ?? "",
                    payload: try #require(row["payload"])))
        }
        return fixtures
    }

    static let all: [Fixture] = {
        ["receiver_status", "media_status", "errors", "app_availability", "connection", "other", "sender_requests"]
            .flatMap { (try? load($0)) ?? [] }
    }()

    @Test func fixturesArePresent() throws {
        #expect(try Self.load("receiver_status").count >= 10)
        #expect(try Self.load("media_status").count >= 2)
        #expect(Self.all.count >= 30)
    }

    @Test(arguments: all)
    func survivesTheWire(_ fixture: Fixture) throws {
        // As a device would send it: framed, decoded, validated, parsed.
        let namespace = fixture.namespace.hasPrefix("urn:x-cast:") ? fixture.namespace : CastNamespace.receiver
        let message = CastMessage.json(
            source: "receiver-0", destination: "*", namespace: namespace, payload: fixture.payload)
        let decoded = try CastMessage.decodeFrameBody(try message.frameBody())
        let payload = try decoded.jsonPayload()
        #expect(payload == fixture.payload)
        _ = CastEnvelope(payload)
    }

    @Test(arguments: try load("receiver_status"))
    func receiverStatusParses(_ fixture: Fixture) throws {
        let status = CastReceiverStatus(payload: fixture.payload)
        // Some captures hold only the status object (the library unwrapped it).
        let statusObject = fixture.payload["status"] ?? fixture.payload
        let raw = statusObject["applications"]?.arrayValue ?? []
        let withIDs = raw.filter { $0["appId"]?.stringValue != nil }
        #expect(status.applications.count == withIDs.count)
        for (app, json) in zip(status.applications, withIDs) {
            #expect(app.appID == json["appId"]?.stringValue)
            #expect(app.transportID == json["transportId"]?.stringValue)
            #expect(app.namespaces.count == (json["namespaces"]?.arrayValue?.count ?? 0))
        }
        if let level = statusObject["volume"]?["level"]?.doubleValue {
            #expect(status.volume?.level == level)
        }
        if fixture.payload["status"] != nil, let type = fixture.payload["type"]?.stringValue {
            #expect(CastEnvelope(fixture.payload).type == type)
        }
    }

    @Test(arguments: try load("media_status"))
    func mediaStatusParses(_ fixture: Fixture) throws {
        let entries = CastMediaStatus.entries(in: fixture.payload)
        let raw = fixture.payload["status"]?.arrayValue ?? []
        #expect(entries.count == raw.count)
        for (entry, json) in zip(entries, raw) {
            #expect(entry.mediaSessionID == json["mediaSessionId"]?.intValue)
            #expect(entry.playerState == json["playerState"]?.stringValue)
            #expect(entry.currentTime == json["currentTime"]?.doubleValue ?? 0)
            if let contentID = json["media"]?["contentId"]?.stringValue {
                #expect(entry.media?.contentID == contentID)
            }
        }
    }

    @Test(arguments: try load("errors"))
    func errorRepliesAreRecognised(_ fixture: Fixture) throws {
        let error = try #require(CastDeviceError(payload: fixture.payload))
        #expect(error.type == fixture.payload["type"]?.stringValue)
        #expect(error.reason != nil || fixture.payload["reason"] == nil)
    }

    @Test(arguments: try load("app_availability"))
    func availabilityReplies(_ fixture: Fixture) throws {
        let envelope = CastEnvelope(fixture.payload)
        let expected = fixture.payload["type"]?.stringValue ?? fixture.payload["responseType"]?.stringValue ?? ""
        #expect(envelope.type == expected)
        #expect(envelope.requestID == fixture.payload["requestId"]?.intValue ?? 0)
    }

    @Test(arguments: try load("sender_requests"))
    func senderRequestsCarryWhatTheyLoad(_ fixture: Fixture) throws {
        let envelope = CastEnvelope(fixture.payload)
        #expect(!envelope.type.isEmpty)
        if envelope.type == "LOAD" {
            let media = try #require(CastMediaInformation(json: fixture.payload["media"]))
            #expect(!(media.contentID ?? media.contentURL ?? "").isEmpty)
            // Sloppy senders: null or missing streamType means BUFFERED; LIVE stays LIVE.
            let sent = fixture.payload["media"]?["streamType"]?.stringValue
            #expect(media.streamType == (sent ?? "BUFFERED"))
            // Unknown keys survive a round trip.
            for key in fixture.payload["media"]?.objectValue?.keys ?? [:].keys {
                if fixture.payload["media"]?[key]?.isNull == false { #expect(media.json[key] != nil, "lost \(key)") }
            }
        }
    }
}
