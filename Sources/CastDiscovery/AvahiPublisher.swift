import CastdSupport
import CAvahi
import Dispatch
import Logging

/// Publishes one service with the Avahi daemon until `stop()` or deinit.
///
/// If the connection to Avahi is lost later, the service is published again when Avahi is back.
/// After a name collision the service is renamed the way Avahi does ("Name #2"); see `name`.
/// The TXT record (`updateTXT`) and the port (`updatePort`) can change while it is published.
public final class AvahiPublisher: Sendable {
    public let serviceType: String
    private let loop: AvahiClientLoop
    private let core: PublisherCore

    /// Publishes a service (on every interface Avahi uses: only `lo` with the test configuration).
    ///
    /// Throws `DiscoveryError` with code `.avahiUnavailable` if Avahi cannot be reached,
    /// `.invalidArgument` for a name, port or TXT record mDNS cannot carry, and `.publishFailed`
    /// if Avahi refuses the service. If the connection to Avahi is lost later, it is tried again
    /// every `retryInterval`.
    public init(
        name: String, serviceType: String = "_googlecast._tcp", port: Int, txt: [String: String],
        retryInterval: Duration = .seconds(2), logger: Logger
    ) throws {
        try Self.validate(name: name, port: port, txt: txt)
        self.serviceType = serviceType
        var logger = logger
        logger[metadataKey: "mdns.type"] = "\(serviceType)"
        self.loop = try AvahiClientLoop(retryInterval: retryInterval, logger: logger)
        self.core = PublisherCore(name: name, serviceType: serviceType, port: UInt16(port), txt: txt, logger: logger)
        do {
            try loop.connectNow(owner: core)
            try core.checkNotFailed()
        } catch {
            loop.shutdown()
            throw error
        }
    }

    deinit {
        stop()
    }

    /// The published instance name: the requested one, or Avahi's alternative after a collision.
    public var name: String {
        core.name
    }

    /// The port the service is published on (its SRV record).
    public var port: Int {
        Int(core.port)
    }

    /// Waits until Avahi has probed the name and announced the service (AVAHI_ENTRY_GROUP_ESTABLISHED).
    public func waitUntilEstablished(timeout: Duration) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.core.established() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw DiscoveryError(
                    code: .timedOut, message: "\(self.name) (\(self.serviceType)) was not established within \(timeout)"
                )
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// Replaces the TXT record of the published service.
    public func updateTXT(_ txt: [String: String]) throws {
        try Self.validate(txt: txt)
        let updated: Void? = try loop.withPollLocked { try core.update(txt: txt) }
        guard updated != nil else {
            throw DiscoveryError(code: .stopped, message: "\(name) (\(serviceType)) is no longer published")
        }
    }

    /// Publishes the service on another port. Avahi cannot change a published SRV record in
    /// place, so the service is withdrawn and published again under the same name: browsers
    /// see it go and come back with the new port (or just the new port), and
    /// `waitUntilEstablished` waits for the new announcement.
    public func updatePort(_ port: Int) throws {
        guard (1...65535).contains(port) else {
            throw DiscoveryError(code: .invalidArgument, message: "Port \(port) is not in 1...65535")
        }
        let updated: Void? = loop.withPollLocked { core.update(port: UInt16(port)) }
        guard updated != nil else {
            throw DiscoveryError(code: .stopped, message: "\(name) (\(serviceType)) is no longer published")
        }
    }

    /// Withdraws the service. Idempotent; also done on deinit. Blocks until Avahi's thread for
    /// this publisher is idle (briefly); call it from any thread.
    public func stop() {
        loop.shutdown()
        core.stopped()
    }

    private static func validate(name: String, port: Int, txt: [String: String]) throws(DiscoveryError) {
        guard !name.isEmpty, name.utf8.count <= 63 else {
            throw DiscoveryError(
                code: .invalidArgument, message: "A service name must have 1 to 63 bytes of UTF-8: \"\(name)\"")
        }
        guard (1...65535).contains(port) else {
            throw DiscoveryError(code: .invalidArgument, message: "Port \(port) is not in 1...65535")
        }
        try validate(txt: txt)
    }

    private static func validate(txt: [String: String]) throws(DiscoveryError) {
        for (key, value) in txt {
            guard !key.isEmpty, !key.contains("="), key.utf8.count + 1 + value.utf8.count <= 255 else {
                throw DiscoveryError(
                    code: .invalidArgument,
                    message:
                        "TXT entry \"\(key)=\(value)\": keys must be non-empty without '=', entries at most 255 bytes")
            }
        }
    }
}

