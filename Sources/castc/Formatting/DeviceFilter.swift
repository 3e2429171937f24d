import CastClient

/// `--device` on commands that show state (devices, status, watch): keeps what concerns the
/// devices the selector names, by `CastdDevice.matches(selector:)`.
struct DeviceFilter {
    let selector: String
    /// Ids of the devices the selector named so far (watch learns them from events).
    private(set) var deviceIDs: Set<String> = []

    init(selector: String) {
        self.selector = selector
    }

    /// The devices the selector names; NOT_FOUND naming the choices if none.
    static func devices(_ devices: [CastdDevice], matching selector: String) throws -> [CastdDevice] {
        let matched = devices.filter { $0.matches(selector: selector) }
        guard !matched.isEmpty else { throw notFound(selector, among: devices) }
        return matched
    }

    /// The status, narrowed to the devices the selector names; NOT_FOUND if none.
    static func status(_ status: CastdStatusResponse, matching selector: String) throws -> CastdStatusResponse {
        let devices = try devices(status.devices, matching: selector)
        let ids = Set(devices.map(\.id))
        var filtered = status
        filtered.devices = devices
        filtered.sessions = status.sessions.filter { ids.contains($0.deviceID) }
        filtered.media = status.media.filter { ids.contains($0.deviceID) }
        // The cast state of what is shown: the devices' own, the most advanced of them.
        if status.castState != .unspecified {
            let states = devices.map(\.castState)
            filtered.castState = [.connected, .connecting].first { states.contains($0) } ?? .notConnected
        }
        return filtered
    }

    static func notFound(_ selector: String, among devices: [CastdDevice]) -> CastdError {
        let names = devices.map(DeviceTable.plainName)
        let choices = names.isEmpty ? "castd knows no devices" : "devices: " + names.joined(separator: ", ")
        return CastdError(.notFound, "no device matches '\(selector)' (\(choices))")
    }

    /// The event as this watcher should see it (a snapshot narrowed to the devices), or nil to
    /// skip it.
    mutating func admit(_ event: CastdEvent) -> CastdEvent? {
        switch event.kind {
        case .snapshot(let snapshot):
            let devices = snapshot.devices.filter { $0.matches(selector: selector) }
            deviceIDs = Set(devices.map(\.id))
            var narrowed = snapshot
            narrowed.devices = devices
            narrowed.sessions = snapshot.sessions.filter { deviceIDs.contains($0.deviceID) }
            narrowed.media = snapshot.media.filter { deviceIDs.contains($0.deviceID) }
            var event = event
            event.snapshot = narrowed
            return event
        case .deviceAdded(let device), .deviceUpdated(let device):
            if device.matches(selector: selector) { deviceIDs.insert(device.id) }
            return deviceIDs.contains(device.id) ? event : nil
        case .deviceRemoved(let device):
            return deviceIDs.remove(device.id) != nil ? event : nil
        case .session(let session):
            return deviceIDs.contains(session.deviceID) ? event : nil
        case .media(let media):
            return deviceIDs.contains(media.deviceID) ? event : nil
        case .queue(let change):
            return deviceIDs.contains(change.deviceID) ? event : nil
        case .transferred(let transfer):
            // The session follows its media: a watcher of either device sees the move, and a
            // watcher of the old device goes on seeing the new one.
            guard deviceIDs.contains(transfer.fromDeviceID) || deviceIDs.contains(transfer.toDeviceID) else {
                return nil
            }
            deviceIDs.insert(transfer.toDeviceID)
            return event
        case .castState:
            // castd's, not the device's: the device's own is in its device events.
            return nil
        case .lagged, nil:
            return event
        }
    }
}
