/// Every setting castd takes, once: its key in castd.toml, its command-line flag, and what
/// values it takes. The configuration file, the flags and `castd --check-config` all work from
/// this list.
public enum ConfigKey: String, CaseIterable, Sendable, Hashable {
    case socket
    case stateDirectory
    case devices
    case discovery
    case trustRoots
    case deviceAuth
    case controlGroups
    case readGroups
    case maxFrameBytes
    case maxConnectionsPerUID
    case maxCallsPerConnection
    case watcherQueue
    case idleTimeoutSeconds
    case maxMDNSServices
    case maxMDNSServicesPerHost
    case frameTimeoutSeconds
    case logLevel
    case logFilters
    case launchAppID
    case launchLanguage
    case launchAndroidTV
    case launchIfRunning
    case launchFilterDevices
    case httpAddress
    case httpPort

    /// Where the key lives in castd.toml: table names, then the key.
    public var path: [String] {
        switch self {
        case .socket: ["socket"]
        case .stateDirectory: ["state_directory"]
        case .devices: ["devices"]
        case .discovery: ["discovery"]
        case .trustRoots: ["trust_roots"]
        case .deviceAuth: ["device_auth"]
        case .controlGroups: ["access", "control_groups"]
        case .readGroups: ["access", "read_groups"]
        case .maxFrameBytes: ["limits", "max_frame_bytes"]
        case .maxConnectionsPerUID: ["limits", "max_connections_per_uid"]
        case .maxCallsPerConnection: ["limits", "max_calls_per_connection"]
        case .watcherQueue: ["limits", "watcher_queue"]
        case .idleTimeoutSeconds: ["limits", "idle_timeout_seconds"]
        case .maxMDNSServices: ["limits", "max_mdns_services"]
        case .maxMDNSServicesPerHost: ["limits", "max_mdns_services_per_host"]
        case .frameTimeoutSeconds: ["limits", "frame_timeout_seconds"]
        case .logLevel: ["log", "level"]
        case .logFilters: ["log", "filters"]
        case .launchAppID: ["launch", "app_id"]
        case .launchLanguage: ["launch", "language"]
        case .launchAndroidTV: ["launch", "android_tv"]
        case .launchIfRunning: ["launch", "if_running"]
        case .launchFilterDevices: ["launch", "filter_devices"]
        case .httpAddress: ["http", "address"]
        case .httpPort: ["http", "port"]
        }
    }

    /// "limits.max_frame_bytes"
    public var name: String { path.joined(separator: ".") }

    /// The command-line flag that sets the same thing.
    public var flag: String {
        switch self {
        case .socket: "--socket"
        case .stateDirectory: "--state-directory"
        case .devices: "--device"
        case .discovery: "--[no-]discovery"
        case .trustRoots: "--trust-root"
        case .deviceAuth: "--device-auth"
        case .controlGroups: "--control-group"
        case .readGroups: "--read-group"
        case .maxFrameBytes: "--max-frame-bytes"
        case .maxConnectionsPerUID: "--max-connections-per-uid"
        case .maxCallsPerConnection: "--max-calls-per-connection"
        case .watcherQueue: "--watcher-queue"
        case .idleTimeoutSeconds: "--idle-timeout"
        case .maxMDNSServices: "--max-mdns-services"
        case .maxMDNSServicesPerHost: "--max-mdns-services-per-host"
        case .frameTimeoutSeconds: "--frame-timeout"
        case .logLevel: "--log-level"
        case .logFilters: "--log-filter"
        case .launchAppID: "--launch-app"
        case .launchLanguage: "--launch-language"
        case .launchAndroidTV: "--[no-]launch-android-tv"
        case .launchIfRunning: "--launch-if-running"
        case .launchFilterDevices: "--[no-]launch-filter-devices"
        case .httpAddress: "--http-address"
        case .httpPort: "--http-port"
        }
    }

    public enum Kind: Sendable, Equatable {
        case string
        case bool
        case integer(ClosedRange<Int>)
        case strings
        /// A table of string values under arbitrary keys (`[log.filters]`).
        case stringTable
    }

    public var kind: Kind {
        switch self {
        case .socket, .stateDirectory, .deviceAuth, .logLevel, .launchAppID, .launchLanguage, .launchIfRunning,
            .httpAddress:
            .string
        case .httpPort: .integer(0...65535)
        case .discovery, .launchAndroidTV, .launchFilterDevices: .bool
        case .devices, .trustRoots, .controlGroups, .readGroups: .strings
        case .maxFrameBytes: .integer(1024...(64 << 20))
        case .maxConnectionsPerUID, .maxCallsPerConnection: .integer(1...65536)
        case .watcherQueue: .integer(2...1_000_000)
        case .idleTimeoutSeconds, .frameTimeoutSeconds: .integer(0...86400)
        case .maxMDNSServices: .integer(16...65536)
        case .maxMDNSServicesPerHost: .integer(1...65536)
        case .logFilters: .stringTable
        }
    }

    /// The tables castd.toml has.
    public static let tables: Set<String> = Set(allCases.filter { $0.path.count == 2 }.map { $0.path[0] })

    public static func at(_ path: [String]) -> ConfigKey? { allCases.first { $0.path == path } }
}

/// A setting's value, as the file or a flag gives it.
public enum ConfigValue: Sendable, Equatable {
    case string(String)
    case bool(Bool)
    case integer(Int)
    case strings([String])
    case table([(key: String, value: String)])

    public static func == (a: ConfigValue, b: ConfigValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): x == y
        case (.bool(let x), .bool(let y)): x == y
        case (.integer(let x), .integer(let y)): x == y
        case (.strings(let x), .strings(let y)): x == y
        case (.table(let x), .table(let y)): x.map(\.key) == y.map(\.key) && x.map(\.value) == y.map(\.value)
        default: false
        }
    }
}

/// Settings from one source (the file, or the flags): only what that source gives.
public struct ConfigLayer: Sendable, Equatable {
    public var values: [ConfigKey: ConfigValue] = [:]
    /// Where each value came from, for messages ("castd.toml line 12", "--max-frame-bytes").
    public var origins: [ConfigKey: String] = [:]

    public init() {}

    public subscript(key: ConfigKey) -> ConfigValue? {
        get { values[key] }
        set { values[key] = newValue }
    }

    public mutating func set(_ key: ConfigKey, _ value: ConfigValue, from origin: String) {
        values[key] = value
        origins[key] = origin
    }

    /// This layer with `other`'s values on top.
    public func overridden(by other: ConfigLayer) -> ConfigLayer {
        var merged = self
        for (key, value) in other.values {
            merged.set(key, value, from: other.origins[key] ?? key.flag)
        }
        return merged
    }
}
