import CastProtocol
import CastSenderLink
import CastdAPI

/// Devices given by address (`castd --device HOST`, castd.toml's `devices`) learn who they are
/// from their eureka_info, as other senders do: their name, model, maker and build, and their
/// id, the one mDNS announces. With it, such a device is listed, and selected, by its name,
/// and a device both given by address and announced over mDNS is one device: one link, one
/// session.
extension DeviceRegistry {
    /// Reads what the device given by address whose id is `id` says of itself, and applies it.
    /// A device that cannot be read stays known by its address (a log line at info says why).
    func readIdentity(of id: String) async {
        guard let deviceInfo, sources[id] == .static, let controller = controllers[id],
            let host = store.device(id: id)?.host, !identityReads.contains(id)
        else { return }
        identityReads.insert(id)
        defer { identityReads.remove(id) }
        let info: CastDeviceInfo
        do {
            info = try await deviceInfo.read(host: host)
        } catch {
            logger.info(
                "cannot read what the device says of itself; it stays known by its address",
                metadata: ["device.id": "\(id)", "reason": "\(error)"])
            return
        }
        await apply(info, to: controller)
    }

    /// Names the device by what it says (unless the user named it), and gives it its real id:
    /// at once when castd holds nothing on it yet (the usual case: read at start-up), merging
    /// it with the device of that id if mDNS found it first; otherwise it keeps its id and
    /// announcements of the real one update it.
    private func apply(_ info: CastDeviceInfo, to controller: DeviceController) async {
        let id = controller.id
        guard controllers[id] === controller, let entry = store.device(id: id) else { return }
        let name = configuredNames[id] ?? info.name ?? entry.friendlyName
        let endpoint = DeviceEndpoint(host: entry.host, port: Int(entry.port))
        controller.update(name: name, endpoint: endpoint)
        store.updateDevice(id: id) { $0.take(info, name: name) }
        guard let realID = info.id, realID != id, aliases[realID] != id else { return }

        let idle = await controller.isIdle
        // Things may have moved while this waited for the device's actor.
        guard controllers[id] === controller, sources[id] == .static else { return }
        guard idle else {
            aliases[realID] = id
            logger.info(
                "the device given by address is \(realID); it keeps its address as its id while castd holds it",
                metadata: ["device.id": "\(id)"])
            return
        }
        let configuredName = configuredNames[id]
        drop(controller)
        store.removeDevice(id: id)

        let merged = controllers[realID] != nil
        // Found by mDNS first (or restored from the state file): that device is the one; its
        // announced address is the more recent one, and its name is the one it announces.
        let known = store.device(id: realID)
        let mergedName = configuredName ?? known?.friendlyName.nonEmpty ?? name
        self.controller(
            id: realID, name: mergedName,
            endpoint: known.map { DeviceEndpoint(host: $0.host, port: Int($0.port)) } ?? endpoint)
        sources[realID] = .static
        if let configuredName { configuredNames[realID] = configuredName }
        store.updateDevice(id: realID) { device in
            if known == nil {
                device.host = endpoint.host
                device.port = UInt32(clamping: endpoint.port)
            }
            device.take(info, name: mergedName)
            device.source = .static
        }
        logger.info(
            merged
                ? "the device given by address is the one mDNS announces; listed once"
                : "the device given by address said who it is",
            metadata: ["device.id": "\(realID)", "device.address": "\(endpoint)", "device.name": "\(mergedName)"])
    }
}

extension CastdDevice {
    /// What eureka_info says, under `name`; what it leaves out stays as it was.
    mutating func take(_ info: CastDeviceInfo, name: String) {
        friendlyName = name
        if let model = info.model { self.model = model }
        if let manufacturer = info.manufacturer { self.manufacturer = manufacturer }
        if let build = info.build { self.build = build }
    }
}
