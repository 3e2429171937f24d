import CastdAPI

extension CastdDevice {
    /// Whether `selector` names this device by the castd.v1 rules: its id, its friendly name
    /// (case-insensitive), its host, or host:port (`[host]:port` for IPv6). An empty selector
    /// matches no device here: in requests the daemon gives it its own meaning.
    public func matches(selector: String) -> Bool {
        guard !selector.isEmpty else { return false }
        if selector == id || selector == host { return true }
        // As castd compares names (DeviceRegistry): lowercased, without Foundation.
        if selector.lowercased() == friendlyName.lowercased() { return true }
        return selector == "\(host):\(port)" || selector == "[\(host)]:\(port)"
    }
}