/// The entry group of one `AvahiPublisher`. The avahi callbacks run on the poll thread;
/// `update(txt:)` runs with the poll lock held.
private final class PublisherCore: AvahiClientLoopOwner {
    private enum Phase {
        case waiting, registering, established
        case failed(DiscoveryError)
        case stopped
    }

    private struct State {
        var group: AvahiHandle?
        var name: String
        var port: UInt16
        var txt: [String: String]
        var phase = Phase.waiting
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var nextWaiter = 0
    }

    private let serviceType: String
    private let logger: Logger
    private let state: Locked<State>

    init(name: String, serviceType: String, port: UInt16, txt: [String: String], logger: Logger) {
        self.serviceType = serviceType
        self.logger = logger
        self.state = Locked(State(name: name, port: port, txt: txt))
    }

    var name: String {
        state.withLock { $0.name }
    }

    var port: UInt16 {
        state.withLock { $0.port }
    }

    func checkNotFailed() throws(DiscoveryError) {
        if case .failed(let error) = state.withLock({ $0.phase }) {
            throw error
        }
    }

    func established() async throws {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let result: Result<Void, any Error>? = state.withLock { state in
                    switch state.phase {
                    case .established: return .success(())
                    case .failed(let error): return .failure(error)
                    case .stopped: return .failure(stoppedError(state.name))
                    case .waiting, .registering:
                        if Task.isCancelled { return .failure(CancellationError()) }
                        state.waiters[id] = continuation
                        return nil
                    }
                }
                if let result {
                    continuation.resume(with: result)
                }
            }
        } onCancel: {
            let continuation = state.withLock { $0.waiters.removeValue(forKey: id) }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// With the poll lock held.
    func update(txt: [String: String]) throws {
        let (group, name) = state.withLock { state in
            state.txt = txt
            return (state.group, state.name)
        }
        guard let group else { return }  // published with the new TXT once Avahi is back
        guard avahi_entry_group_is_empty(group.pointer) == 0 else { return }
        let list = Avahi.makeStringList(txt)
        defer { avahi_string_list_free(list) }
        let result = avahi_entry_group_update_service_txt_strlst(
            group.pointer, Avahi.unspecifiedInterface, Avahi.unspecifiedProtocol, AvahiPublishFlags(rawValue: 0),
            name, serviceType, nil, list)
        if result < 0 {
            throw DiscoveryError(
                code: .publishFailed,
                message: "Avahi refused the new TXT record of \(name) (\(Avahi.errorString(result)))")
        }
        logger.debug("Updated TXT record", metadata: ["mdns.service": "\(name)"])
    }

    /// With the poll lock held. A published service is withdrawn and published again on `port`;
    /// one not published yet (or while Avahi is away) is published on it when its turn comes.
    func update(port: UInt16) {
        let (group, changed) = state.withLock { state in
            defer { state.port = port }
            return (state.group, state.port != port)
        }
        guard changed, let group, avahi_entry_group_is_empty(group.pointer) == 0 else { return }
        avahi_entry_group_reset(group.pointer)
        publish(in: group)
        logger.info("Publishing on a new port", metadata: ["mdns.service": "\(name)", "mdns.port": "\(port)"])
    }

    func stopped() {
        let waiters = state.withLock { state in
            state.phase = .stopped
            state.group = nil
            defer { state.waiters = [:] }
            return (state.waiters.values, state.name)
        }
        for waiter in waiters.0 {
            waiter.resume(throwing: stoppedError(waiters.1))
        }
    }

    private func stoppedError(_ name: String) -> DiscoveryError {
        DiscoveryError(code: .stopped, message: "\(name) (\(serviceType)) is no longer published")
    }

    /// Poll thread.
    private func setPhase(_ phase: Phase) {
        let (waiters, result): ([CheckedContinuation<Void, any Error>], Result<Void, any Error>?) = state.withLock {
            state in
            if case .stopped = state.phase { return ([], nil) }
            state.phase = phase
            let result: Result<Void, any Error>?
            switch phase {
            case .established: result = .success(())
            case .failed(let error): result = .failure(error)
            default: result = nil
            }
            guard result != nil else { return ([], nil) }
            defer { state.waiters = [:] }
            return (Array(state.waiters.values), result)
        }
        guard let result, !waiters.isEmpty else { return }
        // Resuming locks the waiting task. If that task is being cancelled by a thread that calls
        // stop() (which waits for this poll thread), resuming here would deadlock; so resume from
        // a dispatch work item (not a Task: nothing to await), and this thread never waits for
        // the concurrency runtime.
        DispatchQueue.global().async {
            for waiter in waiters {
                waiter.resume(with: result)
            }
        }
    }

    // MARK: AvahiClientLoopOwner (poll thread)

    func avahiClient(_ client: AvahiHandle, didEnter clientState: AvahiClientState) {
        let group = state.withLock { $0.group }
        switch clientState {
        case AVAHI_CLIENT_S_RUNNING:
            if let group {
                if avahi_entry_group_is_empty(group.pointer) != 0 {
                    publish(in: group)
                }
                return
            }
            // Unretained: the group dies with its client, and the loop keeps this object alive as
            // long as any client exists (see AvahiClientLoop).
            let created = avahi_entry_group_new(
                client.pointer,
                { group, groupState, userdata in
                    guard let group, let userdata else { return }
                    let core = Unmanaged<PublisherCore>.fromOpaque(userdata).takeUnretainedValue()
                    core.group(AvahiHandle(group), didChangeTo: groupState)
                },
                Unmanaged.passUnretained(self).toOpaque())
            guard let created else {
                fail("Avahi cannot create an entry group (\(Avahi.errorString(avahi_client_errno(client.pointer))))")
                return
            }
            state.withLock { $0.group = AvahiHandle(created) }
            publish(in: AvahiHandle(created))
        default:
            // Registering or host name collision: Avahi withdraws our records; publish them
            // again once it runs.
            if let group {
                avahi_entry_group_reset(group.pointer)
            }
            setPhase(.waiting)
        }
    }

    func avahiClientFailed(reason: String) {
        let wasPublished = state.withLock { state in
            defer { state.group = nil }
            return state.group != nil
        }
        setPhase(.waiting)
        if wasPublished {
            logger.info("Lost Avahi; will publish again when it is back", metadata: ["avahi.reason": "\(reason)"])
        }
    }

    // MARK: poll thread

    private func publish(in group: AvahiHandle) {
        let (requestedName, port, txt) = state.withLock { ($0.name, $0.port, $0.txt) }
        var name = requestedName
        let list = Avahi.makeStringList(txt)
        defer { avahi_string_list_free(list) }
        var result = add(name, port, list, to: group)
        var attempts = 0
        while Int(result) == AVAHI_ERR_COLLISION, attempts < 20 {
            name = alternativeName(name)
            attempts += 1
            result = add(name, port, list, to: group)
        }
        guard result >= 0 else {
            fail("Avahi refused \(name) (\(serviceType) port \(port)): \(Avahi.errorString(result))")
            return
        }
        state.withLock { $0.name = name }
        let committed = avahi_entry_group_commit(group.pointer)
        guard committed >= 0 else {
            fail("Avahi could not publish \(name) (\(serviceType)): \(Avahi.errorString(committed))")
            return
        }
        setPhase(.registering)
    }

    private func add(
        _ name: String, _ port: UInt16, _ list: UnsafeMutablePointer<AvahiStringList>?, to group: AvahiHandle
    ) -> Int32 {
        avahi_entry_group_add_service_strlst(
            group.pointer, Avahi.unspecifiedInterface, Avahi.unspecifiedProtocol, AvahiPublishFlags(rawValue: 0),
            name, serviceType, nil, nil, port, list)
    }

    private func alternativeName(_ name: String) -> String {
        guard let alternative = avahi_alternative_service_name(name) else { return name + " #2" }
        defer { avahi_free(alternative) }
        return String(cString: alternative)
    }

    private func group(_ group: AvahiHandle, didChangeTo groupState: AvahiEntryGroupState) {
        guard state.withLock({ $0.group == group }) else { return }
        switch groupState {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            logger.info("Service published", metadata: ["mdns.service": "\(name)", "mdns.port": "\(port)"])
            setPhase(.established)
        case AVAHI_ENTRY_GROUP_COLLISION:
            let renamed = alternativeName(name)
            logger.info(
                "Service name collision; renaming",
                metadata: ["mdns.service": "\(name)", "mdns.new-name": "\(renamed)"])
            state.withLock { $0.name = renamed }
            avahi_entry_group_reset(group.pointer)
            publish(in: group)
        case AVAHI_ENTRY_GROUP_FAILURE:
            let error = avahi_client_errno(avahi_entry_group_get_client(group.pointer))
            fail("Avahi withdrew \(name) (\(serviceType)): \(Avahi.errorString(error))")
        default:
            break  // UNCOMMITED, REGISTERING
        }
    }

    private func fail(_ message: String) {
        logger.info("\(message)")
        setPhase(.failed(DiscoveryError(code: .publishFailed, message: message)))
    }
}
