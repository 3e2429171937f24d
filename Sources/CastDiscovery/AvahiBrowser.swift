import CastdSupport
import CAvahi
import Dispatch
import Logging

/// Browses for Cast devices with the Avahi daemon (over D-Bus) and reports them as events.
///
/// Bounded whatever the network announces (`DiscoveryLimits`): a flood of announcements costs
/// linear work, at most `maximumServices` entries and `maximumResolvers` Avahi objects, and all
/// of it is given back when the services leave.
public final class AvahiBrowser: Sendable {
    public let serviceType: String
    /// How long to wait before trying Avahi again after it could not be reached.
    public let retryInterval: Duration
    public let limits: DiscoveryLimits
    let logger: Logger
    let counters = Locked(BrowseCounts())

    public init(
        serviceType: String = "_googlecast._tcp", retryInterval: Duration = .seconds(2),
        limits: DiscoveryLimits = .init(),
        logger: Logger
    ) {
        self.serviceType = serviceType
        self.retryInterval = retryInterval
        self.limits = limits
        // castd's subsystem for mDNS (castd's log handler files records by it; see CastdLogging).
        var logger = logger
        logger[metadataKey: "subsystem"] = "Discovery"
        self.logger = logger
    }

    /// Browses until the consuming task is cancelled (or the stream is dropped); events arrive in order.
    ///
    /// The first event is `.available` or `.unavailable(reason:)`. While Avahi cannot be reached
    /// the browser tries again every `retryInterval`; an outage is reported once, and the devices
    /// known before it are reported `.removed` right after `.unavailable`. `.available` marks the
    /// end of an outage; the devices still there are then `.added` again. Each call browses
    /// on its own Avahi client; each stream has a single consumer.
    public func events() -> AsyncStream<DiscoveryEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self)
        let loop: AvahiClientLoop
        do {
            loop = try AvahiClientLoop(retryInterval: retryInterval, logger: logger)
        } catch {
            continuation.yield(.unavailable(reason: error.message))
            return stream
        }
        let session = BrowseSession(
            serviceType: serviceType, limits: limits, loop: loop, continuation: continuation, counters: counters,
            logger: logger)
        continuation.onTermination = { _ in
            // This can run inside the runtime's cancellation of the consuming task, with that task
            // locked; shutdown() waits for the poll thread, which may be yielding into this stream
            // right then and so waiting for the same lock. So shut down on another thread (a
            // dispatch work item, not a Task: shutdown() blocks until the poll thread has stopped).
            DispatchQueue.global().async {
                loop.shutdown()
            }
        }
        loop.start(owner: session)
        return stream
    }

    /// What the browse (the latest `events()` stream) holds now.
    package var counts: BrowseCounts { counters.withLock { $0 } }
}

/// The state of one `events()` stream. Everything but `init` runs on the loop's poll thread.
///
/// Each announced service instance goes: waiting (for a resolver) → resolving → watching (its
/// resolver stays open to follow TXT changes) → resolved (the resolver was given to a service
/// that waited); a resolve that fails is freed and tried again later. At most
/// `limits.maximumResolvers` resolvers are open, and at most `limits.maximumServices`
/// services are followed; every lookup is by key or by resolver handle.
final class BrowseSession: AvahiClientLoopOwner {
    enum Phase {
        case waiting
        case resolving(AvahiHandle)
        case watching(AvahiHandle)
        case resolved
        case retrying(due: ContinuousClock.Instant)
    }

    struct Service {
        var phase: Phase = .waiting
        var failures = 0
        /// Bumped each time it starts watching: an older entry in `watchOrder` is stale.
        var generation: UInt64 = 0
        /// The address it resolved to, counted in `State.hosts`; nil before it resolved.
        var host: String?

        var resolver: AvahiHandle? {
            switch phase {
            case .resolving(let handle), .watching(let handle): handle
            default: nil
            }
        }
    }

    struct State {
        var browser: AvahiHandle?
        /// The browser a new one replaces, kept until the new one has reported everything it
        /// knows (ALL_FOR_NOW), so that no removal falls between the two.
        var retiring: AvahiHandle?
        var services: [ServiceKey: Service] = [:]
        var resolverKeys: [AvahiHandle: ServiceKey] = [:]
        /// Services waiting for a resolver, first come first served (stale entries skipped).
        var waiting = FIFO<ServiceKey>()
        /// Watching resolvers, oldest first: the first given up when a service waits.
        var watchOrder = FIFO<(key: ServiceKey, generation: UInt64)>()
        var retrying: Set<ServiceKey> = []
        var nextGeneration: UInt64 = 0
        var devices = DeviceAggregator()
        /// nil before the first attempt; false during an outage.
        var connected: Bool?
        /// Announcements were ignored at the bound: browse again once there is room.
        var overflowed = false
        /// Services followed per address they resolved to (`limits.maximumServicesPerHost`).
        var hosts: [String: Int] = [:]
        /// Services dropped because their host had its share, with that host: not followed
        /// again when a new browser reports them, until one of the host's services leaves.
        /// At most ``refusedLimit``, oldest forgotten first (a forgotten one is resolved and
        /// dropped again if announced again).
        var refused: [ServiceKey: String] = [:]
        var refusedOrder = FIFO<ServiceKey>()
        /// How many of `refused` each host has.
        var refusedHosts: [String: Int] = [:]
    }

