import CAvahi

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
    /// Counts a service that resolved under its host, or, when the host has its share, drops
    /// it (freeing its resolver, remembering it refused, logging once a minute) and says so:
    /// false.
    func admit(_ key: ServiceKey, host: String, resolver: AvahiHandle, client: OpaquePointer?) -> Bool {
        let hostKey = Self.hostKey(host)
        let admitted = state.withLock { state -> Admission in
            guard state.services[key] != nil else { return .admitted }
            if state.admit(key, host: hostKey, limit: limits.maximumServicesPerHost) { return .admitted }
            // The host has its share: drop this one, and remember it was refused.
            let service = state.services.removeValue(forKey: key)
            if let handle = service?.resolver { state.resolverKeys[handle] = nil }
            state.retrying.remove(key)
            if state.release(service?.host) { state.unrefuseAll(of: service?.host ?? "") }
            state.refuse(key, host: hostKey, limit: 4 * limits.maximumServices)
            let events = state.devices.removed(key)
            return .refused(events: events, rebrowse: rebrowseDue(&state), followed: state.hosts[hostKey] ?? 0)
        }
        guard case .refused(let events, let rebrowse, let followed) = admitted else { return true }
        avahi_service_resolver_free(resolver.pointer)
        count { $0.refusedByHost += 1 }
        if let metadata = refusedLog.metadata([
            "mdns.service": "\(key.name)", "mdns.host": "\(host)", "mdns.followed": "\(followed)",
        ]) {
            logger.warning(
                "ignoring an mDNS service: its host already announces the most services castd follows from one host (limits.max_mdns_services_per_host); the other hosts' devices are still found",
                metadata: metadata)
        }
        yield(events)
        if rebrowse, let client, let browser = state.withLock({ $0.browser }) {
            restartBrowser(browser, client: client)
        }
        pump(client: client)
        return false
    }

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

extension ServiceKey {
    /// From the strings of an avahi callback; nil if avahi passed none (it always does).
    init?(
        _ interface: AvahiIfIndex, _ proto: AvahiProtocol,
        _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?
    ) {
        guard let name, let type, let domain else { return nil }
        self.init(
            interface: interface, protocol: proto,
            name: String(cString: name), type: String(cString: type), domain: String(cString: domain))
    }
}
