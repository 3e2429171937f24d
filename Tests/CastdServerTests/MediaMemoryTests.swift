import CastProtocol
import Foundation
import Logging
import Testing

@testable import CastCore

/// What castd keeps of a device's media is bounded whatever ids its app makes up (SECURITY.md,
/// G3.1): an app that starts a new media session, or names new queue items, with every
/// MEDIA_STATUS does not grow castd.
@Suite struct MediaMemoryTests {
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
        let controller = DeviceController(
            id: "device", name: "Device", endpoint: DeviceEndpoint(host: "127.0.0.1", port: 9), hub: CastdEventHub(),
            linkConfiguration: .init(), logger: Logger(label: "test"), spawn: { _ in })
        for index in 0..<5000 {
            // A new media session each time, with three new queue items.
            await controller.applyMedia(Self.status(mediaSessionID: index + 1, items: [3 * index + 1, 3 * index + 2, 3 * index + 3]))
        }
        let (sessions, items) = await (controller.mediaJSON.count, controller.itemMedia.count)
        #expect(sessions == 1)
        #expect(items <= DeviceController.itemMediaLimit + 3, "\(items) queue items' media kept")
        // What the latest status said is still known.
        let latest = await controller.lastMediaStatus
        #expect(latest?.mediaSessionID == 5000)
        #expect(latest?.items.count == 3)
        #expect(latest?.items.allSatisfy { $0.media.contentID == "https://example.com/5000.mp4" } == true)
    }
}
