/// The per-host bound of a browse (`DiscoveryLimits.maximumServicesPerHost`): services counted
/// by the address they resolve to, and those dropped because their host had its share.
extension BrowseSession.State {
    /// One more service followed from `host`, if it has room.
    mutating func admit(_ key: ServiceKey, host: String, limit: Int) -> Bool {
        guard var service = services[key] else { return false }
        if service.host == host { return true }
        guard hosts[host, default: 0] < limit else { return false }
        release(service.host)
        hosts[host, default: 0] += 1
        service.host = host
        services[key] = service
        return true
    }

    /// A service of `host` no longer counts; whether the host's refused services are worth
    /// another look (the host now has room and had some refused).
    @discardableResult
    mutating func release(_ host: String?) -> Bool {
        guard let host, let count = hosts[host] else { return false }
        hosts[host] = count > 1 ? count - 1 : nil
        return refusedHosts[host] != nil
    }

    mutating func refuse(_ key: ServiceKey, host: String, limit: Int) {
        guard refused.updateValue(host, forKey: key) == nil else { return }
        refusedHosts[host, default: 0] += 1
        refusedOrder.push(key)
        while refused.count > limit, let oldest = refusedOrder.pop() {
            unrefuse(oldest)
        }
    }

    mutating func unrefuse(_ key: ServiceKey) {
        guard let host = refused.removeValue(forKey: key), let count = refusedHosts[host] else { return }
        refusedHosts[host] = count > 1 ? count - 1 : nil
    }

    /// Forgets the refused services of `host`, so that the next browser's report of them
    /// follows them again (as many as the host has room for).
    mutating func unrefuseAll(of host: String) {
        guard refusedHosts[host] != nil else { return }
        refused = refused.filter { $0.value != host }
        refusedOrder.removeAll { refused[$0] == nil }
        refusedHosts[host] = nil
    }
}

extension BrowseSession {
    enum Admission {
        case admitted
        case refused(events: [DiscoveryEvent], rebrowse: Bool, followed: Int)
    }

    /// The host a service is counted under: its address, with the interface for a link-local
    /// IPv6 one (as `Avahi.numericHost` writes it: `fe80::1%2`); an IPv4-mapped IPv6 address
    /// counts as the IPv4 one.
    static func hostKey(_ host: String) -> String {
        let lowered = host.lowercased()
        if lowered.hasPrefix("::ffff:"), lowered.dropFirst(7).contains(".") { return String(lowered.dropFirst(7)) }
        return lowered
    }
}
