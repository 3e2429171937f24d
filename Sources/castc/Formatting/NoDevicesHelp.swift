import CastClient

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Why castd lists no device, and what to try, in a few lines: from castd's discovery state,
/// and from this machine's network interfaces (castc runs beside castd, on its socket).
enum NoDevicesHelp {
    /// How long mDNS browsing may go without an answer before castc says devices did not answer
    /// (devices answer a query within a second or two; castd asks again as Avahi does).
    static let patience: TimeInterval = 10

    /// The explanation for `daemon` now, on this machine's interfaces.
    static func explain(_ daemon: CastdDaemonInfo) -> String? {
        explain(daemon, multicastInterfaces: multicastInterfaces(), now: .now)
    }

    /// The explanation; nil when castd does not say how its discovery goes (an older castd),
    /// for which castc says what it always said.
    static func explain(_ daemon: CastdDaemonInfo, multicastInterfaces: [String]?, now: Date) -> String? {
        switch daemon.discoveryState {
        case .unspecified, .UNRECOGNIZED:
            return nil
        case .off:
            return """
                No devices: castd does not look for any (it runs with --no-discovery, or \
                discovery = false in castd.toml), and was given none by address.
                Give one by address: castd --device 192.168.1.20, or devices = ["192.168.1.20"] \
                in castd.toml.
                """
        case .unavailable:
            let why = daemon.discoveryReason.isEmpty ? daemon.discovery : daemon.discoveryReason
            return """
                No devices: castd cannot look for any with mDNS: \(why).
                castd finds devices through Avahi: start it (systemctl start avahi-daemon) and castd \
                looks at once. Or give a device by address: castd --device 192.168.1.20.
                """
        case .starting:
            return "No devices yet: castd is starting to look for them with mDNS. Try again in a few seconds."
        case .running:
            if let interfaces = multicastInterfaces, interfaces.isEmpty {
                return """
                    No devices: castd looks with mDNS, but no network interface here can reach a \
                    network (none is up with multicast; loopback does not count).
                    Connect to the network the Cast devices are on.
                    """
            }
            let since =
                daemon.discoverySinceMs > 0 ? Date(timeIntervalSince1970: Double(daemon.discoverySinceMs) / 1000) : nil
            // Clocks may disagree by a little (castd's and castc's are read apart): never "-1 s ago".
            let looked = since.map { max(0, now.timeIntervalSince($0)) }
            if let looked, looked < patience {
                return
                    "No devices yet: castd began looking \(Int(looked.rounded())) s ago. Devices answer within seconds; try again in a moment."
            }
            let duration = looked.map { " for " + PlaybackTime.formatUptime($0) } ?? ""
            // What castc sees of this machine, not where Avahi browses: its configuration
            // (allow-interfaces) may keep it to fewer, as the demo's keeps it to loopback.
            let interfaces =
                multicastInterfaces.map {
                    " This machine's interfaces with multicast: " + $0.joined(separator: ", ") + "."
                }
                ?? ""
            return """
                No devices: castd has looked with mDNS\(duration) and no Cast device answered.\(interfaces)
                - Is the device on, and on this network? A guest network, another subnet or a \
                VLAN keeps mDNS from it.
                - A firewall here must let mDNS in: UDP port 5353 (ufw allow mdns; firewalld: \
                firewall-cmd --add-service=mdns).
                - A device mDNS cannot reach can be given by address: castd --device 192.168.1.20.
                """
        }
    }

    /// The interfaces that are up, not loopback, and can multicast: where mDNS can go. Nil if
    /// they cannot be read.
    static func multicastInterfaces() -> [String]? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var names: [String] = []
        for entry in sequence(first: list, next: { $0?.pointee.ifa_next }) {
            guard let entry else { break }
            let flags = Int(entry.pointee.ifa_flags)
            guard flags & IFF_UP != 0, flags & IFF_LOOPBACK == 0, flags & IFF_MULTICAST != 0,
                let name = entry.pointee.ifa_name
            else { continue }
            let text = String(cString: name)
            if !names.contains(text) { names.append(text) }
        }
        return names
    }
}
