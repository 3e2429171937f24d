import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `castc devices`: one row per device.
enum DeviceTable {
    static let noDevices = """
        No devices. castd finds Cast devices on the local network with mDNS (Avahi); \
        `castc status` shows whether discovery runs.
        """

    static let noMatchingDevices = "No device meets the criteria (castc devices without them lists every device)."

    /// The devices, one row each; under each group its members, one line each; under a device
    /// that failed device authentication, why. `filtered`: the list was narrowed by criteria
    /// (which changes what an empty list means). The TV column is there when a device of the
    /// list says whether its TV is on (most devices say nothing of it).
    /// Under a list castd narrowed by its own criterion (launch.filter_devices).
    static func criterionNote(_ appIDs: [String]) -> String {
        "(castd lists only the devices that can run \(appIDs.joined(separator: ", ")); castc devices --all lists every one)"
    }

    /// How much of each id the ID column shows: eight characters, or more until no two of
    /// `ids` start alike (castd takes the start of an id, six characters or more, as a device).
    static func shortIDLength(_ ids: [String]) -> Int {
        let longest = ids.map(\.count).max() ?? 0
        var length = 8
        while length < longest, Set(ids.map { $0.prefix(length) }).count < Set(ids).count { length += 1 }
        return length
    }

    static func render(_ devices: [CastdDevice], filtered: Bool = false) -> String {
        guard !devices.isEmpty else { return filtered ? noMatchingDevices : noDevices }
        let showsTV = devices.contains { tv($0) != nil }
        let header = ["NAME", "ID", "MODEL", "ADDRESS", "STATE", "AUTH"] + (showsTV ? ["TV"] : []) + ["APP"]
        let idLength = shortIDLength(devices.map(\.id))
        let rows = devices.map { device in
            [
                name(device),
                device.id.isEmpty ? "-" : String(device.id.prefix(idLength)),
                device.model.isEmpty ? "-" : device.model,
                address(device),
                state(device),
                authentication(device),
            ] + (showsTV ? [tv(device) ?? "-"] : []) + [app(device)]
        }
        let lines = TextTable.render([header] + rows).split(separator: "\n", omittingEmptySubsequences: false)
        var output = [String(lines[0])]
        for (device, line) in zip(devices, lines.dropFirst()) {
            output.append(String(line))
            if let why = authenticationFailure(device) { output.append("  " + why) }
            for member in device.groupMembers { output.append("  - " + memberName(member)) }
        }
        return output.joined(separator: "\n")
    }

    /// The device authentication outcome of the last connection, in a word or two: `-` (not
    /// connected yet), `verified`, `verified, SHA-1`, `refused`, `unverified`.
    static func authentication(_ device: CastdDevice) -> String {
        let outcome = device.authentication
        switch outcome.state {
        case .unknown: return "-"
        case .verified: return outcome.sha1 ? "verified, SHA-1" : "verified"
        case .refused: return "refused"
        case .unverified: return "unverified"
        case .UNRECOGNIZED(let value): return "auth \(value)"
        }
    }

    /// Why a device failed authentication: `refused: …` or `unverified (warning): …`; nil when
    /// it did not fail.
    static func authenticationFailure(_ device: CastdDevice) -> String? {
        let outcome = device.authentication
        let why = outcome.detail.isEmpty ? "device authentication failed" : outcome.detail
        switch outcome.state {
        case .refused: return "refused: " + why
        case .unverified: return "unverified (warning): " + why
        default: return nil
        }
    }

    /// The outcome in full, for `castc status`: `verified by Cast Root CA`, with what was
    /// flagged; or why it failed. Nil before the first connection.
    static func authenticationSummary(_ device: CastdDevice) -> String? {
        let outcome = device.authentication
        switch outcome.state {
        case .verified:
            var text = outcome.root.isEmpty ? "verified" : "verified by \(outcome.root)"
            if outcome.sha1 { text += " (SHA-1: " + (outcome.detail.isEmpty ? "flagged" : outcome.detail) + ")" }
            return text
        case .refused, .unverified:
            return authenticationFailure(device)
        default:
            return nil
        }
    }

    /// The friendly name (else the id), with `(group)` for a speaker group.
    static func name(_ device: CastdDevice) -> String {
        device.isGroup ? "\(plainName(device)) (group)" : plainName(device)
    }

    /// The friendly name, else the id.
    static func plainName(_ device: CastdDevice) -> String {
        device.friendlyName.isEmpty ? device.id : device.friendlyName
    }

    /// A group's members: `Kitchen, Living Room speaker`.
    static func members(_ device: CastdDevice) -> String {
        device.groupMembers.map(memberName).joined(separator: ", ")
    }

    static func memberName(_ member: CastdGroupMember) -> String {
        member.name.isEmpty ? member.deviceID : member.name
    }

    /// `192.168.1.20:8009`, `[fe80::1]:8009`
    static func address(_ device: CastdDevice) -> String {
        guard !device.host.isEmpty else { return "-" }
        let host = device.host.contains(":") ? "[\(device.host)]" : device.host
        return device.port == 0 ? host : "\(host):\(device.port)"
    }

    /// The connection state: disconnected, connecting, connected, failed, reconnecting.
    static func state(_ device: CastdDevice) -> String {
        switch device.linkState {
        case .disconnected: return "disconnected"
        case .connecting: return "connecting"
        case .connected: return "connected"
        case .failed: return "failed"
        case .reconnecting: return "reconnecting"
        case .UNRECOGNIZED(let value): return "state \(value)"
        }
    }

    /// While reconnecting: when castd tries next and how many tries failed, e.g. "in 4 s (3
    /// failed)"; nil otherwise.
    static func nextRetry(_ device: CastdDevice, now: Date = Date()) -> String? {
        guard device.linkState == .reconnecting, device.nextRetryAtMs > 0 else { return nil }
        let seconds = max(0, (Double(device.nextRetryAtMs) / 1000 - now.timeIntervalSince1970).rounded(.up))
        let failed = device.reconnectAttempts == 0 ? "" : " (\(device.reconnectAttempts) failed)"
        return "in \(Int(seconds)) s\(failed)"
    }

    /// What the TV says of itself: `on, this input`, `on, other input`, `standby`, or either
    /// half alone (`on`, `this input`); nil when the device says neither, as most do. In
    /// standby the input does not matter.
    static func tv(_ device: CastdDevice) -> String? {
        let input: String? =
            switch device.tvInput {
            case .this: "this input"
            case .other: "other input"
            case .unknown, .UNRECOGNIZED: nil
            }
        switch device.tvPower {
        case .standby: return "standby"
        case .on: return input.map { "on, " + $0 } ?? "on"
        case .unknown, .UNRECOGNIZED: return input
        }
    }

    /// The maker, model and firmware build a device given by address told castd (its
    /// eureka_info): `Google Inc. Chromecast Ultra, build 1.56.500000`; nil when it told none.
    static func madeBy(_ device: CastdDevice) -> String? {
        guard !device.manufacturer.isEmpty || !device.build.isEmpty else { return nil }
        let what = [device.manufacturer, device.model].filter { !$0.isEmpty }.joined(separator: " ")
        let build = device.build.isEmpty ? "" : "build \(device.build)"
        return [what, build].filter { !$0.isEmpty }.joined(separator: ", ")
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
