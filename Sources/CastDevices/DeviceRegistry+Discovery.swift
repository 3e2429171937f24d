import CastDiscovery
import CastdAPI

/// Devices mDNS announces (through the system's Avahi): listed, updated, and forgotten when
/// they leave unless castd holds something on them.
extension DeviceRegistry {
    nonisolated func runDiscovery() async {
        let browser = AvahiBrowser(serviceType: serviceType, limits: discoveryLimits, logger: discoveryLogger)
        for await event in browser.events() {
            if Task.isCancelled { break }
            await apply(event)
        }
    }

    func apply(_ event: DiscoveryEvent) async {
        switch event {
        case .added(let device), .updated(let device):
            setDiscovery(.running)
            addDiscovered(device)
        case .removed(let announcedID):
            let id = aliases[announcedID] ?? announcedID
            announced.remove(id)
            guard sources[id] == .mdns else { return }
            // A device that vanished from mDNS stays listed while castd holds a session on it;
            // one castd holds nothing on is forgotten, controller and all (else a flood of
            // announcements would leave castd bigger by every id it ever saw).
            if store.session(deviceID: id) == nil { store.removeDevice(id: id) }
            if let controller = controllers[id], await controller.vanished() {
                forget(controller)
            }
        case .unavailable(let reason):
            discoveryLogger.warning(
                "discovery unavailable; static devices still work", metadata: ["reason": "\(reason)"])
            setDiscovery(.unavailable(reason))
        case .available:
            discoveryLogger.info("discovery running")
            setDiscovery(.running)
        }
    }

    func addDiscovered(_ device: DiscoveredDevice) {
        // A device also given by address is one device: the announcement updates it (and its
        // address, should it have changed), and it stays what the user configured.
        let id = aliases[device.id] ?? device.id
        let isNew = sources[id] == nil
        let configured = sources[id] == .static
        if !configured { sources[id] = .mdns }
        announced.insert(id)
        let endpoint = DeviceEndpoint(host: device.host, port: device.port)
        let name = configuredNames[id] ?? device.friendlyName
        let controller = controller(id: id, name: name, endpoint: endpoint)
        store.updateDevice(id: id) {
            $0.friendlyName = name
            $0.model = device.model
            $0.host = device.host
            $0.port = UInt32(device.port)
            $0.capabilities = device.capabilities.rawValue
            $0.busy = device.isBusy
            $0.isGroup = device.isGroup
            $0.source = configured ? .static : .mdns
            if $0.receiver.applications.isEmpty { $0.statusText = device.statusText }
        }
        checkCriterionSoon(of: id)
        // A group's members are only known once castd asks the group: ask as soon as it appears,
        // so that listing devices shows them.
        if isNew && device.isGroup { controller.connectSoon() }
        // Announced again, or at a new address: a device castd lost is worth trying at once.
        if !isNew {
            Task { await controller.announced() }
        }
    }
}
