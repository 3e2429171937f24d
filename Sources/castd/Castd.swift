import ArgumentParser
import CSystemd
import CastdAPI
import CastdDaemon
import CastdLogging
import CastdServer
import CastdSupport
import Foundation
import Logging
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

@main
struct Castd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "castd",
        abstract:
            "Google Cast for Linux: one daemon that discovers Cast devices and shares them with every local client.",
        discussion: """
            castd finds Cast devices through the system's Avahi daemon (mDNS), holds one TLS \
            connection per device, and serves the castd.v1 RPC on a Unix socket. Clients such as \
            castc share one session and one media status per device.

            Two modes (--mode): a desktop session's daemon (user: runs as you, serves \
            $XDG_RUNTIME_DIR/castd/castd.sock, reads ~/.config/castd/castd.toml, keeps state in \
            ~/.local/state/castd) and the machine's daemon (system: runs as the castd user, serves \
            /run/castd/castd.sock, reads /etc/castd/castd.toml, keeps state in /var/lib/castd; \
            castd refuses to run as root in system mode). \
            Under systemd socket activation (LISTEN_FDS) castd serves the socket it is given and \
            tells systemd how it is doing (READY, STATUS, WATCHDOG, STOPPING).

            Who may call: castd's own user and root control it; members of --control-group \
            groups control it too (system mode: the castd group); members of --read-group groups \
            may only read. castd asks the kernel who each client is (SO_PEERCRED) before reading \
            anything it sends, and refuses everyone else with PERMISSION_DENIED.

            Configuration: every flag below marked [key] is also that key in castd.toml; a flag \
            overrides the file. `castd --check-config` checks a file and prints the settings, or \
            names the bad key and line. packaging/castd.toml documents every key.

            Device authentication: on every connection castd challenges the device and checks \
            that its certificate chains to a Cast root (Google's roots ship with castd), that \
            the answer is signed for this connection, and that the keys and certificates are \
            sound. A device that fails is refused, with the reason in `castc devices` and \
            `castc status`; --device-auth warn uses it anyway, reported as unverified. \
            --trust-root adds roots (cast-emulator's, a developer's device CA).

            Examples:
              castd                                   # discover devices on the network
              castd --mode system --control-group audio   # the machine's daemon; group audio controls it
              castd --check-config --config /etc/castd/castd.toml
              castd --device 192.168.1.20             # also use a device mDNS cannot see
              castd --device "Kitchen=192.168.1.21:8009" --no-discovery
              castd --trust-root /tmp/cast-ca/root.pem   # the root of cast-emulators
              castd --log-level notice --log-filter 'CastChannel*=verbose'
            """,
        version: CastdVersion.current
    )

    @Option(
        name: .long,
        help: ArgumentHelp(
            "user (a desktop session's daemon) or system (the machine's, as the castd user; refused as root). Default: user when $XDG_RUNTIME_DIR is set, else system.",
            valueName: "mode"))
    var mode: DaemonMode?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The configuration file. Default: $CONFIGURATION_DIRECTORY/castd.toml (systemd), else $XDG_CONFIG_HOME/castd/castd.toml (user mode) or /etc/castd/castd.toml (system mode), if it exists.",
            valueName: "path"))
    var config: String?

    @Flag(
        name: .customLong("check-config"),
        help:
            "Check the configuration file and flags, print the settings they give, and exit (1 naming the bad key and line)."
    )
    var checkConfig = false

    @Flag(name: .customLong("print-socket-path"), help: "Print the socket path castd would serve, and exit.")
    var printSocketPath = false

    @Option(name: .long, help: ArgumentHelp("The Unix socket to serve. [socket]", valueName: "path"))
    var socket: String?

    @Option(
        name: .customLong("state-directory"),
        help: ArgumentHelp(
            "Where castd keeps the sessions it rejoins after a restart (sessions.json). Default: $STATE_DIRECTORY (systemd), else $XDG_STATE_HOME/castd or ~/.local/state/castd (user mode), /var/lib/castd (system mode). An empty value keeps nothing. [state_directory]",
            valueName: "path"))
    var stateDirectory: String?

    @Option(
        name: .customLong("device"),
        help: ArgumentHelp(
            "A device to use without discovery: HOST, HOST:PORT or NAME=HOST[:PORT]. Repeatable. [devices]",
            valueName: "address"))
    var devices: [String] = []

    @Flag(
        name: .customLong("discovery"), inversion: .prefixedNo,
        help: "Browse mDNS through Avahi (the default), or use only the --device devices. [discovery]")
    var discovery: Bool?

    @Option(
        name: .customLong("trust-root"),
        help: ArgumentHelp(
            "Also trust the root certificates in this PEM file for device authentication (besides Google's Cast roots). Repeatable. [trust_roots]",
            valueName: "pem-file"))
    var trustRoots: [String] = []

    @Option(
        name: .customLong("device-auth"),
        help: ArgumentHelp(
            "A device that fails device authentication: require (refuse it, the default) or warn (use it, reported as unverified). [device_auth]",
            valueName: "policy"))
    var deviceAuth: String?

    @Option(
        name: .customLong("control-group"),
        help: ArgumentHelp(
            "Members of this group (name or id) may control castd, as its own user and root may. Repeatable. Default: castd in system mode, none in user mode. [access.control_groups]",
            valueName: "group"))
    var controlGroups: [String] = []

    @Option(
        name: .customLong("read-group"),
        help: ArgumentHelp(
            "Members of this group may only read: list devices, status, watch, logs. Repeatable. [access.read_groups]",
            valueName: "group"))
    var readGroups: [String] = []

    @Option(
        name: .customLong("max-frame-bytes"),
        help: ArgumentHelp(
            "The largest frame a client may send (default 4194304). [limits.max_frame_bytes]", valueName: "bytes"))
    var maxFrameBytes: Int?

    @Option(
        name: .customLong("max-connections-per-uid"),
        help: ArgumentHelp(
            "Connections one uid may hold open (default 256). [limits.max_connections_per_uid]", valueName: "n"))
    var maxConnectionsPerUID: Int?

    @Option(
        name: .customLong("max-calls-per-connection"),
        help: ArgumentHelp(
            "Calls open at once on one connection (default 128). [limits.max_calls_per_connection]", valueName: "n"))
    var maxCallsPerConnection: Int?

    @Option(
        name: .customLong("watcher-queue"),
        help: ArgumentHelp(
            "Events a watcher may fall behind by before it is told it lagged and given a fresh snapshot (default 256). [limits.watcher_queue]",
            valueName: "events"))
    var watcherQueue: Int?

    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp(
            "Close a connection that sends nothing this many seconds after connecting (default 30; 0: never). [limits.idle_timeout_seconds]",
            valueName: "seconds"))
    var idleTimeout: Int?

    @Option(
        name: .customLong("frame-timeout"),
        help: ArgumentHelp(
            "Close a connection whose frame has not arrived whole this many seconds after its first byte (default 30; 0: never). [limits.frame_timeout_seconds]",
            valueName: "seconds"))
    var frameTimeout: Int?

    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp(
            "The minimum log level: verbose (or trace), debug, info (the default), notice, warning, error, critical (or assert), none. [log.level]",
            valueName: "level"))
    var logLevel: String?

    @Option(
        name: .customLong("log-filter"),
        help: ArgumentHelp(
            "A level for the subsystems a glob names, e.g. 'CastChannel*=verbose' (the last matching pattern decides). Repeatable; replaces the file's [log.filters]. [log.filters]",
            valueName: "pattern=level"))
    var logFilters: [String] = []

    @Option(
        name: .customLong("launch-app"),
        help: ArgumentHelp(
            "The receiver app a session starts when a client names none (castc connect without --app), and the one a load starts without a media session (default: the Default Media Receiver, CC1AD845). [launch.app_id]",
            valueName: "app-id"))
    var launchApp: String?

    @Option(
        name: .customLong("launch-language"),
        help: ArgumentHelp(
            "The language apps are launched with unless a client gives one, BCP-47 (en-US). [launch.language]",
            valueName: "lang"))
    var launchLanguage: String?

    @Flag(
        name: .customLong("launch-android-tv"), inversion: .prefixedNo,
        help: "Launch apps so that their Android TV receiver is accepted too (Cast Connect). [launch.android_tv]")
    var launchAndroidTV: Bool?

    @Flag(
        name: .customLong("launch-filter-devices"), inversion: .prefixedNo,
        help:
            "List only the devices that can run --launch-app (the sender SDK's discovery criterion: castd asks each device, and its cast state counts only those); a client may still ask for every device. [launch.filter_devices]"
    )
    var launchFilterDevices: Bool?

    @Option(
        name: .customLong("launch-if-running"),
        help: ArgumentHelp(
            "When the --launch-app already runs on the device: join it (the default) or relaunch it. [launch.if_running]",
            valueName: "join|relaunch"))
    var launchIfRunning: String?

    @Option(
        name: .customLong("max-mdns-services"),
        help: ArgumentHelp(
            "The most mDNS service instances discovery follows at once (default 1024; a device on IPv4 and IPv6 is two). Announcements beyond it are logged and wait for room. [limits.max_mdns_services]",
            valueName: "count"))
    var maxMDNSServices: Int?

    @Option(
        name: .customLong("max-mdns-services-per-host"),
        help: ArgumentHelp(
            "The most of those from one address (default 32): a host that announces more has the rest ignored, so that it cannot hide the other hosts' devices. [limits.max_mdns_services_per_host]",
            valueName: "count"))
    var maxMDNSServicesPerHost: Int?

    @Option(
        name: .customLong("http-address"),
        help: ArgumentHelp(
            "The address castd's media server offers devices for your local files (default: the address castd reaches each device from). [http.address]",
            valueName: "ip"))
    var httpAddress: String?

    @Option(
        name: .customLong("http-port"),
        help: ArgumentHelp(
            "The media server's TCP port, for a firewall rule (default 0: one free port, kept while castd runs). [http.port]",
            valueName: "port"))
    var httpPort: Int?

    /// The flags, as a configuration layer over the file's.
    var flagLayer: ConfigLayer {
        var layer = ConfigLayer()
        func set(_ key: ConfigKey, _ value: ConfigValue?) {
            if let value { layer.set(key, value, from: key.flag) }
        }
        set(.socket, socket.map(ConfigValue.string))
        set(.stateDirectory, stateDirectory.map(ConfigValue.string))
        set(.devices, devices.isEmpty ? nil : .strings(devices))
        set(.discovery, discovery.map(ConfigValue.bool))
        set(.trustRoots, trustRoots.isEmpty ? nil : .strings(trustRoots))
        set(.deviceAuth, deviceAuth.map(ConfigValue.string))
        set(.controlGroups, controlGroups.isEmpty ? nil : .strings(controlGroups))
        set(.readGroups, readGroups.isEmpty ? nil : .strings(readGroups))
        set(.maxFrameBytes, maxFrameBytes.map(ConfigValue.integer))
        set(.maxConnectionsPerUID, maxConnectionsPerUID.map(ConfigValue.integer))
        set(.maxCallsPerConnection, maxCallsPerConnection.map(ConfigValue.integer))
        set(.watcherQueue, watcherQueue.map(ConfigValue.integer))
        set(.idleTimeoutSeconds, idleTimeout.map(ConfigValue.integer))
        set(.maxMDNSServices, maxMDNSServices.map(ConfigValue.integer))
        set(.maxMDNSServicesPerHost, maxMDNSServicesPerHost.map(ConfigValue.integer))
        set(.frameTimeoutSeconds, frameTimeout.map(ConfigValue.integer))
        set(.logLevel, logLevel.map(ConfigValue.string))
        set(.launchAppID, launchApp.map(ConfigValue.string))
        set(.launchLanguage, launchLanguage.map(ConfigValue.string))
        set(.launchAndroidTV, launchAndroidTV.map(ConfigValue.bool))
        set(.launchIfRunning, launchIfRunning.map(ConfigValue.string))
        set(.launchFilterDevices, launchFilterDevices.map(ConfigValue.bool))
        set(.httpAddress, httpAddress.map(ConfigValue.string))
        set(.httpPort, httpPort.map(ConfigValue.integer))
        if !logFilters.isEmpty {
            // PATTERN=LEVEL; the level follows the last "=". Checked with the rest below.
            set(
                .logFilters,
                .table(
                    logFilters.map { entry in
                        guard let equals = entry.lastIndex(of: "=") else { return (entry, "") }
                        return (String(entry[..<equals]), String(entry[entry.index(after: equals)...]))
                    }))
        }
        return layer
    }

    /// The configuration file and the flags over it, checked.
    func settings() throws(ConfigError) -> CastdSettings {
        let environment = ProcessInfo.processInfo.environment
        let paths = DaemonPaths(mode: mode ?? DaemonMode.detect(environment: environment), environment: environment)
        var fileLayer = ConfigLayer()
        var configFile: String?
        if let explicit = config {
            fileLayer = try ConfigFile.load(path: explicit)
            configFile = explicit
        } else if let path = paths.configFile, FileManager.default.fileExists(atPath: path) {
            fileLayer = try ConfigFile.load(path: path)
            configFile = path
        }
        let flags = flagLayer
        for (key, value) in flags.values {
            try Self.checkRange(key, value)
        }
        let merged = fileLayer.overridden(by: flags)
        let settings = try CastdSettings.resolve(merged, paths: paths, configFile: configFile)
        do {
            _ = try LogFilter(level: settings.logLevel, filters: [])
        } catch {
            throw ConfigError(
                origin: merged.origins[.logLevel] ?? "--log-level", key: ConfigKey.logLevel.name, problem: error.message
            )
        }
        if !logFilters.isEmpty {
            do {
                _ = try LogFilter(level: nil, filters: logFilters)
            } catch {
                throw ConfigError(file: "--log-filter", line: nil, key: nil, problem: error.message)
            }
        }
        for entry in settings.logFilters {
            do {
                _ = try LogFilter(level: nil, patterns: [entry])
            } catch {
                throw ConfigError(
                    origin: merged.origins[.logFilters] ?? "--log-filter", key: ConfigKey.logFilters.name,
                    problem: error.message)
            }
        }
        return settings
    }

    /// The log filter the settings give (checked by `settings()`).
    static func logFilter(_ settings: CastdSettings) -> LogFilter {
        (try? LogFilter(level: settings.logLevel, patterns: settings.logFilters)) ?? LogFilter()
    }

    /// A flag's integer within the key's range.
    static func checkRange(_ key: ConfigKey, _ value: ConfigValue) throws(ConfigError) {
        if case .integer(let range) = key.kind, case .integer(let number) = value, !range.contains(number) {
            throw ConfigError(
                file: key.flag, line: nil, key: nil,
                problem: "\(number) is out of range; use \(range.lowerBound) to \(range.upperBound)")
        }
    }

    func run() async throws {
        let arenas = MallocArenas.apply(environment: ProcessInfo.processInfo.environment)
        let settings: CastdSettings
        do {
            settings = try self.settings()
        } catch {
            FileHandle.standardError.write(Data("castd: \(error)\n".utf8))
            // sysexits(3): a bad flag is a usage error, a bad file a configuration error.
            throw ExitCode(error.file.hasPrefix("--") ? 64 : 78)
        }
        if checkConfig {
            print(Self.describe(settings))
            // The file is fine (the system unit runs it as castd), but castd started as this
            // check was would refuse: say so, and the commands that work.
            if Self.rootRefusal(mode: settings.mode, explicit: mode != nil, euid: geteuid()) != nil {
                print(
                    "note: castd started as root in system mode would refuse to run; the machine's castd runs as "
                        + "the user castd (systemctl enable --now castd.socket), and one for root alone is "
                        + "castd --mode user --socket /run/castd/castd.sock")
            }
            return
        }
        if printSocketPath {
            print(settings.socket)
            return
        }
        if let refusal = Self.rootRefusal(mode: settings.mode, explicit: mode != nil, euid: geteuid()) {
            FileHandle.standardError.write(Data("castd: \(refusal)\n".utf8))
            throw ExitCode(78)  // sysexits(3) EX_CONFIG: started in a way castd does not run
        }
        let logs = CastdLogs.bootstrap(filter: Self.logFilter(settings))
        let logger = Logger(label: CastdSubsystem.castd)
        logger.info("logging", metadata: ["log.filter": "\(logs.store.filter)", "log.output": "\(logs.output)"])
        if let descriptors = DescriptorLimit.raiseToHardLimit() {
            logger.info(
                "descriptor limit",
                metadata: ["nofile.before": "\(descriptors.before)", "nofile": "\(descriptors.after)"])
        } else {
            logger.warning("cannot raise the descriptor limit (RLIMIT_NOFILE) to its hard limit")
        }
        if let arenas {
            logger.info("malloc arenas capped", metadata: ["malloc.arena_max": "\(arenas)"])
        } else if let set = ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] {
            logger.info("malloc arenas as MALLOC_ARENA_MAX says", metadata: ["malloc.arena_max": "\(set)"])
        } else {
            logger.notice("malloc arenas not capped: mallopt refused (a sanitizer's allocator, or not glibc's)")
        }
        let configLogger = Logger(label: CastdSubsystem.config)
        for note in settings.notes { configLogger.notice("\(note)") }
        if let file = settings.configFile { configLogger.info("configuration read", metadata: ["file": "\(file)"]) }

        let activated = sd_listen_fds(1)
        // The RPC socket, and optionally the files socket (its path ends in ".files").
        let passed = activated > 0 ? Array(SD_LISTEN_FDS_START..<(SD_LISTEN_FDS_START + activated)) : []
        let filesSockets = passed.filter { Self.boundPath(of: $0)?.hasSuffix(CastdSocketPath.filesSuffix) == true }
        let rpcSockets = passed.filter { !filesSockets.contains($0) }
        if activated > 2 || rpcSockets.count > 1 || filesSockets.count > 1 || (activated > 0 && rpcSockets.isEmpty) {
            logger.critical(
                "systemd passed \(activated) sockets; castd serves one RPC socket and, optionally, its files socket (ListenStream=%t/castd/castd.sock and %t/castd/castd.sock.files)"
            )
            throw ExitCode(1)
        }
        var options = CastdDaemon.Options(version: CastdVersion.current, logs: logs)
        options.activatedFilesSocket = filesSockets.first
        if let rpc = rpcSockets.first {
            let path = Self.boundPath(of: rpc) ?? settings.socket
            options.activatedSocket = (rpc, path)
            logger.info("socket activated", metadata: ["socket": "\(path)"])
            for problem in SocketPermissions.check(path: path, against: settings.access) {
                Logger(label: CastdSubsystem.access).warning("\(problem)")
            }
        }
        if let stateDirectory = settings.stateDirectory {
            logger.info("state", metadata: ["directory": "\(stateDirectory)"])
        }
        let daemon = try CastdDaemon(settings: settings, options: options)
        logger.info(
            "device authentication: \(settings.deviceAuth.rawValue)",
            metadata: ["auth.roots": "\(daemon.linkConfiguration.authentication.trustedRoots.names)"])
        do {
            try await daemon.run(gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        } catch let error as CastdError {
            logger.critical("\(error.message)")
            throw ExitCode(1)
        }
        logger.info("stopped; apps on the devices keep running")
    }
}

extension DaemonMode: ExpressibleByArgument {}
