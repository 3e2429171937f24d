import CastClient

/// `castc devices`: one row per device.
enum DeviceTable {
    static let noDevices = """
        No devices. castd finds Cast devices on the local network with mDNS (Avahi); \
        `castc status` shows whether discovery runs.
        """

    static func render(_ devices: [CastdDevice]) -> String {
        guard !devices.isEmpty else { return noDevices }
        let header = ["NAME", "MODEL", "ADDRESS", "STATE", "APP"]
        let rows = devices.map { device in
            [
                device.friendlyName.isEmpty ? device.id : device.friendlyName,
                device.model.isEmpty ? "-" : device.model,
                address(device),
                state(device),
                app(device),
            ]
        }
        return TextTable.render([header] + rows)
    }

    /// `192.168.1.20:8009`, `[fe80::1]:8009`
    static func address(_ device: CastdDevice) -> String {
        guard !device.host.isEmpty else { return "-" }
        let host = device.host.contains(":") ? "[\(device.host)]" : device.host
        return device.port == 0 ? host : "\(host):\(device.port)"
    }

    /// The connection state: disconnected, connecting, connected, failed.
    static func state(_ device: CastdDevice) -> String {
        switch device.linkState {
        case .disconnected: return "disconnected"
        case .connecting: return "connecting"
        case .connected: return "connected"
        case .failed: return "failed"
        case .UNRECOGNIZED(let value): return "state \(value)"
        }
    }

    /// The app the device runs (known once connected), else its advertised status text, else `-`.
    static func app(_ device: CastdDevice) -> String {
        if device.hasReceiver {
            let apps = device.receiver.applications.filter { !$0.isIdleScreen }
            if let app = apps.first { return app.displayName.isEmpty ? app.appID : app.displayName }
            return "idle"
        }
        return device.statusText.isEmpty ? "-" : device.statusText
    }
}
