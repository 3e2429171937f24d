import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import Testing

/// The emulator's messages have the shape of messages captured from real devices
/// (`real-messages/`, the fixtures CastProtocolTests also uses): every key a real device sends is
/// there, with the same JSON type.
@Suite("Shapes match real-device captures")
struct RealMessagesTests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CastProtocolTests/Fixtures/real-messages")

    /// Every captured line of `file` whose payload satisfies `where`.
    static func captures(_ file: String, where predicate: (JSONValue) -> Bool) throws -> [JSONValue] {
        let text = try String(contentsOf: fixtures.appendingPathComponent(file), encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONValue.parse(String($0)) }.filter {
            predicate($0["payload"] ?? .null)
        }
    }

    static func keys(_ value: JSONValue) -> Set<String> {
        Set(value.objectValue.map { Array($0.keys) } ?? [])
    }

    static func kind(_ value: JSONValue?) -> String {
        switch value {
        case .null?: "null"
        case .bool?: "bool"
        case .number?: "number"
        case .string?: "string"
        case .array?: "array"
        case .object?: "object"
        case nil: "absent"
        }
    }

    /// Each key of `real` is in `emulated`, with the same JSON type (recursively for objects).
    static func expectShape(
        _ emulated: JSONValue?, covers real: JSONValue?, at path: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let realObject = real?.objectValue else {
            #expect(kind(emulated) == kind(real), "\(path)", sourceLocation: sourceLocation)
            return
        }
        guard let emulatedObject = emulated?.objectValue else {
            Issue.record("\(path) is \(kind(emulated)), a real device sends an object", sourceLocation: sourceLocation)
            return
        }
        for (key, value) in realObject {
            // Free-form content (metadata the sender chose, tracks, …) is the sender's business.
            if ["metadata", "tracks", "customData", "userEq"].contains(key) { continue }
            expectShape(emulatedObject[key], covers: value, at: "\(path).\(key)", sourceLocation: sourceLocation)
        }
    }

    @Test("RECEIVER_STATUS: Backdrop and a running app, volume with a float32 stepInterval")
    func receiverStatus() async throws {
        let backdrop = try #require(
            try Self.captures("receiver_status.jsonl") {
                $0.firstApplication?["appId"] == "E8C28D3C" && $0.firstApplication?["launchedFromCloud"] != nil
                    && $0["type"] != nil
            }.first?["payload"]
        )
        let netflix = try #require(
            try Self.captures("receiver_status.jsonl") { $0.firstApplication?["appId"] == "CA5E8412" }.first?["payload"]
        )
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()
            try await sender.receiver(["type": "GET_STATUS", "requestId": 2])
            let idle = try await sender.reply(to: 2)
            Self.expectShape(idle, covers: backdrop)
            Self.expectShape(idle.firstApplication, covers: backdrop.firstApplication, at: "applications[0]")
            #expect(idle["status"]?["volume"]?["stepInterval"] == backdrop["status"]?["volume"]?["stepInterval"])
            #expect(
                idle.firstApplication?["namespaces"] == backdrop.firstApplication?["namespaces"],
                "Backdrop advertises the namespaces a real Backdrop does"
            )

            try await sender.receiver(["type": "LAUNCH", "appId": "CA5E8412", "requestId": 3])
            let running = try await sender.reply(to: 3)
            Self.expectShape(running, covers: netflix)
            Self.expectShape(running.firstApplication, covers: netflix.firstApplication, at: "applications[0]")
            #expect(running.firstApplication?["namespaces"] == netflix.firstApplication?["namespaces"])
        }
    }

    @Test("MEDIA_STATUS: a playing entry and the FINISHED broadcast")
    func mediaStatus() async throws {
        let playing = try #require(
            try Self.captures("media_status.jsonl") { $0.firstStatus?["playerState"] == "PLAYING" }.first?["payload"]
        )
        let finished = try #require(
            try Self.captures("media_status.jsonl") { $0.firstStatus?["idleReason"] == "FINISHED" }.first?["payload"]
        )
        let (configuration, clock) = manualClockConfiguration()
        try await withEmulator(configuration) { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let transportID = try await sender.launchMediaReceiver()
            try await sender.media(
                transportID,
                [
                    "type": "LOAD", "requestId": 4,
                    "media": [
                        "contentId": "http://x.invalid/a.m3u8", "contentType": "application/x-mpegurl", "duration": 60,
                    ],
                ]
            )
            let loaded = try await sender.reply(to: 4)
            Self.expectShape(loaded, covers: playing)
            Self.expectShape(loaded.firstStatus, covers: playing.firstStatus, at: "status[0]")
            let item = loaded.firstStatus?["items"]?.arrayValue?.first
            Self.expectShape(item, covers: playing.firstStatus?["items"]?.arrayValue?.first, at: "status[0].items[0]")
            #expect(loaded.firstStatus?["repeatMode"] == playing.firstStatus?["repeatMode"])

            clock.advance(by: .seconds(61))
            let end = try await sender.next(timeout: .seconds(5), "FINISHED") { _, payload in
                payload.firstStatus?["idleReason"] == "FINISHED"
            }.payload
            Self.expectShape(end, covers: finished)
            Self.expectShape(end.firstStatus, covers: finished.firstStatus, at: "status[0]")
            #expect(end.firstStatus?["media"] == nil, "like the capture, the FINISHED status carries no media")
        }
    }

    @Test("GET_APP_AVAILABILITY and LAUNCH_ERROR: the same keys as captured replies")
    func repliesWithoutType() async throws {
        let availability = try #require(
            try Self.captures("app_availability.jsonl") { $0["availability"]?["CC1AD845"] != nil }.first?["payload"])
        let launchError = try #require(
            try Self.captures("errors.jsonl") { $0["reason"] == "NOT_FOUND" }.first?["payload"])
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()
            try await sender.receiver(["type": "GET_APP_AVAILABILITY", "appId": ["CC1AD845"], "requestId": 1])
            let reply = try await sender.reply(to: 1)
            #expect(Self.keys(reply) == Self.keys(availability))
            #expect(reply["availability"] == availability["availability"])

            try await sender.receiver(["type": "LAUNCH", "appId": "12345678", "requestId": 2])
            let error = try await sender.reply(to: 2)
            #expect(Self.keys(error) == Self.keys(launchError))
            #expect(error["reason"] == launchError["reason"])
        }
    }

    @Test("TXT record: the keys and value formats of a real Chromecast")
    func txtRecord() async throws {
        let chromecast = try #require(
            try Self.captures("txt_records.jsonl") { $0["md"] == "Chromecast" && $0["ve"] == "05" }.first?["payload"]?
                .objectValue
        )
        try await withEmulator { emulator, _ in
            let txt = emulator.txtRecord
            #expect(Set(txt.keys) == Set(chromecast.keys))
            for key in ["id", "cd", "rm", "bs"] {
                let real = try #require(chromecast[key]?.stringValue)
                let emulated = try #require(txt[key])
                #expect(emulated.count == real.count, "\(key)")
                #expect(emulated.allSatisfy { $0.isHexDigit }, "\(key)")
                #expect((emulated == emulated.uppercased()) == (real == real.uppercased()), "\(key) case")
            }
            for key in ["ve", "ic", "st", "nf", "rs"] {
                #expect(txt[key] == chromecast[key]?.stringValue, "\(key)")
            }
        }
    }
}
