import CastSenderLink
import CastDevices
import CastDiscovery
import CastdAPI
import CastdLogging
import CastdHandlers
import CastdMediaServer
import CastdServer
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// castd, built from its settings: the one place where its parts are made and wired together.
/// The `castd` executable reads the settings and runs what this builds; the tests build their
/// daemons here too, so what they test is castd's own wiring.
///
/// Three services, each owning what it shuts down: the device registry (discovery, device
/// links), the RPC server (the socket, its connections and calls, the streams it serves) and
/// the status reporter (what systemd is told). They stop in the reverse order: the reporter
/// says STOPPING=1 at once, the server ends its calls, then the registry lets go of the devices.
public struct CastdDaemon: Sendable {
    /// What a daemon is built with besides its settings: what the process found out as it
    /// started, and what only tests change.
    public struct Options: Sendable {
        /// castd's version, as GetStatus reports it.
        public var version: String
        /// The socket systemd passed (socket activation); nil: the daemon binds `settings.socket`.
        public var activatedSocket: (fd: Int32, path: String)?
        /// The files socket systemd passed beside it; nil: the daemon binds it itself, at the
        /// RPC socket's path with ".files" appended (`CastdSocketPath.files(forSocket:)`).
        public var activatedFilesSocket: Int32?
        /// castd's logs (served by StreamLogs and SetLogFilter); nil: those methods answer
        /// FAILED_PRECONDITION.
        public var logs: CastdLogs?
        /// The logger for a subsystem; by default the process's logging system (`Logger(label:)`).
        public var logger: @Sendable (_ subsystem: String) -> Logger
        /// Device links' configuration; nil: Cast's roots and the settings' `trustRoots`, with
        /// the settings' device authentication policy.
        public var linkConfiguration: CastLinkConfiguration?
        /// Link attempts read calls may start at once (`DeviceRegistry.readCallLinkAttempts`).
        public var readCallLinkAttempts = DeviceRegistry.readCallLinkAttempts
        /// How long castd waits for a receiver app to answer on a custom namespace.
        public var appAnswerDeadline: Duration = .seconds(5)
        /// How castd reads what a device given by address says of itself (eureka_info on the
        /// device's 8443, then 8008); nil: it does not, and such a device is known by its
        /// address only.
        public var deviceInfo: DeviceInfoReader? = DeviceInfoReader()
        /// Called once the socket listens.
        public var onListening: @Sendable () -> Void = {}

        public init(version: String, logs: CastdLogs? = nil) {
            self.version = version
            self.logs = logs
            self.logger = { subsystem in logs?.logger(subsystem) ?? Logger(label: subsystem) }
        }
    }

    public let settings: CastdSettings
    /// The path the daemon serves (the activated socket's, or `settings.socket`).
    public let socketPath: String
    /// How device links connect and authenticate devices.
    public let linkConfiguration: CastLinkConfiguration
    public let store: CastdStateStore
    public let registry: DeviceRegistry
    public let server: CastdServer
    public let status: DaemonStatusReporter
    /// Files clients handed castd over its files socket, not yet closed.
    public let files: HandedFiles
    let filesService: FilesService
    let servedFilesService: ServedFilesService

    /// Builds the daemon; nothing runs until `run`. Throws when a trust root cannot be read.
    /// `tuneServer` changes server settings that are not configuration (grace periods, refusal
    /// lingering) after the settings have set the rest.
    public init(
        settings: CastdSettings, options: Options,
        tuneServer: (inout CastdServerConfiguration) -> Void = { _ in }
    ) throws {
        self.settings = settings
        let logger = options.logger
        socketPath = options.activatedSocket?.path ?? settings.socket

        let linkConfiguration = try options.linkConfiguration ?? Self.linkConfiguration(settings)
        self.linkConfiguration = linkConfiguration
        let stateURL = settings.stateDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }
        store = CastdStateStore(
            watcherQueueLimit: settings.watcherQueue, filtersDevices: settings.launch.deviceCriterion != nil)
        registry = DeviceRegistry(
            store: store,
            staticDevices: settings.devices,
            discovery: settings.discovery,
            discoveryLimits: DiscoveryLimits(
                maximumServices: settings.maxMDNSServices, maximumServicesPerHost: settings.maxMDNSServicesPerHost),
            linkConfiguration: linkConfiguration,
            sessionStore: SessionStore(directory: stateURL, logger: logger(CastdSubsystem.state)),
            keyPins: DeviceKeyPins(directory: stateURL, logger: logger(CastdSubsystem.state)),
            readCallLinkAttempts: options.readCallLinkAttempts,
            deviceInfo: options.deviceInfo,
            launchDefaults: settings.launch,
            logger: logger(CastdSubsystem.castDevice))

