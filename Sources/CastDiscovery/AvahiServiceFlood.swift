import CastdSupport
import CAvahi
import Logging

/// Many services published at once through the Avahi daemon: an mDNS flood, for the tests and
/// the benchmark that check castd stays bounded under one. Not for castd itself.
///
/// Each service has an entry group of its own, so that each can be withdrawn alone; Avahi lets
/// one client hold 1,024 objects, so a new client is used for every `servicesPerClient`.
package final class AvahiServiceFlood: Sendable {
    package struct Service: Sendable {
        package var name: String
        package var port: Int
        package var txt: [String: String]
        /// The host its SRV record names; nil: this machine's.
        package var host: String?

        package init(name: String, port: Int, txt: [String: String], host: String? = nil) {
            self.name = name
            self.port = port
            self.txt = txt
            self.host = host
        }
    }

    package static let servicesPerClient = 1000

    package let serviceType: String
    private let logger: Logger
    private let clients = Locked<[FloodClient]>([])

    package init(serviceType: String, logger: Logger) {
        self.serviceType = serviceType
        self.logger = logger
    }

    deinit {
        withdrawAll()
    }

    /// Publishes `services` and waits until Avahi has established every one (probed and
    /// announced), or throws after `timeout`.
    package func publish(_ services: [Service], timeout: Duration) async throws {
        var made: [FloodClient] = []
        for start in stride(from: 0, to: services.count, by: Self.servicesPerClient) {
            let chunk = Array(services[start..<min(start + Self.servicesPerClient, services.count)])
            let client = try FloodClient(serviceType: serviceType, services: chunk, address: nil, logger: logger)
            clients.withLock { $0.append(client) }
            made.append(client)
        }
        try await publish(waitingFor: made, count: services.count, timeout: timeout)
    }

    private func publish(waitingFor all: [FloodClient], count: Int, timeout: Duration) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in all {
                group.addTask { try await client.established() }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                let pending = all.reduce(0) { $0 + $1.pendingCount }
                throw DiscoveryError(
                    code: .timedOut,
                    message: "\(pending) of \(count) entry groups were not established within \(timeout)")
            }
            defer { group.cancelAll() }
            for _ in all {
                try await group.next()
            }
        }
    }

    /// Publishes an address record (`host` → `address`), as a host announcing itself does,
    /// and waits until it is established.
    package func publishAddress(of host: String, _ address: String, timeout: Duration) async throws {
        let client = try FloodClient(serviceType: serviceType, services: [], address: (host, address), logger: logger)
        clients.withLock { $0.append(client) }
        try await publish(waitingFor: [client], count: 1, timeout: timeout)
    }

    /// Withdraws every service published so far (browsers see each go).
    package func withdrawAll() {
        let all = clients.withLock { clients in
            defer { clients = [] }
            return clients
        }
        for client in all {
            client.stop()
        }
    }
}

/// Up to `servicesPerClient` services on one Avahi client.
private final class FloodClient: AvahiClientLoopOwner {
    private struct State {
        var client: AvahiHandle?
        var pending: Set<AvahiHandle> = []
        var failure: String?
        var waiters: [CheckedContinuation<Void, any Error>] = []
    }

    private let serviceType: String
    private let services: [AvahiServiceFlood.Service]
    private let address: (host: String, address: String)?
    private let loop: AvahiClientLoop
    private let state = Locked(State())

    init(
        serviceType: String, services: [AvahiServiceFlood.Service], address: (host: String, address: String)?,
        logger: Logger
    ) throws {
        self.serviceType = serviceType
        self.services = services
        self.address = address
        loop = try AvahiClientLoop(retryInterval: .seconds(3600), logger: logger)
        do {
            try loop.connectNow(owner: self)
            let added: String?? = loop.withPollLocked { self.addAll() }
            if let problem = added ?? "stopped" {
                throw DiscoveryError(code: .publishFailed, message: problem)
            }
        } catch {
            loop.shutdown()
            throw error
        }
    }

    var pendingCount: Int { state.withLock { $0.pending.count } }

