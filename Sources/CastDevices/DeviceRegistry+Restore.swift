import CastdAPI

/// Session resume across restarts: the sessions a previous castd saved (SessionStore).
extension DeviceRegistry {
    /// Sessions a previous castd saved: each device is held with its session suspended and
    /// connected to, to rejoin the session if the device still runs it (never to relaunch it).
    func restoreSessions() {
        guard let sessionStore else { return }
        for saved in sessionStore.load() {
            let known = store.device(id: saved.deviceID)
            let controller = controller(
                id: saved.deviceID, name: known?.friendlyName ?? saved.deviceName,
                endpoint: known.map { DeviceEndpoint(host: $0.host, port: Int($0.port)) } ?? saved.endpoint)
            if known == nil {
                if sources[saved.deviceID] == nil { sources[saved.deviceID] = .mdns }
                store.updateDevice(id: saved.deviceID) {
                    $0.friendlyName = saved.deviceName
                    $0.host = saved.host
                    $0.port = UInt32(clamping: saved.port)
                    $0.source = sources[saved.deviceID] ?? .mdns
                }
            }
            sessionLogger.info(
                "rejoining a saved session",
                metadata: ["device.id": "\(saved.deviceID)", "session": "\(saved.sessionID)", "app": "\(saved.appID)"])
            Task { await controller.restore(saved) }
        }
    }
}
