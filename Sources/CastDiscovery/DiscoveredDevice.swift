/// A Cast device (or speaker group) found by mDNS.
public struct DiscoveredDevice: Sendable, Hashable {
    /// The TXT `id`; when a device sends none, the service instance name.
    public var id: String
    /// The TXT `fn`; when a device sends none, the service instance name.
    public var friendlyName: String
    /// The TXT `md`, or "".
    public var model: String
    /// A numeric IPv4 or IPv6 address (IPv6 link-local addresses carry `%interface`).
    public var host: String
    /// The port of the Cast channel: 8009 for devices, another port for groups.
    public var port: Int
    public var capabilities: CastCapabilities
    /// The TXT `rs`, or "".
    public var statusText: String
    /// The TXT `st` is present and not 0.
    public var isBusy: Bool
    /// A speaker group: `ca` has `multizoneGroup`, or the model is "Google Cast Group".
    public var isGroup: Bool
    /// The mDNS service instance name ("Chromecast-b380c5….").
    public var serviceName: String
    public var txt: CastTXTRecord

    /// Derives a device from one resolved service.
    public init(serviceName: String, host: String, port: Int, txt: CastTXTRecord) {
        self.id = txt.id ?? serviceName
        self.friendlyName = txt.friendlyName ?? serviceName
        self.model = txt.model ?? ""
        self.host = host
        self.port = port
        self.capabilities = txt.capabilities
        self.statusText = txt.statusText ?? ""
        self.isBusy = (txt.status ?? 0) != 0
        self.isGroup = txt.capabilities.contains(.multizoneGroup) || txt.model == Self.groupModel
        self.serviceName = serviceName
        self.txt = txt
    }

    /// The model name speaker groups advertise.
    public static let groupModel = "Google Cast Group"
}

extension DiscoveredDevice: Identifiable {}
