/// One resolved service instance: what the browser reported (interface, protocol, name, type, domain).
struct ServiceKey: Hashable, Sendable {
    var interface: Int32
    var `protocol`: Int32
    var name: String
    var type: String
    var domain: String
}

/// Turns resolved service instances into device events: one device per TXT id.
///
/// A device announced on several interfaces or protocols (or under several instance names with the
/// same id) is one device. Its address, port and instance name come from the preferred instance
/// (IPv4, then global IPv6, then link-local IPv6; among equals the one seen first, so the address
/// does not flip), its TXT record from the instance resolved last (the newest data). Pure state.
struct DeviceAggregator: Sendable {
    private struct Instance: Sendable {
        var device: DiscoveredDevice
        var firstSeen: UInt64
        var lastResolved: UInt64

        var addressRank: Int {
            let host = device.host.lowercased()
            if !host.contains(":") { return 0 }
            return host.hasPrefix("fe80:") ? 2 : 1
        }
    }

    private var instances: [ServiceKey: Instance] = [:]
    /// The instances of each device id: what `merged` looks at (never every instance, so that a
    /// resolve costs the same however many devices are known).
    private var keysByID: [String: Set<ServiceKey>] = [:]
    private var published: [String: DiscoveredDevice] = [:]
    private var clock: UInt64 = 0

    /// The devices as last reported.
    var devices: [DiscoveredDevice] { Array(published.values) }

    /// An instance resolved (for the first time or again).
    mutating func resolved(_ key: ServiceKey, as device: DiscoveredDevice) -> [DiscoveryEvent] {
        clock += 1
        let previous = instances[key]
        instances[key] = Instance(device: device, firstSeen: previous?.firstSeen ?? clock, lastResolved: clock)
        keysByID[device.id, default: []].insert(key)
        var events: [DiscoveryEvent] = []
        if let previousID = previous?.device.id, previousID != device.id {
            unindex(key, from: previousID)
            events += reconcile(previousID)
        }
        return events + reconcile(device.id)
    }

    /// An instance went away.
    mutating func removed(_ key: ServiceKey) -> [DiscoveryEvent] {
        guard let instance = instances.removeValue(forKey: key) else { return [] }
        unindex(key, from: instance.device.id)
        return reconcile(instance.device.id)
    }

    /// Everything went away (Avahi was lost); removals in id order.
    mutating func removeAll() -> [DiscoveryEvent] {
        instances = [:]
        keysByID = [:]
        defer { published = [:] }
        return published.keys.sorted().map { .removed(id: $0) }
    }

    private mutating func unindex(_ key: ServiceKey, from id: String) {
        keysByID[id]?.remove(key)
        if keysByID[id]?.isEmpty == true { keysByID[id] = nil }
    }

    private mutating func reconcile(_ id: String) -> [DiscoveryEvent] {
        let current = merged(id)
        switch (published[id], current) {
        case (nil, nil):
            return []
        case (nil, let device?):
            published[id] = device
            return [.added(device)]
        case (.some, nil):
            published[id] = nil
            return [.removed(id: id)]
        case (let old?, let device?):
            guard old != device else { return [] }
            published[id] = device
            return [.updated(device)]
        }
    }

    private func merged(_ id: String) -> DiscoveredDevice? {
        let candidates = (keysByID[id] ?? []).compactMap { instances[$0] }
        guard
            let addressSource = candidates.min(by: { ($0.addressRank, $0.firstSeen) < ($1.addressRank, $1.firstSeen) }),
            let txtSource = candidates.max(by: { $0.lastResolved < $1.lastResolved })
        else { return nil }
        let base = addressSource.device
        guard txtSource.device.txt != base.txt else { return base }
        var device = DiscoveredDevice(
            serviceName: base.serviceName, host: base.host, port: base.port, txt: txtSource.device.txt)
        device.id = id  // the same unless one instance has no TXT id and is named like the other's id
        return device
    }
}
