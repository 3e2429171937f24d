import CastdSupport
import CastSenderLink
import CastDiscovery
import CastProtocol
import CastdAPI
import Foundation
import Logging

/// A device given on the command line or in the configuration, not discovered.
public struct StaticDevice: Sendable, Hashable {
    public var name: String?
    public var endpoint: DeviceEndpoint

    public init(name: String? = nil, endpoint: DeviceEndpoint) {
        self.name = name
        self.endpoint = endpoint
    }

    /// Parses `HOST`, `HOST:PORT`, `[V6]:PORT`, or `NAME=HOST[:PORT]`.
    public init(parsing text: String) throws {
        var spec = Substring(text.trimmingCharacters(in: .whitespaces))
        var name: String?
        if let eq = spec.lastIndex(of: "=") {
            name = String(spec[..<eq]).trimmingCharacters(in: .whitespaces)
            spec = spec[spec.index(after: eq)...]
            if name?.isEmpty == true { name = nil }
        }
        var host = String(spec)
        var port = CastWire.defaultPort
        if spec.hasPrefix("[") {
            guard let close = spec.firstIndex(of: "]") else {
                throw CastdError(.invalidArgument, "bad device address '\(text)': missing ']'")
            }
            host = String(spec[spec.index(after: spec.startIndex)..<close])
            let rest = spec[spec.index(after: close)...]
            if rest.hasPrefix(":") {
                guard let p = Int(rest.dropFirst()), (1...65535).contains(p) else {
                    throw CastdError(.invalidArgument, "bad port in device address '\(text)'")
                }
                port = p
            }
        } else if spec.filter({ $0 == ":" }).count == 1, let colon = spec.firstIndex(of: ":") {
            host = String(spec[..<colon])
            guard let p = Int(spec[spec.index(after: colon)...]), (1...65535).contains(p) else {
                throw CastdError(.invalidArgument, "bad port in device address '\(text)' (expected HOST[:PORT])")
            }
            port = p
        }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "/" }) else {
            throw CastdError(
                .invalidArgument, "bad device address '\(text)' (expected HOST[:PORT] or NAME=HOST[:PORT])")
        }
        self.name = name
        self.endpoint = DeviceEndpoint(host: host, port: port)
    }

    public var id: String { endpoint.description }
}

/// Discovery's state, as `castc status` shows it.
public enum DiscoveryState: Sendable, Equatable {
    case off
    case starting
    case running
    case unavailable(String)

    /// As castd.v1 says it.
    public var api: Castd_V1_DiscoveryState {
        switch self {
        case .off: .off
        case .starting: .starting
        case .running: .running
        case .unavailable: .unavailable
        }
    }

    /// Why discovery is unavailable; empty in the other states.
    public var reason: String {
        if case .unavailable(let reason) = self { reason } else { "" }
    }

    public var description: String {
        switch self {
        case .off: return "off (--no-discovery)"
        case .starting: return "starting"
        case .running: return "running (Avahi reachable)"
        case .unavailable(let reason): return "unavailable: \(reason)"
        }
    }
}