    func stop() {
        loop.shutdown()
        let waiters = state.withLock { state in
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters {
            waiter.resume(throwing: DiscoveryError(code: .stopped, message: "the flood was withdrawn"))
        }
    }

    /// Waits until every entry group is established.
    func established() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if let failure = state.failure {
                    return .failure(DiscoveryError(code: .publishFailed, message: failure))
                }
                if state.pending.isEmpty { return .success(()) }
                state.waiters.append(continuation)
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    // MARK: poll thread (or the constructor, with the poll locked)

    func avahiClient(_ client: AvahiHandle, didEnter clientState: AvahiClientState) {
        state.withLock { $0.client = client }
    }

    func avahiClientFailed(reason: String) {
        finish(failure: "lost Avahi: \(reason)")
    }

    /// Adds one entry group per service; returns what went wrong, or nil.
    private func addAll() -> String? {
        guard let client = state.withLock({ $0.client }) else { return "no Avahi client" }
        if let address {
            guard let group = newGroup(client) else {
                return "avahi_entry_group_new: \(Avahi.errorString(avahi_client_errno(client.pointer)))"
            }
            var parsed = AvahiAddress()
            guard avahi_address_parse(address.address, Avahi.unspecifiedProtocol, &parsed) != nil else {
                return "not an address: \(address.address)"
            }
            // No reverse (PTR) record: the address's reverse name is this machine's already.
            let added = avahi_entry_group_add_address(
                group, Avahi.unspecifiedInterface, Avahi.unspecifiedProtocol, AVAHI_PUBLISH_NO_REVERSE,
                address.host, &parsed)
            guard added >= 0 else { return "Avahi refused \(address.host): \(Avahi.errorString(added))" }
            let committed = avahi_entry_group_commit(group)
            guard committed >= 0 else {
                return "Avahi did not publish \(address.host): \(Avahi.errorString(committed))"
            }
        }
        for service in services {
            guard let group = newGroup(client) else {
                return "avahi_entry_group_new: \(Avahi.errorString(avahi_client_errno(client.pointer)))"
            }
            let list = Avahi.makeStringList(service.txt)
            defer { avahi_string_list_free(list) }
            let added = avahi_entry_group_add_service_strlst(
                group, Avahi.unspecifiedInterface, Avahi.unspecifiedProtocol, AvahiPublishFlags(rawValue: 0),
                service.name, serviceType, nil, service.host, UInt16(clamping: service.port), list)
            guard added >= 0 else { return "Avahi refused \(service.name): \(Avahi.errorString(added))" }
            let committed = avahi_entry_group_commit(group)
            guard committed >= 0 else {
                return "Avahi did not publish \(service.name): \(Avahi.errorString(committed))"
            }
        }
        return nil
    }

    private func newGroup(_ client: AvahiHandle) -> OpaquePointer? {
        let userdata = Unmanaged.passUnretained(self).toOpaque()  // the loop holds its owner
        let group = avahi_entry_group_new(
            client.pointer,
            { group, groupState, userdata in
                guard let group, let userdata else { return }
                Unmanaged<FloodClient>.fromOpaque(userdata).takeUnretainedValue()
                    .group(AvahiHandle(group), didChangeTo: groupState)
            },
            userdata)
        if let group {
            state.withLock { _ = $0.pending.insert(AvahiHandle(group)) }
        }
        return group
    }

    private func group(_ group: AvahiHandle, didChangeTo groupState: AvahiEntryGroupState) {
        switch groupState {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            let done = state.withLock { state -> Bool in
                state.pending.remove(group)
                return state.pending.isEmpty
            }
            if done { finish(failure: nil) }
        case AVAHI_ENTRY_GROUP_COLLISION, AVAHI_ENTRY_GROUP_FAILURE:
            finish(
                failure:
                    "an entry group failed (\(groupState == AVAHI_ENTRY_GROUP_COLLISION ? "name collision" : "failure"))"
            )
        default:
            break
        }
    }

    private func finish(failure: String?) {
        let waiters = state.withLock { state in
            if let failure, state.failure == nil { state.failure = failure }
            defer { state.waiters = [] }
            return state.waiters
        }
        let outcome: Result<Void, any Error> =
            failure.map { .failure(DiscoveryError(code: .publishFailed, message: $0)) } ?? .success(())
        for waiter in waiters { waiter.resume(with: outcome) }
    }
}
