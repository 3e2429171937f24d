import CastSenderLink
import CastDevices
import CastDiscovery
import CastdAPI
import CastdServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Everything castd runs with: the configuration file and the flags over the mode's defaults,
/// checked.
public struct CastdSettings: Sendable {
    public var mode: DaemonMode
    /// The configuration file read; nil if none was.
    public var configFile: String?
    public var socket: String
    /// nil: castd keeps no state.
    public var stateDirectory: String?
    public var devices: [StaticDevice]
    public var discovery: Bool
    public var trustRoots: [String]
    public var deviceAuth: DeviceAuthenticationPolicy
    public var access: CastdAccessPolicy
    /// The group names (or ids) as configured, for messages.
    public var controlGroupNames: [String]
    public var readGroupNames: [String]
    public var maxFrameBytes: Int
    public var maxConnectionsPerUID: Int
    public var maxCallsPerConnection: Int
    public var watcherQueue: Int
    /// nil: never close a silent connection.
    public var idleTimeout: Duration?
    /// The most mDNS service instances discovery follows at once (a device on IPv4 and IPv6
    /// is two); announcements beyond it wait for room.
    public var maxMDNSServices: Int
    /// The most of those from one address: a flood from one host fills only its own share.
    public var maxMDNSServicesPerHost: Int
    /// How long a frame may take to arrive once its first byte has; nil: for ever.
    public var frameTimeout: Duration?
    /// The minimum log level and the `PATTERN=LEVEL` filters, unparsed (the logging system
    /// parses them).
    public var logLevel: String
    public var logFilters: [(pattern: String, level: String)]
    /// What sessions start when clients do not say (`[launch]`).
    public var launch = LaunchDefaults()
    /// Where castd's media server listens for devices fetching local files (`[http]`): nil,
    /// the address castd reaches each device from.
    public var httpAddress: String?
    /// Its port: nil, one ephemeral port for castd's lifetime.
    public var httpPort: Int?
    /// Things worth a log line once castd's logging is up (a default group that does not exist).
    public var notes: [String] = []

