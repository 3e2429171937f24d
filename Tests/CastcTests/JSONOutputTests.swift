import CastTestSupport
import CastClient
import Foundation
import Testing

@testable import castc

@Suite(.tags(.cpuBound)) struct JSONOutputTests {
    func object(_ text: String) throws -> [String: Any] {
        #expect(!text.contains("\n"), "one line")
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func mediaStatusIsProto3JSON() throws {
        var status = CastdMediaStatus()
        status.deviceID = "abc"
        status.mediaSessionID = 7
        status.playerState = .playing
        status.currentTime = 83.5
        status.updatedAtMs = 1_700_000_000_000
        status.media = CastdMediaInformation(url: "https://example.com/a.mp4", contentType: "video/mp4", title: "A")
        status.media.duration = 596

        let json = try object(try JSONOutput.string(status))
        #expect(json["deviceId"] as? String == "abc")
        #expect(json["mediaSessionId"] as? String == "7")  // int64 as a string, as proto3 JSON says
        #expect(json["playerState"] as? String == "PLAYER_STATE_PLAYING")
        #expect(json["currentTime"] as? Double == 83.5)
        #expect(json["updatedAtMs"] as? String == "1700000000000")
        let media = try #require(json["media"] as? [String: Any])
        #expect(media["contentId"] as? String == "https://example.com/a.mp4")
        #expect(media["contentType"] as? String == "video/mp4")
        #expect(media["duration"] as? Double == 596)
        #expect((media["metadata"] as? [String: Any])?["title"] as? String == "A")
        // Round trip: what castc prints, a proto3 JSON reader reads back.
        #expect(try CastdMediaStatus(jsonString: try JSONOutput.string(status)) == status)
    }

    @Test func deviceListIsAnObjectWithDevices() throws {
        var response = Castd_V1_ListDevicesResponse()
        var device = CastdDevice()
        device.id = "abc"
        device.friendlyName = "Kitchen"
        device.port = 8009
        device.linkState = .connected
        response.devices = [device]
        let json = try object(try JSONOutput.string(response))
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.count == 1)
        #expect(devices[0]["friendlyName"] as? String == "Kitchen")
        #expect(devices[0]["port"] as? Int == 8009)
        #expect(devices[0]["linkState"] as? String == "LINK_STATE_CONNECTED")
    }

    @Test func watchEventIsOneObjectPerLine() throws {
        var event = CastdEvent()
        event.sequence = 12
        event.timeMs = 1_700_000_000_123
        var lagged = Castd_V1_Lagged()
        lagged.dropped = 3
        event.lagged = lagged
        let json = try object(try JSONOutput.string(event))
        #expect(json["sequence"] as? String == "12")
        #expect((json["lagged"] as? [String: Any])?["dropped"] as? String == "3")
    }
}
