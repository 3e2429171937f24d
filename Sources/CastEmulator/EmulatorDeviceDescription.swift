import CastProtocol
import Crypto
import Foundation

/// How the device describes itself: its mDNS TXT record and its `/setup/eureka_info`.
///
/// The ids real devices derive from hardware (`cd`, `rm`, `bs`, the MAC address) are derived
/// from the device id here, so one emulated device always looks the same.
struct EmulatorDeviceDescription: Sendable {
    let deviceID: String
    let name: String
    let model: String
    let capabilities: UInt32
    let host: String
    /// `cd`: 32 upper-case hex digits.
    let cloudDeviceID: String
    /// `rm`: 16 upper-case hex digits.
    let receiverMetricsID: String
    /// `bs`: 12 upper-case hex digits, starting with Google's FA8FCA like real devices.
    let bssid: String
    let macAddress: String

    init(configuration: EmulatorConfiguration) {
        deviceID = configuration.deviceID
        name = configuration.name
        model = configuration.model
        capabilities = configuration.announcedCapabilities
        host = configuration.host
        /// `count` bytes derived from the device id, as upper-case hex pairs.
        func derived(_ label: String, count: Int) -> [String] {
            let digest = SHA256.hash(data: Data((label + configuration.deviceID).utf8))
            return digest.prefix(count).map { hex2($0).uppercased() }
        }
        cloudDeviceID = derived("cd", count: 16).joined()
        receiverMetricsID = derived("rm", count: 8).joined()
        bssid = "FA8FCA" + derived("bs", count: 3).joined()
        macAddress = (["FA", "8F", "CA"] + derived("mac", count: 3)).joined(separator: ":")
    }

    /// The id in UUID form (`ssdp_udn`, and the mDNS host name of real devices).
    var uuid: String {
        let hex = Array(deviceID.lowercased())
        guard hex.count == 32 else { return deviceID }
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }
        return groups.joined(separator: "-")
    }

    var displaySupported: Bool { capabilities & 1 != 0 }
    var isGroup: Bool { capabilities & EmulatorGroupMember.groupCapability != 0 }

    /// The `_googlecast._tcp` TXT record (real devices send the keys in the order written here).
    func txtRecord(runningApp: EmulatorApp?) -> [String: String] {
        let busy = runningApp.map { !$0.isIdleScreen } ?? false
        return [
            "id": deviceID,
            "cd": cloudDeviceID,
            "rm": receiverMetricsID,
            "ve": "05",
            "md": model,
            "ic": "/setup/icon.png",
            "fn": name,
            "ca": String(capabilities),
            "st": busy ? "1" : "0",
            "bs": bssid,
            "nf": "1",
            "rs": busy ? runningApp?.displayName ?? "" : "",
        ]
    }

    /// `GET /setup/eureka_info`, in the shape current firmware answers it.
    func eurekaInfo(uptime: Double) -> JSONValue {
        let buildRevision = "1.56.500000"
        let buildInfo: JSONValue = [
            "build_type": 2,
            "cast_build_revision": .string(buildRevision),
            "cast_control_version": 1,
            "preview_channel_state": 0,
            "release_track": "stable-channel",
            "system_build_number": "500000",
        ]
        let deviceInfo: JSONValue = [
            "capabilities": [
                "display_supported": .bool(displaySupported),
                "audio_surround_mode_supported": false,
                "hi_res_audio_supported": false,
                "multizone_supported": .bool(!displaySupported || isGroup),
                "opencast_supported": false,
                "stats_supported": true,
            ],
            "cloud_device_id": .string(cloudDeviceID),
            "factory_country_code": "US",
            "hotspot_bssid": .string(bssid),
            "mac_address": .string(macAddress),
            "manufacturer": "Google Inc.",
            "model_name": .string(model),
            "product_name": .string(model),
            "public_key": "",
            "ssdp_udn": .string(uuid),
            "uptime": .number(uptime),
        ]
        let net: JSONValue = [
            "ethernet_connected": false,
            "ip_address": .string(host),
            "online": true,
        ]
        return [
            "bssid": .string(bssid),
            "build_info": buildInfo,
            "build_version": "500000",
            "cast_build_revision": .string(buildRevision),
            "connected": true,
            "device_info": deviceInfo,
            "ethernet_connected": false,
            "has_update": false,
            "hotspot_bssid": .string(bssid),
            "ip_address": .string(host),
            "locale": "en-US",
            "mac_address": .string(macAddress),
            "name": .string(name),
            "net": net,
            "noise_level": -90,
            "release_track": "stable-channel",
            "setup_state": 60,
            "signal_level": -45,
            "ssdp_udn": .string(uuid),
            "ssid": "Emulated Network",
            "time_format": 1,
            "timezone": "UTC",
            "tos_accepted": true,
            "uptime": .number(uptime),
            "version": 12,
            "wpa_configured": true,
            "wpa_id": 0,
            "wpa_state": 10,
        ]
    }
}
