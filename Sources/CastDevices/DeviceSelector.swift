import CastdAPI
import Foundation

/// How castd finds the device a client means by a request's `device` field: an id, a friendly
/// name (case-insensitive), a host (with or without port) or the start of an id; an empty selector means the one
/// device with a session, else the only device. Read over the state store's own dictionaries
/// (``CastdStateStore/withDevicesAndSessions(_:)``), so that finding a device for a call copies
/// nothing.
public enum DeviceSelector {
    /// The id of the device `selector` names among `devices` (by id); `sessions` are the live
    /// sessions by device id, `known` says which ids castd has a controller for, and
    /// `discovery` is said in the errors when none matches.
    public static func id(
        for selector: String, devices: [String: CastdDevice], sessions: [String: CastdSession],
        known: (String) -> Bool, discovery: DiscoveryState
    ) throws(CastdError) -> String {
        let selector = selector.trimmingCharacters(in: .whitespaces)
        if selector.isEmpty {
            let held = sessions.values.filter { $0.state == .started || $0.state == .resumed }
            if held.count == 1, known(held[held.startIndex].deviceID) { return held[held.startIndex].deviceID }
            if devices.count == 1, let only = devices.keys.first, known(only) { return only }
            if devices.isEmpty {
                throw CastdError(
                    .notFound,
                    "no Cast devices are known yet (discovery: \(discovery.description)); add one with castd --device HOST"
                )
            }
            throw CastdError(
                .failedPrecondition, "several devices are known; choose one with --device: \(names(devices.values))")
        }
        guard let match = try device(matching: selector, in: devices), known(match.id) else {
            let listed =
                devices.isEmpty
                ? "no devices are known yet (discovery: \(discovery.description))"
                : "known devices: \(names(devices.values))"
            throw CastdError(.notFound, "no device matches '\(selector)'; \(listed)")
        }
        return match.id
    }

    /// The one device `selector` names: by id first, then by friendly name (case-insensitive),
    /// then by host:port, then by host, then by the start of its id. nil if none does; FAILED_PRECONDITION, listing them, if
    /// several do at the first rule that matches any (two devices named alike, or a group on
    /// the same host as its device).
    public static func device(
        matching selector: String, in devices: [String: CastdDevice]
    ) throws(CastdError) -> CastdDevice? {
        if let device = devices[selector] { return device }
        let lowered = selector.lowercased()
        let rules: [(what: String, matches: (CastdDevice) -> Bool)] = [
            ("are named '\(selector)'", { $0.friendlyName.lowercased() == lowered }),
            (
                "listen at \(selector)",
                {
                    "\($0.host):\($0.port)" == selector
                        || DeviceEndpoint(host: $0.host, port: Int($0.port)).description == selector
                }
            ),
            ("are on host \(selector)", { $0.host == selector }),
            // The start of an id, as `castc devices` shows it (six characters at least).
            ("have ids that start with \(selector)", { selector.count >= 6 && $0.id.lowercased().hasPrefix(lowered) }),
        ]
        for rule in rules {
            let matching = devices.values.filter(rule.matches)
            if matching.count == 1 { return matching[0] }
            if matching.count > 1 {
                let listed = listOrder(matching).map {
                    "\($0.id) (\"\($0.friendlyName)\" at \(DeviceEndpoint(host: $0.host, port: Int($0.port)).description))"
                }
                throw CastdError(
                    .failedPrecondition,
                    "\(matching.count) devices \(rule.what): \(listed.joined(separator: ", ")); choose one by its id")
            }
        }
        return nil
    }

    /// Devices in the order castd lists them: by friendly name, then id.
    public static func listOrder(_ devices: some Sequence<CastdDevice>) -> [CastdDevice] {
        devices.sorted {
            let order = $0.friendlyName.localizedCaseInsensitiveCompare($1.friendlyName)
            return order == .orderedSame ? $0.id < $1.id : order == .orderedAscending
        }
    }

    private static func names(_ devices: some Sequence<CastdDevice>) -> String {
        listOrder(devices).map { "\"\($0.friendlyName)\"" }.joined(separator: ", ")
    }
}