        var facts = DaemonFacts(version: options.version, socketPath: socketPath)
        facts.mode = settings.mode.rawValue
        facts.socketActivated = options.activatedSocket != nil
        facts.configFile = settings.configFile ?? ""
        facts.stateDirectory = settings.stateDirectory ?? ""
        facts.limits = settings.limits
        var service = CastdService(registry: registry, store: store, facts: facts, logs: options.logs)
        service.appAnswerDeadline = options.appAnswerDeadline
        let files = HandedFiles()
        self.files = files
        var media = MediaServerConfiguration()
        media.port = settings.httpPort
        let mediaServer = MediaServer(configuration: media, logger: logger(CastdSubsystem.media))
        let served = ServedFiles(
            server: mediaServer, files: files, fixedAddress: settings.httpAddress, logger: logger(CastdSubsystem.media))
        service.served = served
        servedFilesService = ServedFilesService(store: store, served: served, server: mediaServer)
        filesService = FilesService(
            path: CastdSocketPath.files(forSocket: socketPath), activated: options.activatedFilesSocket,
            policy: settings.access, files: files, logger: logger(CastdSubsystem.media))

        let target: CastdListenTarget =
            if let activated = options.activatedSocket {
                .activated(fd: activated.fd, path: activated.path)
            } else {
                .path(settings.socket)
            }
        var configuration = CastdServerConfiguration(target: target)
        configuration.accessPolicy = settings.access
        configuration.maximumFrameLength = settings.maxFrameBytes
        configuration.maximumConcurrentCalls = settings.maxCallsPerConnection
        configuration.maximumConnectionsPerUID = settings.maxConnectionsPerUID
        configuration.idleTimeout = settings.idleTimeout
        configuration.frameTimeout = settings.frameTimeout
        tuneServer(&configuration)

        let status = DaemonStatusReporter(store: store, socketPath: socketPath)
        self.status = status
        let onListening = options.onListening
        server = CastdServer(
            configuration: configuration, handler: service,
            logger: logger(CastdSubsystem.rpc),
            onListening: {
                status.listening()
                onListening()
            },
            onClientsChanged: { count in status.clientsChanged(count) })
    }

    /// Device links' configuration from the settings: Cast's roots and `trustRoots`, and the
    /// device authentication policy.
    public static func linkConfiguration(_ settings: CastdSettings) throws -> CastLinkConfiguration {
        var configuration = CastLinkConfiguration()
        var roots = CastTrustRoots.cast
        for file in settings.trustRoots { roots = roots.adding(try CastTrustRoots(contentsOfFile: file)) }
        configuration.authentication = DeviceAuthenticationSettings(trustedRoots: roots, policy: settings.deviceAuth)
        return configuration
    }

    /// The daemon's services, in the order they start (and the reverse of the order they stop).
    public var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        [
            .init(service: RegistryService(registry: registry)),
            .init(service: server),
            .init(service: filesService),
            .init(service: servedFilesService),
            // Last, so it hears of the shutdown first and says STOPPING=1 at once.
            .init(service: status),
        ]
    }

    /// Runs the daemon until one of `signals` arrives (then shuts down gracefully), a service
    /// fails, or the calling task is cancelled.
    public func run(gracefulShutdownSignals signals: [UnixSignal], logger: Logger) async throws {
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: signals, logger: logger))
        try await group.run()
    }
}

/// Runs the device registry (discovery and device links) until graceful shutdown. It stops
/// after the server, which has already ended every call.
struct RegistryService: Service {
    let registry: DeviceRegistry

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await registry.run()
        }
    }
}