    /// Resolves `layer` (the file with the flags over it) in `paths`' mode and environment.
    public static func resolve(_ layer: ConfigLayer, paths: DaemonPaths, configFile: String?) throws(ConfigError)
        -> CastdSettings
    {
        func error(_ key: ConfigKey, _ problem: String) -> ConfigError {
            ConfigError(origin: layer.origins[key] ?? key.flag, key: key.name, problem: problem)
        }
        func string(_ key: ConfigKey) -> String? {
            if case .string(let value)? = layer[key] { return value }
            return nil
        }
        func strings(_ key: ConfigKey) -> [String]? {
            if case .strings(let value)? = layer[key] { return value }
            return nil
        }
        func integer(_ key: ConfigKey, _ fallback: Int) -> Int {
            if case .integer(let value)? = layer[key] { return value }
            return fallback
        }

        guard let socket = string(.socket).flatMap({ $0.isEmpty ? nil : $0 }) ?? paths.socket else {
            throw ConfigError(
                origin: "castd", key: nil,
                problem: "a user daemon needs $XDG_RUNTIME_DIR for its socket; give one with --socket or `socket =`")
        }
        guard socket.hasPrefix("/") || !socket.contains("\0") else { throw error(.socket, "not a path") }
        if socket.utf8.count > 107 {
            throw error(.socket, "\(socket) is longer than a Unix socket path may be (107 bytes)")
        }

        var stateDirectory = paths.stateDirectory
        if let explicit = string(.stateDirectory) { stateDirectory = explicit.isEmpty ? nil : explicit }

        var devices: [StaticDevice] = []
        for text in strings(.devices) ?? [] {
            do {
                devices.append(try StaticDevice(parsing: text))
            } catch let failure as CastdError {
                throw error(.devices, failure.message)
            } catch {
                throw ConfigError(origin: layer.origins[.devices] ?? "--device", key: "devices", problem: "\(error)")
            }
        }

        let trustRoots = strings(.trustRoots) ?? []
        for path in trustRoots {
            do {
                _ = try CastTrustRoots(contentsOfFile: path)
            } catch let failure as CastTrustRootsError {
                throw error(.trustRoots, failure.message)
            } catch {
                throw ConfigError(
                    origin: layer.origins[.trustRoots] ?? "--trust-root", key: "trust_roots", problem: "\(error)")
            }
        }

        var deviceAuth = DeviceAuthenticationPolicy.require
        if let text = string(.deviceAuth) {
            guard let policy = DeviceAuthenticationPolicy(rawValue: text) else {
                throw error(.deviceAuth, "'\(text)' is not a policy; use require or warn")
            }
            deviceAuth = policy
        }

        var notes: [String] = []
        func groups(_ key: ConfigKey, defaults: [String]) throws(ConfigError) -> (names: [String], ids: Set<UInt32>) {
            guard let names = strings(key) else {
                // Defaults that do not exist on this machine are left out, with a note.
                var kept: [String] = []
                var ids: Set<UInt32> = []
                for name in defaults {
                    if let gid = GroupLookup.gid(name) {
                        kept.append(name)
                        ids.insert(gid)
                    } else {
                        notes.append("group \(name) does not exist, so only castd's own user and root may use castd")
                    }
                }
                return (kept, ids)
            }
            var ids: Set<UInt32> = []
            for name in names {
                guard let gid = GroupLookup.gid(name) else { throw error(key, "no group named \(name)") }
                guard gid != 0 else {
                    throw error(key, "the root group cannot be named (root itself may always control castd)")
                }
                ids.insert(gid)
            }
            return (names, ids)
        }
        let control = try groups(.controlGroups, defaults: paths.defaultControlGroups)
        let read = try groups(.readGroups, defaults: [])

        var discovery = true
        if case .bool(let value)? = layer[.discovery] { discovery = value }

        let idleSeconds = integer(.idleTimeoutSeconds, 30)
        let frameSeconds = integer(.frameTimeoutSeconds, 30)
        var logFilters: [(String, String)] = []
        if case .table(let entries)? = layer[.logFilters] { logFilters = entries.map { ($0.key, $0.value) } }

        var settings = CastdSettings(
            mode: paths.mode, configFile: configFile, socket: socket, stateDirectory: stateDirectory,
            devices: devices, discovery: discovery, trustRoots: trustRoots, deviceAuth: deviceAuth,
            access: CastdAccessPolicy(ownerUID: getuid(), controlGroups: control.ids, readGroups: read.ids),
            controlGroupNames: control.names, readGroupNames: read.names,
            maxFrameBytes: integer(.maxFrameBytes, CastdRPC.defaultMaximumFrameLength),
            maxConnectionsPerUID: integer(.maxConnectionsPerUID, 256),
            maxCallsPerConnection: integer(.maxCallsPerConnection, 128),
            watcherQueue: integer(.watcherQueue, 256),
            idleTimeout: idleSeconds == 0 ? nil : .seconds(idleSeconds),
            maxMDNSServices: integer(.maxMDNSServices, DiscoveryLimits().maximumServices),
            maxMDNSServicesPerHost: integer(.maxMDNSServicesPerHost, DiscoveryLimits().maximumServicesPerHost),
            frameTimeout: frameSeconds == 0 ? nil : .seconds(frameSeconds),
            logLevel: string(.logLevel) ?? "info", logFilters: logFilters)
        settings.notes = notes
        if let address = string(.httpAddress), !address.isEmpty {
            guard IPAddressText.isLiteral(address) else {
                throw error(.httpAddress, "'\(address)' is not an IP address: give one such as 192.168.1.10")
            }
            settings.httpAddress = address
        }
        let port = integer(.httpPort, 0)
        settings.httpPort = port == 0 ? nil : port
        settings.launch = try launchDefaults(
            string: string,
            bool: { key in
                if case .bool(let value)? = layer[key] { return value }
                return nil
            }, error: error)
        return settings
    }

