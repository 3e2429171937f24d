import CastdSupport
import CastTestSupport
import CastProtocol
import CastdAPI
import Foundation
import Logging
import Testing

@testable import CastDevices

/// What castd keeps of a device's media is bounded whatever ids its app makes up (SECURITY.md,
/// G3.1): an app that starts a new media session, or names new queue items, with every
/// MEDIA_STATUS does not grow castd.
@Suite(.tags(.cpuBound)) struct MediaMemoryTests {
    static func status(mediaSessionID: Int, items: [Int]) -> JSONValue {
        let media: JSONValue = .object([
            "contentId": .string("https://example.com/\(mediaSessionID).mp4"), "contentType": .string("video/mp4"),
            "streamType": .string("BUFFERED"), "metadata": .object(["title": .string("Title \(mediaSessionID)")]),
        ])
        return .object([
            "type": .string("MEDIA_STATUS"),
            "status": .array([
                .object([
                    "mediaSessionId": .number(Double(mediaSessionID)), "playerState": .string("PLAYING"),
                    "currentTime": .number(1), "media": media,
                    "currentItemId": .number(Double(items.first ?? 0)),
                    "items": .array(items.map { .object(["itemId": .number(Double($0)), "media": media]) }),
                ])
            ]),
        ])
    }

    @Test func newIdsInEveryStatusKeepCastdsMediaBounded() async throws {
        var media = MediaState(deviceID: "device", logger: Logger(label: "test"))
        for index in 0..<5000 {
            // A new media session each time, with three new queue items.
            _ = media.apply(
                Self.status(mediaSessionID: index + 1, items: [3 * index + 1, 3 * index + 2, 3 * index + 3]))
        }
        let (sessions, items) = (media.knownMedia.count, media.itemMedia.count)
        #expect(sessions == 1)
        // The design's bound (SECURITY.md G3.1): 1,024 items' media, and past that only the items
        // the latest status names (three here). Stated, not read from the implementation.
        #expect(items <= 1_024 + 3, "\(items) queue items' media kept")
        // What the latest status said is still known.
        let latest = media.status
        #expect(latest?.mediaSessionID == 5000)
        #expect(latest?.items.count == 3)
        #expect(latest?.items.allSatisfy { $0.media.contentID == "https://example.com/5000.mp4" } == true)
    }
}

/// A reply reaches both the request that waits for it and the link's message loop, which may
/// handle it later, after newer statuses: each status is applied once, newest last. (A GET_STATUS
/// reply from before a LAUNCH, applied again after it by a loop running behind, used to end the
/// session the LAUNCH had just started: the flake in HostileDeviceFaultTests.)
@Suite struct StatusOrderTests {
    static func receiverStatus(level: Double) -> JSONValue {
        .object([
            "type": .string("RECEIVER_STATUS"),
            "status": .object([
                "applications": .array([]), "volume": .object(["level": .number(level), "muted": .bool(false)]),
            ]),
        ])
    }

    @Test func aStatusOlderThanOneAppliedIsSkipped() async throws {
        let store = CastdStateStore()
        store.updateDevice(id: "device") { $0.friendlyName = "Device" }
        let superseding = SupersedingRequests()
        let receiver = ReceiverController(
            deviceID: "device", store: store, superseding: superseding, logger: Logger(label: "test"),
            badMessageLog: LogThrottle())
        let media = MediaController(
            deviceID: "device", store: store, superseding: superseding, logger: Logger(label: "test"))
        func level() -> Double? { store.device(id: "device")?.receiver.volume.level }

        receiver.receive(Self.receiverStatus(level: 0.5), arrival: 7)
        #expect(level() == 0.5)
        // An earlier message, handled late.
        receiver.receive(Self.receiverStatus(level: 0.1), arrival: 3)
        #expect(level() == 0.5)
        // The same message twice: once.
        receiver.receive(Self.receiverStatus(level: 0.2), arrival: 7)
        #expect(level() == 0.5)
        receiver.receive(Self.receiverStatus(level: 0.8), arrival: 8)
        #expect(level() == 0.8)

        media.receive(MediaMemoryTests.status(mediaSessionID: 2, items: [1]), arrival: 9)
        media.receive(MediaMemoryTests.status(mediaSessionID: 1, items: [1]), arrival: 5)
        #expect(store.media(deviceID: "device")?.mediaSessionID == 2)
    }
}

/// The app availability castd remembers per device is bounded (SECURITY.md, G5.3), and so is
/// what one call may ask.
@Suite(.tags(.cpuBound)) struct AvailabilityMemoryTests {
    @Test func theCacheKeepsAtMostItsLimit() {
        var receiver = ReceiverState(logger: Logger(label: "test"), badMessageLog: LogThrottle())
        for batch in 0..<100 {
            let answers = (0..<10).map { ("APP\(batch)X\($0)", $0.isMultiple(of: 2)) }
            receiver.remember(answers)
            let known = receiver.availability
            #expect(known.count <= ReceiverState.availabilityLimit)
            // What was just asked is always remembered.
            #expect(answers.allSatisfy { known[$0.0] == $0.1 })
        }
    }

    @Test func aCallAsksAboutAtMost32Apps() throws {
        try CastdValidation.appIDs((0..<32).map { "APP\($0)" })
        #expect(throws: CastdError.self) { try CastdValidation.appIDs((0..<33).map { "APP\($0)" }) }
        #expect(throws: CastdError.self) { try CastdValidation.appIDs(["ok", "not ok"]) }
    }
}
