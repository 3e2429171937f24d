import CastProtocol
import Testing

@testable import CastDevices

/// Golden tests of the one place that words a device's refusal: what was refused, why in words,
/// the device's own codes (the detailed error code by its SDK name), and what to do.
@Suite(.tags(.cpuBound)) struct DeviceRefusalTests {
    func sentence(_ type: String, _ reason: String? = nil, _ detail: String? = nil, ask: DeviceAsk?) -> String {
        DeviceRefusal.sentence(
            CastDeviceError(type: type, reason: reason, detail: detail), device: "Living Room TV", ask: ask)
    }

    static let load = MediaRequest.load(MediaLoad(media: CastMediaInformation(contentID: "https://example.com/a.flv")))

    @Test func aLoadTheDeviceCannotPlayNamesTheDetailedCode() {
        #expect(
            sentence("LOAD_FAILED", nil, "104", ask: .media(Self.load))
                == "Living Room TV refused the load: it cannot play this media's format (LOAD_FAILED, MEDIA_SRC_NOT_SUPPORTED 104); check the URL and --content-type"
        )
        #expect(
            sentence("LOAD_FAILED", nil, "311", ask: .media(Self.load))
                == "Living Room TV refused the load: it could not fetch the HLS master playlist (LOAD_FAILED, HLS_NETWORK_MASTER_PLAYLIST 311); check that the device can reach the URL"
        )
        // A code the SDK does not name is worded by its hundred and given by number.
        #expect(
            sentence("LOAD_FAILED", nil, "399", ask: .media(Self.load))
                == "Living Room TV refused the load: it could not fetch the media (LOAD_FAILED, detailed error 399); check that the device can reach the URL"
        )
        #expect(
            sentence("LOAD_FAILED", ask: .media(Self.load))
                == "Living Room TV refused the load: it could not load the media (LOAD_FAILED); check that the device can fetch the URL and play its format"
        )
    }

    @Test func anUnknownAppPointsAtCastcApps() {
        #expect(
            sentence("LAUNCH_ERROR", "NOT_FOUND", ask: .launch(appID: "ABCD1234"))
                == "Living Room TV refused the launch of ABCD1234: it has no app ABCD1234 (LAUNCH_ERROR, NOT_FOUND); castc apps --device \"Living Room TV\" ABCD1234 asks which apps it can run"
        )
        #expect(
            sentence("LAUNCH_ERROR", "USER_NOT_ALLOWED", ask: .launch(appID: "CC1AD845"))
                == "Living Room TV refused the launch of CC1AD845: the device does not let this user cast to it (LAUNCH_ERROR, USER_NOT_ALLOWED)"
        )
    }

    @Test func playerStateAndInvalidRequestsSayWhatToLookAt() {
        #expect(
            sentence("INVALID_PLAYER_STATE", ask: .media(.pause))
                == "Living Room TV refused the pause: its player cannot do that in the state it is in (INVALID_PLAYER_STATE); castc status --device \"Living Room TV\" shows what it is doing"
        )
        #expect(
            sentence("INVALID_REQUEST", "INVALID_COMMAND", ask: .media(.skipAd))
                == "Living Room TV refused the skip of the ad: no ad it can skip plays (INVALID_REQUEST, INVALID_COMMAND); castc status --device \"Living Room TV\" shows what it is doing"
        )
        #expect(
            sentence("INVALID_REQUEST", "NOT_SUPPORTED", ask: .message(namespace: "urn:x-cast:com.example.game"))
                == "Living Room TV refused the message on urn:x-cast:com.example.game: the app does not support that (INVALID_REQUEST, NOT_SUPPORTED)"
        )
        #expect(
            sentence("ERROR", ask: nil) == "Living Room TV refused the request: it answered with an error (ERROR)")
    }

    /// Every code the SDK documents has a name and its own words; the hundreds have words too.
    @Test func everyDocumentedDetailedCodeIsNamed() {
        let documented = [
            100, 101, 102, 103, 104, 110, 200, 201, 202, 203, 300, 301, 311, 312, 313, 314, 315, 316, 321, 322, 331,
            332, 400, 411, 412, 420, 421, 422, 423, 431, 500, 600, 900, 901, 902, 903, 904, 905, 906, 999,
        ]
        for code in documented { #expect(CastDetailedErrorCode.name(of: code) != nil, "\(code)") }
        #expect(CastDetailedErrorCode.name(of: 105) == nil)
        #expect(CastDetailedErrorCode.meaning(of: 105) == "its player failed on the media")
        // A detail that is not a small number (a receiver's customData) is no detailed code.
        #expect(DeviceRefusal.detailedCode(CastDeviceError(type: "LOAD_FAILED", detail: "{\"x\":1}")) == nil)
        #expect(DeviceRefusal.detailedCode(CastDeviceError(type: "LOAD_FAILED", detail: "99999999999")) == nil)
    }
}
