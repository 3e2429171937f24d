import CastdDaemon
import CastdServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// What `castd --check-config` prints, why castd will not run as root, and the path a socket
// systemd passed is bound to.
extension Castd {
    /// What `--check-config` prints: every setting and where it came from.
    static func describe(_ settings: CastdSettings) -> String {
        var lines = ["configuration ok: \(settings.configFile ?? "no file (defaults and flags)")"]
        func line(_ name: String, _ value: String) { lines.append("  \(name) = \(value)") }
        line("mode", settings.mode.rawValue)
        line("socket", settings.socket)
        line("state_directory", settings.stateDirectory ?? "(none: nothing is kept)")
        line("devices", "\(settings.devices.map { ($0.name.map { $0 + "=" } ?? "") + $0.endpoint.description })")
        line("discovery", "\(settings.discovery)")
        line("trust_roots", "\(settings.trustRoots)")
        line("device_auth", settings.deviceAuth.rawValue)
        line("access.control_groups", "\(settings.controlGroupNames)")
        line("access.read_groups", "\(settings.readGroupNames)")
        let permissions = settings.access.socketPermissions
        lines.append(
            "    (so the socket is mode 0\(String(permissions.mode, radix: 8))"
                + (permissions.group.map { ", group \(GroupLookup.name($0) ?? "\($0)"))" } ?? ")"))
        line("limits.max_frame_bytes", "\(settings.maxFrameBytes)")
        line("limits.max_connections_per_uid", "\(settings.maxConnectionsPerUID)")
        line("limits.max_calls_per_connection", "\(settings.maxCallsPerConnection)")
        line("limits.watcher_queue", "\(settings.watcherQueue)")
        line("limits.idle_timeout_seconds", settings.idleTimeout.map { "\($0.components.seconds)" } ?? "0 (never)")
        line("limits.max_mdns_services", "\(settings.maxMDNSServices)")
        line("limits.max_mdns_services_per_host", "\(settings.maxMDNSServicesPerHost)")
        line("limits.frame_timeout_seconds", settings.frameTimeout.map { "\($0.components.seconds)" } ?? "0 (never)")
        line("log.level", settings.logLevel)
        line("log.filters", settings.logFilters.map { "\($0.pattern)=\($0.level)" }.joined(separator: ", "))
        let launch = settings.launch
        line("launch.app_id", launch.appID ?? "(none: join what runs, else the Default Media Receiver)")
        line("launch.language", launch.options.language.isEmpty ? "(the device's)" : launch.options.language)
        line("launch.android_tv", "\(launch.options.androidTv)")
        line("launch.if_running", launch.relaunch ? "relaunch" : "join")
        line("launch.filter_devices", "\(launch.filterDevices)")
        line("http.address", settings.httpAddress ?? "(the address castd reaches each device from)")
        line("http.port", settings.httpPort.map(String.init) ?? "0 (one free port, kept while castd runs)")
        for note in settings.notes { lines.append("note: \(note)") }
        return lines.joined(separator: "\n")
    }

    /// Why castd will not serve as `euid` in `mode`, or nil. The machine's castd runs as its
    /// own unprivileged user (the system unit's `User=castd`): run as root, a bug a device, an
    /// app on it or a client could reach would be root's. castd refuses rather than dropping
    /// privileges itself (SECURITY.md says why). A daemon for root alone (`--mode user`) is
    /// root's own choice, as any user's daemon runs as that user.
    static func rootRefusal(mode: DaemonMode, explicit: Bool, euid: uid_t) -> String? {
        guard mode == .system, euid == 0 else { return nil }
        let how = explicit ? "--mode system" : "system mode ($XDG_RUNTIME_DIR is not set)"
        return """
            refusing to run as root in \(how): the machine's castd runs as its own unprivileged \
            user castd, so that a flaw a device or a client could reach does not hand them root. \
            Start it with its systemd units (systemctl enable --now castd.socket; castd.service \
            has User=castd), or as that user; for a castd that serves root alone, run \
            `castd --mode user --socket /run/castd/castd.sock` (castc finds it there).
            """
    }

    /// The path an activated Unix socket is bound to.
    static func boundPath(of fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard ok == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let path = withUnsafeBytes(of: address.sun_path) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return path.isEmpty ? nil : path
    }
}
