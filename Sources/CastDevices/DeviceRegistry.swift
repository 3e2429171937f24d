import CastdSupport
import CastSenderLink
import CastDiscovery
import CastProtocol
import CastdAPI
import Foundation
import Logging

/// All devices castd knows, discovered and static, each with its controller. Resolves the
/// device selectors clients send.
public actor DeviceRegistry {
    let store: CastdStateStore
    private let linkConfiguration: CastLinkConfiguration
    private let backoff: ReconnectBackoff
    private let resumeWindow: Duration
    let sessionStore: SessionStore?
    /// Device certificate keys pinned on first authentication (in memory when castd keeps no state).
    public let keyPins: DeviceKeyPins
    /// The link attempts read calls may have running at once (`DeviceController.link(openingWithin:)`).
    public nonisolated let readCallLinks: LinkAttemptLimiter
    /// How many, unless told otherwise.
    public static let readCallLinkAttempts = 4
    let logger: Logger
    let discoveryLogger: Logger
    let sessionLogger: Logger
    private let staticDevices: [StaticDevice]
    /// Reads what a device given by address says of itself (its eureka_info); nil: castd does
    /// not ask, and such a device is known by its address only.
    let deviceInfo: DeviceInfoReader?
    /// The names given on the command line or in castd.toml (`NAME=HOST`), by the device's
    /// current id: a name the user gave wins over the device's own.
    var configuredNames: [String: String] = [:]
    /// A device given by address whose real id castd learned while it held something on it
    /// (so it kept its "host:port" id): mDNS's id → that id. An announcement of the real id
    /// updates it rather than listing the device twice.
    var aliases: [String: String] = [:]
    /// Devices whose eureka_info is being read now.
    var identityReads: Set<String> = []
    /// Devices castd is asking about the app of its discovery criterion.
    var criterionChecks: Set<String> = []
    /// Where castd's sessions went when they moved to another device.
    var transfers = SessionTransfers()
    /// How long castd looks for a vanished session on the other devices.
    public static let transferWindow: Duration = .seconds(15)
    private let discoveryEnabled: Bool
    /// What sessions start when clients do not say (castd.toml's `[launch]`).
    public nonisolated let launchDefaults: LaunchDefaults
    let discoveryLimits: DiscoveryLimits
    let serviceType: String
    var controllers: [String: DeviceController] = [:]
    var sources: [String: Castd_V1_DeviceSource] = [:]
    /// The devices mDNS announces now (a device restored from a saved session is known before,
    /// or without, being announced).
    var announced: Set<String> = []
    /// Whether discovery runs, readable without the actor: GetStatus is answered on the
    /// connection's event loop (CastdServer's at-once calls) and must not wait for the registry.
    public nonisolated var discoveryState: DiscoveryState { discovery.withLock { $0.state } }
    /// Discovery's state and when it entered it (since when castd has browsed, or been unable
    /// to), read together.
    public nonisolated var discoveryStatus: (state: DiscoveryState, since: Date) { discovery.withLock { $0 } }
    private nonisolated let discovery: Locked<(state: DiscoveryState, since: Date)>

    /// Discovery is now `state`; its time is kept while the state stays.
    nonisolated func setDiscovery(_ state: DiscoveryState) {
        discovery.withLock { if $0.state != state { $0 = (state, Date()) } }
    }
    /// Every device's custom channels, reachable without the actor so that shutdown can end them.
    nonisolated let channelRouters = Locked<[NamespaceListeners]>([])

    /// Work that must outlive the call that starts it (a device's link) runs as a child of `run()`.
    private let work: AsyncStream<@Sendable () async -> Void>
    let workContinuation: AsyncStream<@Sendable () async -> Void>.Continuation

    public init(
        store: CastdStateStore,
        staticDevices: [StaticDevice] = [],
        discovery: Bool = true,
        discoveryLimits: DiscoveryLimits = .init(),
        serviceType: String = "_googlecast._tcp",
        linkConfiguration: CastLinkConfiguration = .init(),
        backoff: ReconnectBackoff = .init(),
        resumeWindow: Duration = .seconds(300),
        sessionStore: SessionStore? = nil,
        keyPins: DeviceKeyPins? = nil,
        readCallLinkAttempts: Int = DeviceRegistry.readCallLinkAttempts,
        deviceInfo: DeviceInfoReader? = nil,
        launchDefaults: LaunchDefaults = .init(),
        logger: Logger
    ) {
        self.deviceInfo = deviceInfo
        self.launchDefaults = launchDefaults
        self.store = store
        self.readCallLinks = LinkAttemptLimiter(limit: readCallLinkAttempts)
        self.staticDevices = staticDevices
        self.discoveryEnabled = discovery
        self.discoveryLimits = discoveryLimits
        self.serviceType = serviceType
        self.linkConfiguration = linkConfiguration
        self.backoff = backoff
        self.resumeWindow = resumeWindow
        self.sessionStore = sessionStore
        self.keyPins = keyPins ?? DeviceKeyPins(directory: nil, logger: logger)
        self.logger = logger.subsystem("CastDevice")
        self.discoveryLogger = logger.subsystem("Discovery")
        self.sessionLogger = logger.subsystem("CastSession")
        self.discovery = Locked((discovery ? .starting : .off, Date()))
        (work, workContinuation) = AsyncStream.makeStream()
    }

    /// Runs discovery and every device link until cancelled.
    public func run() async {
        for device in staticDevices {
            addStatic(device)
            let id = device.id
            workContinuation.yield { await self.readIdentity(of: id) }
        }
        restoreSessions()
        let work = self.work
        let discoveryEnabled = self.discoveryEnabled
        // Both children end when run() is cancelled: iterating an AsyncStream returns nil on
        // cancellation, and the links, children of the inner group, are cancelled with it.
        await withDiscardingTaskGroup { group in
            group.addTask {
                await withDiscardingTaskGroup { links in
                    for await job in work {
                        links.addTask { await job() }
                    }
                }
            }
            if discoveryEnabled {
                group.addTask { await self.runDiscovery() }
            }
        }
    }

    private func addStatic(_ device: StaticDevice) {
        let id = device.id
        sources[id] = .static
        if let name = device.name { configuredNames[id] = name }
        let name = device.name ?? id
        controller(id: id, name: name, endpoint: device.endpoint)
        store.updateDevice(id: id) {
            $0.friendlyName = name
            $0.host = device.endpoint.host
            $0.port = UInt32(device.endpoint.port)
            $0.source = .static
        }
        checkCriterionSoon(of: id)
    }

    @discardableResult
    func controller(id: String, name: String, endpoint: DeviceEndpoint) -> DeviceController {
        if let existing = controllers[id] {
            existing.update(name: name, endpoint: endpoint)
            return existing
        }
        let continuation = workContinuation
        let controller = DeviceController(
            id: id, name: name, endpoint: endpoint, store: store, linkConfiguration: linkConfiguration,
            backoff: backoff, resumeWindow: resumeWindow, sessionStore: sessionStore, keyPins: keyPins,
            launchDefaults: launchDefaults,
            sessionVanished: { [weak self] source, session, media in
                guard let self else { return }
                continuation.yield { await self.followTransfer(from: source, session: session, media: media) }
            },
            becameIdle: { [weak self] controller in
                guard let self else { return }
                continuation.yield { await self.forgetUnannounced(controller) }
            },
            linkCameUp: { [weak self] controller in
                guard let self else { return }
                continuation.yield { await self.readIdentity(of: controller.id) }
                continuation.yield { await self.checkCriterionSoon(of: controller.id) }
            },
            logger: logger, spawn: { job in continuation.yield(job) })
        controllers[id] = controller
        channelRouters.withLock { $0.append(controller.channels) }
        return controller
    }

    /// castd stopped holding anything on a device (it gave up the session it held for a device
    /// that stayed away, or a link to a device gone from mDNS ended). A device that only that
    /// kept listed (restored from the state file, or gone from mDNS while the session was held)
    /// leaves the list, and castd stops trying to reach it; mDNS announcing it again brings it
    /// back.
    private func forgetUnannounced(_ controller: DeviceController) async {
        let id = controller.id
        guard controllers[id] === controller, sources[id] == .mdns, !announced.contains(id),
            store.session(deviceID: id) == nil, store.device(id: id)?.linkState != .connected
        else { return }
        if store.device(id: id) != nil {
            sessionLogger.info("forgetting a device nothing announces any more", metadata: ["device.id": "\(id)"])
            store.removeDevice(id: id)
        }
        if await controller.vanished() {
            forget(controller)
        }
    }

    /// Drops everything castd kept for a device it holds nothing on and nothing announces.
    func forget(_ controller: DeviceController) {
        let id = controller.id
        guard controllers[id] === controller, sources[id] == .mdns, !announced.contains(id),
            store.session(deviceID: id) == nil
        else { return }
        drop(controller)
    }

    /// Drops what castd keeps for the device of `controller` under its id: the controller,
    /// where the device came from, its name, its aliases, a transfer's note and its channels.
    func drop(_ controller: DeviceController) {
        let id = controller.id
        controllers[id] = nil
        sources[id] = nil
        transfers.forget(id)
        configuredNames[id] = nil
        aliases = aliases.filter { $0.value != id }
        channelRouters.withLock { routers in routers.removeAll { $0 === controller.channels } }
    }

    /// How many devices castd keeps a controller for (listed, or held for a session).
    package var controllerCount: Int { controllers.count }

    /// Ends every Listen stream (castd is shutting down).
    public nonisolated func finishChannels() {
        for router in channelRouters.withLock({ $0 }) { router.finishAll() }
    }

    /// The controller of the device with this exact id.
    public func controller(id: String) -> DeviceController? { controllers[id] }

    /// Forgets the key pinned for the device `selector` names, and tries it again now: whatever
    /// key it proves next is pinned.
    public func forgetPinnedKey(of selector: String) async throws -> CastdDevice {
        let controller = try controller(for: selector)
        if controller.trust.forgetPinnedKey() { controller.connectSoon() }
        guard let device = store.device(id: controller.id) else {
            throw CastdError(.notFound, "castd no longer knows \(selector)")
        }
        return device
    }

    // MARK: selectors

    /// The device a client means (``DeviceSelector``'s rules).
    public func controller(for selector: String) throws -> DeviceController {
        let discovery = discoveryState
        let controllers = self.controllers
        let id = store.withDevicesAndSessions { devices, sessions in
            Result { () throws(CastdError) in
                try DeviceSelector.id(
                    for: selector, devices: devices, sessions: sessions, known: { controllers[$0] != nil },
                    discovery: discovery)
            }
        }
        let found = try id.get()
        guard let controller = controllers[found] else { throw CastdError(.internal, "no controller for \(found)") }
        return controller
    }

    /// The device whose session a client means: as ``controller(for:)``, but when that device's
    /// session moved to another device (stream transfer) and it has none of its own, the device
    /// the session moved to. Media and session requests use this; device requests do not.
    public func sessionController(for selector: String) throws -> DeviceController {
        let controller = try controller(for: selector)
        let store = self.store
        guard
            let target = transfers.destination(of: controller.id, hasSession: { store.session(deviceID: $0) != nil }),
            let moved = controllers[target]
        else { return controller }
        return moved
    }
}