    let serviceType: String
    let limits: DiscoveryLimits
    let loop: AvahiClientLoop
    let continuation: AsyncStream<DiscoveryEvent>.Continuation
    let counters: Locked<BrowseCounts>
    let logger: Logger
    let state = Locked(State())
    let ignoredLog = LogThrottle(burst: 1, interval: .seconds(60))
    let refusedLog = LogThrottle(burst: 1, interval: .seconds(60))
    let failedLog = LogThrottle()
    let retryTimer = Locked<AvahiTimer?>(nil)

    init(
        serviceType: String, limits: DiscoveryLimits, loop: AvahiClientLoop,
        continuation: AsyncStream<DiscoveryEvent>.Continuation, counters: Locked<BrowseCounts>, logger: Logger
    ) {
        self.serviceType = serviceType
        self.limits = limits
        self.loop = loop
        self.continuation = continuation
        self.counters = counters
        var logger = logger
        logger[metadataKey: "mdns.type"] = "\(serviceType)"
        self.logger = logger
        counters.withLock { $0 = BrowseCounts() }
        // Unretained: the loop holds this session until the poll (and so the timer) is gone.
        let timer = loop.makeTimer { [unowned(unsafe) self] in self.retryDue() }
        retryTimer.withLock { $0 = timer }
    }

    var userdata: UnsafeMutableRawPointer {
        // Unretained: browsers and resolvers die with their client, and the loop keeps this
        // session alive as long as any client exists (see AvahiClientLoop).
        Unmanaged.passUnretained(self).toOpaque()
    }

    func yield(_ events: [DiscoveryEvent]) {
        for event in events {
            continuation.yield(event)
        }
    }

    func count(_ change: (inout BrowseCounts) -> Void) {
        let (services, open) = state.withLock { ($0.services.count, $0.resolverKeys.count) }
        counters.withLock { counts in
            change(&counts)
            counts.services = services
            counts.openResolvers = open
            counts.mostOpenResolvers = max(counts.mostOpenResolvers, open)
        }
    }

    // MARK: AvahiClientLoopOwner

    func avahiClient(_ client: AvahiHandle, didEnter clientState: AvahiClientState) {
        let (becameAvailable, needsBrowser) = state.withLock { state in
            defer { state.connected = true }
            return (state.connected != true, state.browser == nil)
        }
        if becameAvailable {
            logger.info("Avahi is available")
            continuation.yield(.available)
        }
        guard needsBrowser else { return }
        startBrowser(on: client.pointer)
    }

    func startBrowser(on client: OpaquePointer) {
        let browser = avahi_service_browser_new(
            client, Avahi.unspecifiedInterface, Avahi.unspecifiedProtocol, serviceType, nil,
            AvahiLookupFlags(rawValue: 0),
            { browser, interface, proto, event, name, type, domain, _, userdata in
                guard let browser, let userdata else { return }
                let session = Unmanaged<BrowseSession>.fromOpaque(userdata).takeUnretainedValue()
                session.browser(
                    AvahiHandle(browser), event: event,
                    key: ServiceKey(interface, proto, name, type, domain))
            },
            userdata)
        guard let browser else {
            let reason = "Avahi cannot browse \(serviceType) (\(Avahi.errorString(avahi_client_errno(client))))"
            logger.info("\(reason)")
            loop.reconnect(reason: reason)
            return
        }
        state.withLock { $0.browser = AvahiHandle(browser) }
    }

    func avahiClientFailed(reason: String) {
        let (startsOutage, removals) = state.withLock { state in
            defer { state.connected = false }
            // The loop frees the client, and with it the browser and every resolver.
            let devices = state.devices.removeAll()
            state = State(connected: state.connected)
            return (state.connected != false, devices)
        }
        retryTimer.withLock { $0 }?.cancel()
        count { _ in }
        guard startsOutage else { return }
        logger.info("Avahi is unavailable; retrying", metadata: ["avahi.reason": "\(reason)"])
        continuation.yield(.unavailable(reason: reason))
        yield(removals)
    }

    // MARK: browser and resolver callbacks