/// All devices castd knows, discovered and static, each with its controller. Resolves the
/// device selectors clients send.
public actor DeviceRegistry {
    let store: CastdStateStore
    private let linkConfiguration: CastLinkConfiguration
    private let backoff: ReconnectBackoff
    private let resumeWindow: Duration
    private let sessionStore: SessionStore?
    /// Device certificate keys pinned on first authentication (in memory when castd keeps no state).
    public let keyPins: DeviceKeyPins
    /// The link attempts read calls may have running at once (`DeviceController.link(openingWithin:)`).
    public nonisolated let readCallLinks: LinkAttemptLimiter
    /// How many, unless told otherwise.
    public static let readCallLinkAttempts = 4
    let logger: Logger
    private let discoveryLogger: Logger
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
    /// Where castd's session went when it moved to another device: requests for the device it
    /// left go to the one it moved to, until the old device gets a session of its own.
    var transfers: [String: String] = [:]
    /// How long castd looks for a vanished session on the other devices.
    public static let transferWindow: Duration = .seconds(15)
    private let discoveryEnabled: Bool
    /// What sessions start when clients do not say (castd.toml's `[launch]`).
    public nonisolated let launchDefaults: LaunchDefaults
    private let discoveryLimits: DiscoveryLimits
    private let serviceType: String
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
    private nonisolated func setDiscovery(_ state: DiscoveryState) {
        discovery.withLock { if $0.state != state { $0 = (state, Date()) } }
    }
    /// Every device's custom channels, reachable without the actor so that shutdown can end them.
    nonisolated let channelRouters = Locked<[NamespaceListeners]>([])

    /// Work that must outlive the call that starts it (a device's link) runs as a child of `run()`.
    private let work: AsyncStream<@Sendable () async -> Void>
    private let workContinuation: AsyncStream<@Sendable () async -> Void>.Continuation

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

    private nonisolated func runDiscovery() async {
        let browser = AvahiBrowser(serviceType: serviceType, limits: discoveryLimits, logger: discoveryLogger)
        for await event in browser.events() {
            if Task.isCancelled { break }
            await apply(event)
        }
    }

    private func apply(_ event: DiscoveryEvent) async {
        switch event {
        case .added(let device), .updated(let device):
            setDiscovery(.running)
            addDiscovered(device)
        case .removed(let announcedID):
            let id = aliases[announcedID] ?? announcedID
            announced.remove(id)
            guard sources[id] == .mdns else { return }
            // A device that vanished from mDNS stays listed while castd holds a session on it;
            // one castd holds nothing on is forgotten, controller and all (else a flood of
            // announcements would leave castd bigger by every id it ever saw).
            if store.session(deviceID: id) == nil { store.removeDevice(id: id) }
            if let controller = controllers[id], await controller.vanished() {
                forget(controller)
            }
        case .unavailable(let reason):
            discoveryLogger.warning(
                "discovery unavailable; static devices still work", metadata: ["reason": "\(reason)"])
            setDiscovery(.unavailable(reason))
        case .available:
            discoveryLogger.info("discovery running")
            setDiscovery(.running)
        }
    }

    private func addDiscovered(_ device: DiscoveredDevice) {
        // A device also given by address is one device: the announcement updates it (and its
        // address, should it have changed), and it stays what the user configured.
        let id = aliases[device.id] ?? device.id
        let isNew = sources[id] == nil
        let configured = sources[id] == .static
        if !configured { sources[id] = .mdns }
        announced.insert(id)
        let endpoint = DeviceEndpoint(host: device.host, port: device.port)
        let name = configuredNames[id] ?? device.friendlyName
        let controller = controller(id: id, name: name, endpoint: endpoint)
        store.updateDevice(id: id) {
            $0.friendlyName = name
            $0.model = device.model
            $0.host = device.host
            $0.port = UInt32(device.port)
            $0.capabilities = device.capabilities.rawValue
            $0.busy = device.isBusy
            $0.isGroup = device.isGroup
            $0.source = configured ? .static : .mdns
            if $0.receiver.applications.isEmpty { $0.statusText = device.statusText }
        }
        // A group's members are only known once castd asks the group: ask as soon as it appears,
        // so that listing devices shows them.
        if isNew && device.isGroup { controller.connectSoon() }
        // Announced again, or at a new address: a device castd lost is worth trying at once.
        if !isNew {
            Task { await controller.announced() }
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
            },
            logger: logger, spawn: { job in continuation.yield(job) })
        controllers[id] = controller
        channelRouters.withLock { $0.append(controller.channels) }
        return controller
    }

    // MARK: session resume across restarts

    /// Sessions a previous castd saved: each device is held with its session suspended and
    /// connected to, to rejoin the session if the device still runs it (never to relaunch it).
    private func restoreSessions() {
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
    private func forget(_ controller: DeviceController) {
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
        transfers[id] = nil
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

    /// Forgets the key pinned for the device `selector` names, and tries it again now.
    public func forgetPinnedKey(of selector: String) async throws -> CastdDevice {
        let controller = try controller(for: selector)
        guard let device = await controller.forgetPinnedKey() else {
            throw CastdError(.notFound, "castd no longer knows \(selector)")
        }
        return device
    }

    // MARK: selectors

    /// Finds the device a client means: an id, a friendly name (case-insensitive) or a host
    /// (with or without port). An empty selector means the one device with a session, else the
    /// only device.
    public func controller(for selector: String) throws -> DeviceController {
        let devices = store.devices()
        let selector = selector.trimmingCharacters(in: .whitespaces)
        if selector.isEmpty {
            let sessions = store.snapshot().sessions.filter { $0.state == .started || $0.state == .resumed }
            if sessions.count == 1, let c = controllers[sessions[0].deviceID] { return c }
            if devices.count == 1, let c = controllers[devices[0].id] { return c }
            if devices.isEmpty {
                throw CastdError(
                    .notFound,
                    "no Cast devices are known yet (discovery: \(discoveryState.description)); add one with castd --device HOST"
                )
            }
            throw CastdError(
                .failedPrecondition,
                "several devices are known; choose one with --device: \(Self.names(devices))")
        }
        let match = try Self.device(matching: selector, in: devices)
        guard let match, let controller = controllers[match.id] else {
            let known =
                devices.isEmpty
                ? "no devices are known yet (discovery: \(discoveryState.description))"
                : "known devices: \(Self.names(devices))"
            throw CastdError(.notFound, "no device matches '\(selector)'; \(known)")
        }
        return controller
    }

    /// The device whose session a client means: as ``controller(for:)``, but when that device's
    /// session moved to another device (stream transfer) and it has none of its own, the device
    /// the session moved to. Media and session requests use this; device requests do not.
    public func sessionController(for selector: String) throws -> DeviceController {
        let controller = try controller(for: selector)
        guard let target = transfers[controller.id] else { return controller }
        if store.session(deviceID: controller.id) != nil {
            transfers[controller.id] = nil  // it has a session of its own again
            return controller
        }
        guard store.session(deviceID: target) != nil, let moved = controllers[target] else { return controller }
        return moved
    }

    /// The one device `selector` names: by id first, then by friendly name (case-insensitive),
    /// then by host:port, then by host. nil if none does; FAILED_PRECONDITION, listing them, if
    /// several do at the first rule that matches any (two devices named alike, or a group on
    /// the same host as its device).
    public static func device(matching selector: String, in devices: [CastdDevice]) throws(CastdError) -> CastdDevice? {
        if let device = devices.first(where: { $0.id == selector }) { return device }
        let lowered = selector.lowercased()
        let rules: [(what: String, matches: (CastdDevice) -> Bool)] = [
            ("are named '\(selector)'", { $0.friendlyName.lowercased() == lowered }),
            (
                "listen at \(selector)",
                {
                    "\($0.host):\($0.port)" == selector
                        || DeviceEndpoint(host: $0.host, port: Int($0.port)).description == selector
                }
            ),
            ("are on host \(selector)", { $0.host == selector }),
        ]
        for rule in rules {
            let matching = devices.filter(rule.matches)
            if matching.count == 1 { return matching[0] }
            if matching.count > 1 {
                let listed = matching.map {
                    "\($0.id) (\"\($0.friendlyName)\" at \(DeviceEndpoint(host: $0.host, port: Int($0.port)).description))"
                }
                throw CastdError(
                    .failedPrecondition,
                    "\(matching.count) devices \(rule.what): \(listed.joined(separator: ", ")); choose one by its id")
            }
        }
        return nil
    }

    private static func names(_ devices: [CastdDevice]) -> String {
        devices.map { "\"\($0.friendlyName)\"" }.joined(separator: ", ")
    }
}
