import CastChannel
import CastDiscovery
import CastProtocol
import CastdAPI
import Foundation
import Logging
import Synchronization

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
            throw CastdError(.invalidArgument, "bad device address '\(text)' (expected HOST[:PORT] or NAME=HOST[:PORT])")
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

    public var description: String {
        switch self {
        case .off: return "off"
        case .starting: return "starting"
        case .running: return "running"
        case .unavailable(let reason): return reason
        }
    }
}

/// All devices castd knows, discovered and static, each with its controller. Resolves the
/// device selectors clients send.
public actor DeviceRegistry {
    private let hub: CastdEventHub
    private let linkConfiguration: CastLinkConfiguration
    private let logger: Logger
    private let staticDevices: [StaticDevice]
    private let discoveryEnabled: Bool
    private var controllers: [String: DeviceController] = [:]
    private var sources: [String: Castd_V1_DeviceSource] = [:]
    public private(set) var discoveryState: DiscoveryState
    /// Every device's custom channels, reachable without the actor so that shutdown can end them.
    private nonisolated let channelRouters = Mutex<[ChannelRouter]>([])

    /// Work that must outlive the call that starts it (a device's link) runs as a child of `run()`.
    private let work: AsyncStream<@Sendable () async -> Void>
    private let workContinuation: AsyncStream<@Sendable () async -> Void>.Continuation

    public init(
        hub: CastdEventHub,
        staticDevices: [StaticDevice] = [],
        discovery: Bool = true,
        linkConfiguration: CastLinkConfiguration = .init(),
        logger: Logger
    ) {
        self.hub = hub
        self.staticDevices = staticDevices
        self.discoveryEnabled = discovery
        self.linkConfiguration = linkConfiguration
        self.logger = logger
        self.discoveryState = discovery ? .starting : .off
        (work, workContinuation) = AsyncStream.makeStream()
    }

    /// Runs discovery and every device link until cancelled.
    public func run() async {
        for device in staticDevices {
            addStatic(device)
        }
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
        let browser = AvahiBrowser(logger: logger)
        for await event in browser.events() {
            if Task.isCancelled { break }
            await apply(event)
        }
    }

    private func apply(_ event: DiscoveryEvent) {
        switch event {
        case .added(let device), .updated(let device):
            if discoveryState != .running { discoveryState = .running }
            addDiscovered(device)
        case .removed(let id):
            guard sources[id] == .mdns else { return }
            // A device that vanished from mDNS stays listed while castd holds a session on it.
            if hub.session(deviceID: id) == nil { hub.removeDevice(id: id) }
        case .unavailable(let reason):
            logger.warning("discovery unavailable; static devices still work", metadata: ["reason": "\(reason)"])
            discoveryState = .unavailable(reason)
        case .available:
            logger.info("discovery running")
            discoveryState = .running
        }
    }

    private func addDiscovered(_ device: DiscoveredDevice) {
        let isNew = sources[device.id] == nil
        sources[device.id] = .mdns
        let endpoint = DeviceEndpoint(host: device.host, port: device.port)
        let controller = controller(id: device.id, name: device.friendlyName, endpoint: endpoint)
        hub.updateDevice(id: device.id) {
            $0.friendlyName = device.friendlyName
            $0.model = device.model
            $0.host = device.host
            $0.port = UInt32(device.port)
            $0.capabilities = device.capabilities.rawValue
            $0.busy = device.isBusy
            $0.isGroup = device.isGroup
            $0.source = .mdns
            if $0.receiver.applications.isEmpty { $0.statusText = device.statusText }
        }
        // A group's members are only known once castd asks the group: ask as soon as it appears,
        // so that listing devices shows them.
        if isNew && device.isGroup { controller.connectSoon() }
    }

    private func addStatic(_ device: StaticDevice) {
        let id = device.id
        sources[id] = .static
        let name = device.name ?? id
        controller(id: id, name: name, endpoint: device.endpoint)
        hub.updateDevice(id: id) {
            $0.friendlyName = name
            $0.host = device.endpoint.host
            $0.port = UInt32(device.endpoint.port)
            $0.source = .static
        }
    }

    @discardableResult
    private func controller(id: String, name: String, endpoint: DeviceEndpoint) -> DeviceController {
        if let existing = controllers[id] {
            existing.update(name: name, endpoint: endpoint)
            return existing
        }
        let continuation = workContinuation
        let controller = DeviceController(
            id: id, name: name, endpoint: endpoint, hub: hub, linkConfiguration: linkConfiguration, logger: logger,
            spawn: { job in continuation.yield(job) })
        controllers[id] = controller
        channelRouters.withLock { $0.append(controller.channels) }
        return controller
    }

    /// Ends every Listen stream (castd is shutting down).
    public nonisolated func finishChannels() {
        for router in channelRouters.withLock({ $0 }) { router.finishAll() }
    }

    /// The controller of the device with this exact id.
    public func controller(id: String) -> DeviceController? { controllers[id] }

    // MARK: selectors

    /// Finds the device a client means: an id, a friendly name (case-insensitive) or a host
    /// (with or without port). An empty selector means the one device with a session, else the
    /// only device.
    public func controller(for selector: String) throws -> DeviceController {
        let devices = hub.devices()
        let selector = selector.trimmingCharacters(in: .whitespaces)
        if selector.isEmpty {
            let sessions = hub.snapshot().sessions.filter { $0.state == .started || $0.state == .resumed }
            if sessions.count == 1, let c = controllers[sessions[0].deviceID] { return c }
            if devices.count == 1, let c = controllers[devices[0].id] { return c }
            if devices.isEmpty {
                throw CastdError(.notFound, "no Cast devices are known yet (discovery: \(discoveryState.description)); add one with castd --device HOST")
            }
            throw CastdError(
                .failedPrecondition,
                "several devices are known; choose one with --device: \(Self.names(devices))")
        }
        let lowered = selector.lowercased()
        let match =
            devices.first { $0.id == selector }
            ?? devices.first { $0.friendlyName.lowercased() == lowered }
            ?? devices.first { "\($0.host):\($0.port)" == selector || DeviceEndpoint(host: $0.host, port: Int($0.port)).description == selector }
            ?? devices.first { $0.host == selector }
        guard let match, let controller = controllers[match.id] else {
            let known = devices.isEmpty ? "no devices are known yet (discovery: \(discoveryState.description))" : "known devices: \(Self.names(devices))"
            throw CastdError(.notFound, "no device matches '\(selector)'; \(known)")
        }
        return controller
    }

    private static func names(_ devices: [CastdDevice]) -> String {
        devices.map { "\"\($0.friendlyName)\"" }.joined(separator: ", ")
    }
}