    /// `[launch]`, checked.
    private static func launchDefaults(
        string: (ConfigKey) -> String?, bool: (ConfigKey) -> Bool?, error problem: (ConfigKey, String) -> ConfigError
    ) throws(ConfigError) -> LaunchDefaults {
        var defaults = LaunchDefaults()
        if let appID = string(.launchAppID), !appID.isEmpty {
            do { try CastdValidation.appID(appID) } catch {
                throw problem(.launchAppID, "'\(appID)' is not a receiver app id: give one such as CC1AD845")
            }
            defaults.appID = appID
        }
        if let language = string(.launchLanguage), !language.isEmpty {
            defaults.options.language = language
            do { try CastdValidation.launchOptions(defaults.options) } catch {
                throw problem(.launchLanguage, "'\(language)' is not a language tag: give one such as en-US")
            }
        }
        defaults.options.androidTv = bool(.launchAndroidTV) ?? false
        switch string(.launchIfRunning) {
        case nil, "join": defaults.relaunch = false
        case "relaunch": defaults.relaunch = true
        case let other?:
            throw problem(
                .launchIfRunning, "'\(other)' is not what to do with a running app: give join or relaunch")
        }
        defaults.filterDevices = bool(.launchFilterDevices) ?? false
        if defaults.filterDevices, defaults.appID == nil {
            throw problem(
                .launchFilterDevices, "lists the devices that can run launch.app_id, which is not set: set it too")
        }
        return defaults
    }

    /// The limits as castd.v1 reports them.
    public var limits: Castd_V1_Limits {
        var limits = Castd_V1_Limits()
        limits.maxFrameBytes = UInt32(clamping: maxFrameBytes)
        limits.maxConnectionsPerUid = UInt32(clamping: maxConnectionsPerUID)
        limits.maxCallsPerConnection = UInt32(clamping: maxCallsPerConnection)
        limits.watcherQueue = UInt32(clamping: watcherQueue)
        if let idleTimeout {
            let (seconds, attoseconds) = idleTimeout.components
            limits.idleTimeoutMs = UInt32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        }
        if let frameTimeout {
            let (seconds, attoseconds) = frameTimeout.components
            limits.frameTimeoutMs = UInt32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        }
        return limits
    }
}

extension ConfigError {
    /// An error at an origin as `ConfigLayer` records it: "path:line", a path, or a flag.
    public init(origin: String, key: String?, problem: String) {
        if let colon = origin.lastIndex(of: ":"), let line = Int(origin[origin.index(after: colon)...]) {
            self.init(file: String(origin[..<colon]), line: line, key: key, problem: problem)
        } else {
            self.init(file: origin, line: nil, key: key, problem: problem)
        }
    }
}

/// Group names and ids, through NSS (getgrnam_r), so /etc/group, LDAP and systemd's dynamic
/// users all work.
public enum GroupLookup {
    /// The id of a group given by name or number.
    public static func gid(_ nameOrID: String) -> UInt32? {
        if let number = UInt32(nameOrID) { return number }
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrnam_r(nameOrID, &entry, &buffer, buffer.count, &result) == 0, let found = result else { return nil }
        return found.pointee.gr_gid
    }

    public static func name(_ gid: UInt32) -> String? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrgid_r(gid, &entry, &buffer, buffer.count, &result) == 0, let found = result else { return nil }
        return String(cString: found.pointee.gr_name)
    }
}

/// Whether text is an IPv4 or IPv6 address as written (no names: castd resolves none here).
enum IPAddressText {
    static func isLiteral(_ text: String) -> Bool {
        var bytes = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET, text, &bytes) == 1 || inet_pton(AF_INET6, text, &bytes) == 1
    }
}
