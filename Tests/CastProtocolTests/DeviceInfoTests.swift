import CastProtocol
import Testing

/// `/setup/eureka_info` as current firmware answers what senders ask, as older firmware answers
/// everything, and as a careless or hostile device might: read leniently, bounded.
@Suite(.tags(.cpuBound)) struct DeviceInfoTests {
    @Test func theAnswerToWhatSendersAskForIsRead() throws {
        let answer = """
            {"name": "Living Room TV",
             "device_info": {"manufacturer": "Google Inc.", "model_name": "Chromecast with Google TV",
                             "product_name": "sabrina", "ssdp_udn": "5D1A2F9C-8B3E-4F21-A0C4-9E7B6D5C4A3B",
                             "capabilities": {"display_supported": true}},
             "build_info": {"cast_build_revision": "1.56.500000", "system_build_number": "500000"}}
            """
        let info = try #require(CastDeviceInfo(json: try JSONValue.parse(answer)))
        #expect(info.name == "Living Room TV")
        #expect(info.model == "Chromecast with Google TV" && info.manufacturer == "Google Inc.")
        #expect(info.id == "5d1a2f9c8b3e4f21a0c49e7b6d5c4a3b", "mDNS's form: 32 lower-case hex digits")
        #expect(info.build == "1.56.500000")
    }

    @Test func olderFirmwaresFullerAnswerIsRead() throws {
        // Everything at once, with the id, name and build at the top level and the model under
        // `detail` (what `?options=detail` gave).
        let answer = """
            {"bssid": "aa:bb:cc:dd:ee:ff", "build_version": "17977", "cast_build_revision": "1.22.17977",
             "connected": true, "name": "Kitchen speaker", "ssdp_udn": "0fa0d5d2-3b0b-4fcd-b5d1-3f3a0fb0e2a1",
             "detail": {"manufacturer": "Google Inc.", "model_name": "Google Home"},
             "uptime": 123.4, "version": 8}
            """
        let info = try #require(CastDeviceInfo(json: try JSONValue.parse(answer)))
        #expect(info.name == "Kitchen speaker" && info.model == "Google Home" && info.manufacturer == "Google Inc.")
        #expect(info.id == "0fa0d5d23b0b4fcdb5d13f3a0fb0e2a1")
        #expect(info.build == "1.22.17977")
        let oldest = try #require(
            CastDeviceInfo(json: ["name": "Den", "build_version": "13300", "model_name": "Eureka Dongle"]))
        #expect(oldest.build == "13300" && oldest.model == "Eureka Dongle" && oldest.id == nil)
    }

    @Test func missingWrongAndOversizedFieldsReadAsAbsent() throws {
        let empty = try #require(CastDeviceInfo(json: [:]))
        #expect(empty == CastDeviceInfo())
        let wrong = try #require(
            CastDeviceInfo(json: [
                "name": ["Den"], "device_info": "not an object", "ssdp_udn": "not-a-uuid",
                "build_info": ["cast_build_revision": true],
            ]))
        #expect(wrong.name == nil && wrong.model == nil && wrong.id == nil && wrong.build == nil)
        let long = String(repeating: "x", count: CastDeviceInfo.maximumFieldLength + 1)
        let oversized = try #require(
            CastDeviceInfo(json: ["name": .string(long), "device_info": ["model_name": "  "]]))
        #expect(oversized.name == nil && oversized.model == nil)
        #expect(CastDeviceInfo(json: ["name": "  Den TV \n"])?.name == "Den TV")
        #expect(CastDeviceInfo(json: .array([])) == nil)
        #expect(CastDeviceInfo(bytes: Array("<html>".utf8)) == nil)
    }

    @Test(
        arguments: [
            ("5d1a2f9c-8b3e-4f21-a0c4-9e7b6d5c4a3b", "5d1a2f9c8b3e4f21a0c49e7b6d5c4a3b"),
            ("uuid:5D1A2F9C8B3E4F21A0C49E7B6D5C4A3B", "5d1a2f9c8b3e4f21a0c49e7b6d5c4a3b"),
            ("5d1a2f9c-8b3e-4f21-a0c4-9e7b6d5c4a3", nil), ("5d1a2f9c-8b3e-4f21-a0c4-9e7b6d5c4a3bb", nil),
            ("5d1a2f9c-8b3e-4f21-a0c4-9e7b6d5c4a3g", nil), ("", nil), ("٥d1a2f9c8b3e4f21a0c49e7b6d5c4a3b", nil),
        ] as [(String, String?)])
    func aUDNBecomesAnMDNSId(_ udn: String, _ id: String?) {
        #expect(CastDeviceInfo.deviceID(fromUDN: udn) == id)
    }
}