    func browser(_ browser: AvahiHandle, event: AvahiBrowserEvent, key: ServiceKey?) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let key else { return }
            let outcome = state.withLock { state -> (added: Bool, followed: Int)? in
                guard state.services[key] == nil, state.refused[key] == nil else { return nil }
                guard state.services.count < limits.maximumServices else {
                    state.overflowed = true
                    return (false, state.services.count)
                }
                state.services[key] = Service()
                state.waiting.push(key)
                return (true, state.services.count)
            }
            guard let outcome else { return }
            guard outcome.added else {
                count { $0.ignored += 1 }
                if let metadata = ignoredLog.metadata([
                    "mdns.service": "\(key.name)", "mdns.followed": "\(outcome.followed)",
                ]) {
                    logger.warning(
                        "ignoring an mDNS announcement: castd already follows the most services it will (limits.max_mdns_services); it looks again when some leave",
                        metadata: metadata)
                }
                return
            }
            logger.debug("Service appeared", metadata: ["mdns.service": "\(key.name)"])
            pump(client: avahi_service_browser_get_client(browser.pointer))
        case AVAHI_BROWSER_REMOVE:
            guard let key else { return }
            let (resolver, events, rebrowse) = state.withLock { state in
                let service = state.services.removeValue(forKey: key)
                if let handle = service?.resolver { state.resolverKeys[handle] = nil }
                state.retrying.remove(key)
                state.unrefuse(key)
                let events = state.devices.removed(key)
                // The host has room again for a service it was refused: look at those again.
                if let host = service?.host, state.release(host) {
                    state.unrefuseAll(of: host)
                    state.overflowed = true
                }
                return (service?.resolver, events, rebrowseDue(&state))
            }
            if let resolver {
                avahi_service_resolver_free(resolver.pointer)
            }
            logger.debug("Service went away", metadata: ["mdns.service": "\(key.name)"])
            yield(events)
            let client = avahi_service_browser_get_client(browser.pointer)
            if rebrowse, let client {
                restartBrowser(browser, client: client)
            }
            count { _ in }
            pump(client: client)
        case AVAHI_BROWSER_ALL_FOR_NOW:
            // The new browser has reported every service there is: the old one can go.
            let retiring = state.withLock { state -> AvahiHandle? in
                guard state.browser == browser, let retiring = state.retiring else { return nil }
                state.retiring = nil
                return retiring
            }
            if let retiring {
                avahi_service_browser_free(retiring.pointer)
            }
        case AVAHI_BROWSER_FAILURE:
            let error = avahi_client_errno(avahi_service_browser_get_client(browser.pointer))
            loop.reconnect(reason: "Avahi stopped browsing \(serviceType) (\(Avahi.errorString(error)))")
        default:
            break  // AVAHI_BROWSER_CACHE_EXHAUSTED
        }
    }

    /// Room again after ignoring some: whether to start over to hear of those (with some slack,
    /// so that a flood at the bound does not browse again at every removal).
    func rebrowseDue(_ state: inout State) -> Bool {
        let rebrowse = state.overflowed && state.services.count <= limits.maximumServices * 3 / 4
        if rebrowse { state.overflowed = false }
        return rebrowse
    }

    /// A new browser reports every service again: those already followed are skipped, the ones
    /// ignored at the bound are picked up. The old one keeps reporting removals until the new
    /// one has caught up (ALL_FOR_NOW); one restart at a time.
    func restartBrowser(_ browser: AvahiHandle, client: OpaquePointer) {
        let restart = state.withLock { state -> Bool in
            guard state.retiring == nil, let current = state.browser else {
                state.overflowed = true  // a restart is under way: try again after it
                return false
            }
            state.retiring = current
            state.browser = nil
            return true
        }
        guard restart else { return }
        count { $0.rebrowses += 1 }
        logger.info("room for more mDNS services again; browsing anew to find those ignored")
        startBrowser(on: client)
    }

    /// Opens resolvers for waiting services while there is room, giving up the oldest watching
    /// resolver for each service that waits once the room is used up.
    func pump(client: OpaquePointer?) {
        guard let client else { return }
        while true {
            enum Step {
                case open(ServiceKey)
                case evict(AvahiHandle)
            }
            let step = state.withLock { state -> Step? in
                while let key = state.waiting.peek() {
                    guard case .waiting? = state.services[key]?.phase else {
                        _ = state.waiting.pop()  // left, or queued twice
                        continue
                    }
                    if state.resolverKeys.count < limits.maximumResolvers {
                        _ = state.waiting.pop()
                        return .open(key)
                    }
                    // Full: the oldest resolver that already answered makes room.
                    while let oldest = state.watchOrder.pop() {
                        guard var service = state.services[oldest.key], service.generation == oldest.generation,
                            case .watching(let handle) = service.phase
                        else { continue }
                        service.phase = .resolved
                        state.services[oldest.key] = service
                        state.resolverKeys[handle] = nil
                        return .evict(handle)
                    }
                    return nil  // every open resolver is still resolving: wait for one
                }
                return nil
            }
            switch step {
            case nil:
                count { _ in }
                return
            case .evict(let handle):
                avahi_service_resolver_free(handle.pointer)
            case .open(let key):
                open(key, client: client)
            }
        }
    }

    func open(_ key: ServiceKey, client: OpaquePointer) {
        // The address family asked for is the announcement's, not UNSPEC: with UNSPEC avahi
        // returns whichever of A and AAAA comes first (::1 or 127.0.0.1 on loopback). A device
        // announced over both protocols is two instances, and DeviceAggregator prefers IPv4.
        let resolver = avahi_service_resolver_new(
            client, key.interface, key.protocol, key.name, key.type, key.domain, key.protocol,
            AvahiLookupFlags(rawValue: 0),
            { resolver, _, _, event, _, _, _, _, address, port, txt, _, userdata in
                guard let resolver, let userdata else { return }
                let session = Unmanaged<BrowseSession>.fromOpaque(userdata).takeUnretainedValue()
                session.resolver(AvahiHandle(resolver), event: event, address: address, port: port, txt: txt)
            },
            userdata)
        guard let resolver else {
            // Avahi refused the object (too many for this client, out of memory): try later.
            let error = avahi_client_errno(client)
            scheduleRetry(key, reason: Avahi.errorString(error))
            return
        }
        let handle = AvahiHandle(resolver)
        let stale = state.withLock { state -> Bool in
            guard var service = state.services[key], case .waiting = service.phase else { return true }
            service.phase = .resolving(handle)
            state.services[key] = service
            state.resolverKeys[handle] = key
            return false
        }
        if stale {
            avahi_service_resolver_free(resolver)  // avahi called back synchronously and it left
        }
    }

    func resolver(
        _ resolver: AvahiHandle, event: AvahiResolverEvent,
        address: UnsafePointer<AvahiAddress>?, port: UInt16, txt: UnsafeMutablePointer<AvahiStringList>?
    ) {
        // The key the resolver was made for (what the browser reported), not what it echoes back.
        // No key: avahi called back from inside avahi_service_resolver_new, before the handle
        // was recorded; it calls again for anything that matters.
        guard let key = state.withLock({ $0.resolverKeys[resolver] }) else { return }
        let client = avahi_service_resolver_get_client(resolver.pointer)
        switch event {
        case AVAHI_RESOLVER_FOUND:
            guard let address else { return }
            let host = Avahi.numericHost(address, interface: key.interface)
            let record = CastTXTRecord(entries: Avahi.txtEntries(txt))
            let device = DiscoveredDevice(serviceName: key.name, host: host, port: Int(port), txt: record)
            guard admit(key, host: host, resolver: resolver, client: client) else { return }
            let events = state.withLock { state -> [DiscoveryEvent] in
                guard var service = state.services[key] else { return [] }
                if case .resolving = service.phase {
                    state.nextGeneration += 1
                    service.generation = state.nextGeneration
                    service.phase = .watching(resolver)
                    state.watchOrder.push((key, service.generation))
                    // Entries of services that left, or stopped watching, are only dropped
                    // when an eviction pops them; when none comes, drop them here.
                    if state.watchOrder.count > 2 * state.resolverKeys.count + 64 {
                        let services = state.services
                        state.watchOrder.removeAll { entry in
                            guard let live = services[entry.key], case .watching = live.phase else { return true }
                            return live.generation != entry.generation
                        }
                    }
                }
                service.failures = 0
                state.services[key] = service
                return state.devices.resolved(key, as: device)
            }
            logger.debug(
                "Service resolved",
                metadata: [
                    "mdns.service": "\(key.name)", "device.id": "\(device.id)", "device.host": "\(host):\(port)",
                ])
            yield(events)
            pump(client: client)
        default:
            // AVAHI_RESOLVER_FAILURE (mostly a timeout). The resolver is freed; a service that
            // never resolved is tried again later, one that did stays as it was last resolved.
            let error = Avahi.errorString(avahi_client_errno(client))
            let wasResolving = state.withLock { state -> Bool in
                state.resolverKeys[resolver] = nil
                guard var service = state.services[key] else { return false }
                if case .resolving = service.phase {
                    service.phase = .waiting  // scheduleRetry moves it on
                    state.services[key] = service
                    return true
                }
                service.phase = .resolved
                state.services[key] = service
                return false
            }
            avahi_service_resolver_free(resolver.pointer)
            if wasResolving {
                scheduleRetry(key, reason: error)
            }
            pump(client: client)
        }
    }
}
