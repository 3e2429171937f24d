import CastSync
import CAvahi
import Dispatch
import Logging

/// Browses for Cast devices with the Avahi daemon (over D-Bus) and reports them as events.
public final class AvahiBrowser: Sendable {
    public let serviceType: String
    /// How long to wait before trying Avahi again after it could not be reached.
    public let retryInterval: Duration
    private let logger: Logger

    public init(serviceType: String = "_googlecast._tcp", retryInterval: Duration = .seconds(2), logger: Logger) {
        self.serviceType = serviceType
        self.retryInterval = retryInterval
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
        let session = BrowseSession(serviceType: serviceType, loop: loop, continuation: continuation, logger: logger)
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
}

/// The state of one `events()` stream. Everything but `init` runs on the loop's poll thread.
private final class BrowseSession: AvahiClientLoopOwner {
    private struct State {
        var browser: AvahiHandle?
        var resolvers: [ServiceKey: AvahiHandle] = [:]
        var devices = DeviceAggregator()
        /// nil before the first attempt; false during an outage.
        var connected: Bool?
    }

    private let serviceType: String
    private let loop: AvahiClientLoop
    private let continuation: AsyncStream<DiscoveryEvent>.Continuation
    private let logger: Logger
    private let state = Locked(State())

    init(
        serviceType: String, loop: AvahiClientLoop, continuation: AsyncStream<DiscoveryEvent>.Continuation,
        logger: Logger
    ) {
        self.serviceType = serviceType
        self.loop = loop
        self.continuation = continuation
        var logger = logger
        logger[metadataKey: "mdns.type"] = "\(serviceType)"
        self.logger = logger
    }

    private var userdata: UnsafeMutableRawPointer {
        // Unretained: browsers and resolvers die with their client, and the loop keeps this
        // session alive as long as any client exists (see AvahiClientLoop).
        Unmanaged.passUnretained(self).toOpaque()
    }

    private func yield(_ events: [DiscoveryEvent]) {
        for event in events {
            continuation.yield(event)
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
        let browser = avahi_service_browser_new(
            client.pointer, Avahi.unspecifiedInterface, Avahi.unspecifiedProtocol, serviceType, nil,
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
            let reason = "Avahi cannot browse \(serviceType) (\(Avahi.errorString(avahi_client_errno(client.pointer))))"
            logger.info("\(reason)")
            loop.reconnect(reason: reason)
            return
        }
        state.withLock { $0.browser = AvahiHandle(browser) }
    }

    func avahiClientFailed(reason: String) {
        let (startsOutage, removals) = state.withLock { state in
            defer { state.connected = false }
            state.browser = nil
            state.resolvers = [:]
            return (state.connected != false, state.devices.removeAll())
        }
        guard startsOutage else { return }
        logger.info("Avahi is unavailable; retrying", metadata: ["avahi.reason": "\(reason)"])
        continuation.yield(.unavailable(reason: reason))
        yield(removals)
    }

    // MARK: browser and resolver callbacks

    private func browser(_ browser: AvahiHandle, event: AvahiBrowserEvent, key: ServiceKey?) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let key else { return }
            let known = state.withLock { $0.resolvers[key] != nil }
            guard !known else { return }
            logger.debug("Service appeared; resolving", metadata: ["mdns.service": "\(key.name)"])
            // The address family asked for is the announcement's, not UNSPEC: with UNSPEC avahi
            // returns whichever of A and AAAA comes first (::1 or 127.0.0.1 on loopback). A device
            // announced over both protocols is two instances, and DeviceAggregator prefers IPv4.
            let resolver = avahi_service_resolver_new(
                avahi_service_browser_get_client(browser.pointer), key.interface, key.protocol,
                key.name, key.type, key.domain, key.protocol, AvahiLookupFlags(rawValue: 0),
                { resolver, interface, proto, event, name, type, domain, _, address, port, txt, _, userdata in
                    guard let resolver, let userdata else { return }
                    let session = Unmanaged<BrowseSession>.fromOpaque(userdata).takeUnretainedValue()
                    session.resolver(AvahiHandle(resolver), event: event, address: address, port: port, txt: txt)
                },
                userdata)
            guard let resolver else {
                let error = avahi_client_errno(avahi_service_browser_get_client(browser.pointer))
                logger.info(
                    "Cannot resolve service",
                    metadata: ["mdns.service": "\(key.name)", "avahi.error": "\(Avahi.errorString(error))"])
                return
            }
            state.withLock { $0.resolvers[key] = AvahiHandle(resolver) }
        case AVAHI_BROWSER_REMOVE:
            guard let key else { return }
            let (resolver, events) = state.withLock { state in
                (state.resolvers.removeValue(forKey: key), state.devices.removed(key))
            }
            if let resolver {
                avahi_service_resolver_free(resolver.pointer)
            }
            logger.debug("Service went away", metadata: ["mdns.service": "\(key.name)"])
            yield(events)
        case AVAHI_BROWSER_FAILURE:
            let error = avahi_client_errno(avahi_service_browser_get_client(browser.pointer))
            loop.reconnect(reason: "Avahi stopped browsing \(serviceType) (\(Avahi.errorString(error)))")
        default:
            break  // AVAHI_BROWSER_CACHE_EXHAUSTED, AVAHI_BROWSER_ALL_FOR_NOW
        }
    }

    private func resolver(
        _ resolver: AvahiHandle, event: AvahiResolverEvent,
        address: UnsafePointer<AvahiAddress>?, port: UInt16, txt: UnsafeMutablePointer<AvahiStringList>?
    ) {
        // The key the resolver was made for (what the browser reported), not what it echoes back.
        guard let key = state.withLock({ $0.resolvers.first { $0.value == resolver }?.key }) else { return }
        switch event {
        case AVAHI_RESOLVER_FOUND:
            guard let address else { return }
            let host = Avahi.numericHost(address, interface: key.interface)
            let record = CastTXTRecord(entries: Avahi.txtEntries(txt))
            let device = DiscoveredDevice(serviceName: key.name, host: host, port: Int(port), txt: record)
            let events = state.withLock { $0.devices.resolved(key, as: device) }
            logger.debug(
                "Service resolved",
                metadata: [
                    "mdns.service": "\(key.name)", "device.id": "\(device.id)", "device.host": "\(host):\(port)",
                ])
            yield(events)
        default:
            // AVAHI_RESOLVER_FAILURE (mostly a timeout): the resolver is kept, in case avahi
            // resolves the service later; the browser's REMOVE frees it.
            let error = avahi_client_errno(avahi_service_resolver_get_client(resolver.pointer))
            logger.debug(
                "Service did not resolve",
                metadata: ["mdns.service": "\(key.name)", "avahi.error": "\(Avahi.errorString(error))"])
        }
    }
}

extension ServiceKey {
    /// From the strings of an avahi callback; nil if avahi passed none (it always does).
    fileprivate init?(
        _ interface: AvahiIfIndex, _ proto: AvahiProtocol,
        _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?
    ) {
        guard let name, let type, let domain else { return nil }
        self.init(
            interface: interface, protocol: proto,
            name: String(cString: name), type: String(cString: type), domain: String(cString: domain))
    }
}
