import ArgumentParser
import CSystemd
import CastChannel
import CastCore
import CastdAPI
import CastdLogging
import CastdServer
import Foundation
import Logging
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

let castdVersion = "0.1.0"

@main
struct Castd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "castd",
        abstract: "Google Cast for Linux: one daemon that discovers Cast devices and shares them with every local client.",
        discussion: """
            castd finds Cast devices through the system's Avahi daemon (mDNS), holds one TLS
            connection per device, and serves the castd.v1 RPC on a Unix socket. Clients such as
            castc share one session and one media status per device.

            Socket: --socket PATH, else $CASTD_SOCKET, else $XDG_RUNTIME_DIR/castd/castd.sock
            (a desktop session's daemon), else /run/castd/castd.sock (the system daemon). Under
            systemd socket activation (LISTEN_FDS) castd serves the socket it is given.

            Device authentication: on every connection castd challenges the device and checks \
            that its certificate chains to a Cast root (Google's roots ship with castd), that \
            the answer is signed for this connection, and that the keys and certificates are \
            sound. A device that fails is refused, with the reason in `castc devices` and \
            `castc status`; --device-auth warn uses it anyway, reported as unverified. \
            --trust-root adds roots (cast-emulator's, a developer's device CA).

            Examples:
              castd                                   # discover devices on the network
              castd --device 192.168.1.20             # also use a device mDNS cannot see
              castd --device "Kitchen=192.168.1.21:8009" --no-discovery
              castd --trust-root /tmp/cast-ca/root.pem   # the root of cast-emulators
              castd --log-level notice --log-filter 'CastChannel*=verbose'
            """,
        version: castdVersion
    )

    @Option(name: .long, help: ArgumentHelp("The Unix socket to serve.", valueName: "path"))
    var socket: String?

    @Option(
        name: .customLong("device"),
        help: ArgumentHelp(
            "A device to use without discovery: HOST, HOST:PORT or NAME=HOST[:PORT]. Repeatable.",
            valueName: "address"))
    var devices: [String] = []

    @Flag(name: .customLong("no-discovery"), help: "Do not browse mDNS; use only --device devices.")
    var noDiscovery = false

    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp(
            "The minimum log level: verbose (or trace), debug, info (the default), notice, warning, error, critical (or assert), none.",
            valueName: "level"))
    var logLevel: String?

    @Option(
        name: .customLong("log-filter"),
        help: ArgumentHelp(
            "A level for the subsystems a glob names, e.g. 'CastChannel*=verbose' (the last matching pattern decides). Repeatable.",
            valueName: "pattern=level"))
    var logFilters: [String] = []

    @Option(
        name: .customLong("state-directory"),
        help: ArgumentHelp(
            "Where castd keeps the sessions it rejoins after a restart (sessions.json). Default: $STATE_DIRECTORY (systemd), else $XDG_STATE_HOME/castd, else ~/.local/state/castd, else /var/lib/castd for root. An empty value keeps nothing.",
            valueName: "path"))
    var stateDirectory: String?

    @Flag(name: .customLong("print-socket-path"), help: "Print the socket path castd would serve, and exit.")
    var printSocketPath = false

    @Option(
        name: .customLong("trust-root"),
        help: ArgumentHelp(
            "Also trust the root certificates in this PEM file for device authentication (besides Google's Cast roots). Repeatable.",
            valueName: "pem-file"))
    var trustRoots: [String] = []

    @Option(
        name: .customLong("device-auth"),
        help: ArgumentHelp(
            "A device that fails device authentication: require (refuse it, the default) or warn (use it, reported as unverified).",
            valueName: "policy"))
    var deviceAuth: DeviceAuthenticationPolicy = .require

    func validate() throws {
        _ = try logFilter()
        for device in devices {
            do { _ = try StaticDevice(parsing: device) } catch let error as CastdError { throw ValidationError(error.message) }
        }
        _ = try trustedRoots()
    }

    /// The log filter of --log-level and --log-filter. A bad level or entry stops castd, naming it.
    func logFilter() throws -> LogFilter {
        do {
            return try LogFilter(level: logLevel, filters: logFilters)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// Google's Cast roots and the --trust-root files. A file that cannot be used stops castd,
    /// naming it.
    func trustedRoots() throws -> CastTrustRoots {
        var roots = CastTrustRoots.cast
        for path in trustRoots {
            do {
                roots = roots.adding(try CastTrustRoots(contentsOfFile: path))
            } catch let error as CastTrustRootsError {
                throw ValidationError("--trust-root \(error.message)")
            }
        }
        return roots
    }

    func run() async throws {
        if printSocketPath {
            print(CastdSocketPath.resolve(explicit: socket))
            return
        }
        let logs = CastdLogs.bootstrap(filter: try logFilter())
        let logger = Logger(label: CastdSubsystem.castd)
        logger.info("logging", metadata: ["log.filter": "\(logs.store.filter)", "log.output": "\(logs.output)"])

        let target: CastdListenTarget
        let activated = sd_listen_fds(1)
        let resolved = CastdSocketPath.resolve(explicit: socket)
        let path = activated > 0 ? Self.boundPath(of: SD_LISTEN_FDS_START) ?? resolved : resolved
        if activated > 0 {
            target = .activated(fd: SD_LISTEN_FDS_START, path: path)
            logger.info("socket activated", metadata: ["fds": "\(activated)"])
        } else {
            target = .path(path)
        }

        var linkConfiguration = CastLinkConfiguration()
        linkConfiguration.authentication = DeviceAuthenticationSettings(
            trustedRoots: try trustedRoots(), policy: deviceAuth)
        logger.info(
            "device authentication: \(deviceAuth.rawValue)",
            metadata: [
                "auth.roots": "\(linkConfiguration.authentication.trustedRoots.names)"
            ])

        let hub = CastdEventHub()
        let stateDirectory = Self.stateDirectory(explicit: self.stateDirectory)
        if let stateDirectory { logger.info("state", metadata: ["directory": "\(stateDirectory)"]) }
        let registry = DeviceRegistry(
            hub: hub,
            staticDevices: try devices.map(StaticDevice.init(parsing:)),
            discovery: !noDiscovery,
            linkConfiguration: linkConfiguration,
            sessionStore: SessionStore(
                directory: stateDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) },
                logger: Logger(label: CastdSubsystem.state)),
            logger: Logger(label: CastdSubsystem.castDevice))
        let service = CastdService(
            registry: registry, hub: hub, facts: DaemonFacts(version: castdVersion, socketPath: path), logs: logs)
        let server = CastdServer(
            configuration: CastdServerConfiguration(target: target), service: service,
            logger: Logger(label: CastdSubsystem.rpc),
            onListening: {
                _ = sd_notify(0, "READY=1\nSTATUS=Serving \(path)")
            })

        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: RegistryService(registry: registry)),
                    .init(service: server),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        do {
            try await group.run()
        } catch let error as CastdError {
            logger.critical("\(error.message)")
            throw ExitCode(1)
        }
        _ = sd_notify(0, "STOPPING=1")
        logger.info("stopped; apps on the devices keep running")
    }
}

extension Castd {
    /// The state directory: the flag, else systemd's `$STATE_DIRECTORY` (StateDirectory=), else
    /// `$XDG_STATE_HOME/castd`, else `~/.local/state/castd` for a user, `/var/lib/castd` for
    /// root. An empty flag value: no state is kept.
    static func stateDirectory(explicit: String?) -> String? {
        let environment = ProcessInfo.processInfo.environment
        if let explicit { return explicit.isEmpty ? nil : explicit }
        if let systemd = environment["STATE_DIRECTORY"], !systemd.isEmpty {
            // systemd may list several, separated by colons; castd's is the first.
            return String(systemd.split(separator: ":").first ?? Substring(systemd))
        }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/castd" }
        if getuid() != 0, let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/state/castd" }
        return "/var/lib/castd"
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

/// Runs the device registry (discovery and device links) until graceful shutdown. It stops
/// after the server, which has already ended every watcher.
struct RegistryService: Service {
    let registry: DeviceRegistry

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await registry.run()
        }
    }
}

extension DeviceAuthenticationPolicy: ExpressibleByArgument {}
