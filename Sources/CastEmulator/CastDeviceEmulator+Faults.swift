import CastProtocol
import NIOCore

/// Fault injection: what a flaky network or a flaky device does to its senders, over the real
/// TLS links, so that senders' reconnection, liveness checks (PING after 5 s of quiet, dead
/// after 10 s of silence) and session rejoin can be tested.
///
/// Switches that stay on (``EmulatorFaults``): ``setFaults(_:)`` / ``updateFaults(_:)``.
/// Actions: ``dropLinks()``, ``restart(downtime:)`` (or ``stopListening()`` and
/// ``resumeListening()`` for a downtime of the test's choosing), ``movePort(to:)``,
/// ``transferSession(to:)`` (in `CastDeviceEmulator+Transfer.swift`), and the hostile-device
/// faults ``sendHostile(_:)`` and ``floodMediaStatus(perSecond:for:)`` (in
/// `CastDeviceEmulator+Hostile.swift`: oversized, empty and garbage frames, invalid
/// CastMessages, payloads of the wrong kind, a MEDIA_STATUS flood). The same are routes of the
/// control interface (`CastDeviceEmulator+Control.swift`).
///
/// ```swift
/// emulator.updateFaults { $0.heartbeat = .stopped }   // no PONG any more
/// await emulator.dropLinks()                          // every sender's TLS link is cut
/// try await emulator.restart(downtime: .seconds(2))   // returns once listening again
/// ```
extension CastDeviceEmulator {
    // MARK: switches

    /// The faults being played now.
    public var faults: EmulatorFaults {
        core.withLock { $0.faults }
    }

    /// Plays `faults` from now on: each applies to what happens next (a reply already queued
    /// keeps the delay it was given; links already open are not closed by `refuseTLS`).
    public func setFaults(_ faults: EmulatorFaults) {
        updateFaults { $0 = faults }
    }

    /// Changes some of the faults; returns them all.
    @discardableResult
    public func updateFaults(_ change: (inout EmulatorFaults) -> Void) -> EmulatorFaults {
        let (before, after, channels) = core.withLock { core in
            let before = core.faults
            change(&core.faults)
            return (before, core.faults, core.links.values.map(\.channel))
        }
        if after != before { logger.info("faults (fault injection): \(after)") }
        if before.heartbeat == .silent, after.heartbeat != .silent {
            for channel in channels {
                channel.pipeline.fireUserInboundEventTriggered(DeviceHeartbeatHandler.SilenceEnded())
            }
        }
        return after
    }

    // MARK: links

    /// Cuts every sender's TCP connection now, below TLS (no close_notify), like a network that
    /// dropped. The device keeps its state (the running app, the media session); new
    /// connections are accepted. Returns how many links were cut, once they have all ended.
    @discardableResult
    public func dropLinks() async -> Int {
        let links = core.withLock { core in core.takeLinks { _ in true } }
        logger.info("cutting \(links.count) link(s) (fault injection)")
        await cut(links)
        return links.count
    }

    /// Cuts `links` and waits until the device has seen each of them end.
    func cut(_ links: [(number: Int, channel: any Channel)]) async {
        await withTaskGroup(of: Void.self) { group in
            for link in links {
                group.addTask { await LinkCutter.cut(link.channel) }
            }
        }
        let numbers = Set(links.map(\.number))
        while !Task.isCancelled {
            let seen = linksChanged.generation
            let open = core.withLock { core in
                numbers.contains { core.links[$0] != nil || core.outbound[$0] != nil }
            }
            if !open { return }
            await linksChanged.wait(beyond: seen)
        }
    }

    // MARK: the listener

    /// Whether the CastV2 listener accepts connections (false before ``start()``, during a
    /// restart's downtime and after shutdown).
    public var isListening: Bool {
        core.withLock { $0.listener.isListening }
    }

    /// Where the emulator listens now (the CastV2 port changes with ``movePort(to:)``); nil
    /// before ``start()``.
    public var endpoints: EmulatorEndpoints? {
        core.withLock { $0.listener.endpoints }
    }

    /// The endpoints now (once started), then again each time the CastV2 port moves: what an
    /// mDNS publisher re-announces (the SRV record's port). Ends when the emulator shuts down.
    public func endpointChanges() -> AsyncStream<EmulatorEndpoints> {
        let (stream, continuation) = AsyncStream.makeStream(of: EmulatorEndpoints.self)
        let (id, isShutDown) = core.withLock { core -> (Int, Bool) in
            let id = core.listener.nextEndpointWatcher
            core.listener.nextEndpointWatcher += 1
            if case .shutDown = core.listener.phase { return (id, true) }
            core.listener.endpointWatchers[id] = continuation
            if let endpoints = core.listener.endpoints { continuation.yield(endpoints) }
            return (id, false)
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.core.withLock { $0.listener.endpointWatchers.removeValue(forKey: id) }
        }
        if isShutDown { continuation.finish() }
        return stream
    }

    /// Returns once the CastV2 listener is (`true`) or is not (`false`) listening, at once if it
    /// already is so; also when the emulator shuts down or the task is cancelled.
    public func waitUntil(listening wanted: Bool) async {
        while !Task.isCancelled {
            let seen = listenerChanged.generation
            let (listening, isShutDown) = core.withLock { core -> (Bool, Bool) in
                if case .shutDown = core.listener.phase { return (false, true) }
                return (core.listener.isListening, false)
            }
            if listening == wanted || isShutDown { return }
            await listenerChanged.wait(beyond: seen)
        }
    }

    /// The first half of a restart: closes the CastV2 listener (connections are refused from
    /// now on) and cuts every link. The device keeps running: its app, its media session, whose
    /// clock goes on. ``resumeListening()`` ends it. Throws `invalidState` unless listening.
    public func stopListening() async throws {
        let (server, port, links) = try core.withLock { core in
            guard let server = core.listener.server, let port = core.listener.endpoints?.port else {
                throw EmulatorError(.invalidState, "the CastV2 listener is not listening (\(core.listener.phaseName))")
            }
            core.listener.phase = .down(nil)
            core.listener.oldestAccepted = core.listener.nextGeneration
            return (server, port, core.takeLinks { _ in true })
        }
        listenerChanged.signal()
        try? await server.channel.close()
        do {
            let holder = try BoundSocket.make(host: configuration.host, port: port)
            let kept = core.withLock { core in
                guard case .down(nil) = core.listener.phase else { return false }
                core.listener.phase = .down(holder)
                return true
            }
            if !kept { holder.release() }
        } catch {
            logger.warning("the CastV2 port is not held while down: \(error)")
        }
        logger.info("CastV2 listener closed (fault injection): connections are refused until it is back")
        await cut(links)
    }

    /// The second half of a restart: listens again on the same port, with the same TLS
    /// certificate; the app and the media session are as the device's clock has them now.
    /// Throws `invalidState` unless stopped by ``stopListening()``, `bind` if the port has been
    /// taken meanwhile (the listener then stays down).
    @discardableResult
    public func resumeListening() async throws -> EmulatorEndpoints {
        let (context, port, holder) = try core.withLock { core in
            guard case .down(let holder) = core.listener.phase, let context = core.listener.context,
                let endpoints = core.listener.endpoints
            else {
                throw EmulatorError(.invalidState, "the CastV2 listener is not down (\(core.listener.phaseName))")
            }
            core.listener.phase = .down(nil)  // the listener takes the held socket over
            return (context, endpoints.port, holder)
        }
        let binding = try await bindCastV2(port: port, socket: holder, context: context)
        let endpoints = core.withLock { core -> EmulatorEndpoints? in
            guard case .down(nil) = core.listener.phase else { return nil }
            core.listener.phase = .listening(binding.server)
            return core.listener.endpoints
        }
        guard let endpoints else {
            try? await binding.server.channel.close()
            throw EmulatorError(.invalidState, "the CastV2 listener changed while it was being bound again")
        }
        castV2Servers.continuation.yield(binding.server)
        listenerChanged.signal()
        logger.info("CastV2 listener back on port \(endpoints.port) (fault injection)")
        return endpoints
    }

    /// Restarts the device's network side as a device whose network blipped: closes the CastV2
    /// listener and every link, stays down for `downtime` (connections refused), then listens on
    /// the same port again. The running app keeps its session id and transport id, the media
    /// session its id, and media that was playing has played on meanwhile (by the emulator's
    /// clock). Returns once listening again (``waitUntil(listening:)`` tells the same to
    /// others); cancelling it cuts the downtime short.
    @discardableResult
    public func restart(downtime: Duration) async throws -> EmulatorEndpoints {
        try await stopListening()
        try? await Task.sleep(for: downtime)
        return try await resumeListening()
    }

    /// Moves the CastV2 listener to another port (`0`: any free one) and keeps the session: the
    /// new port is bound first, then the old listener and every link are closed. The HTTP(S)
    /// servers stay where they are. ``endpoints`` and ``endpointChanges()`` report the new port,
    /// for an mDNS publisher to announce (the cast-emulator command does). Throws
    /// `invalidArgument` for a port out of range or the current one, `invalidState` unless
    /// listening, `bind` when the new port cannot be bound (nothing changes then).
    @discardableResult
    public func movePort(to port: Int = 0) async throws -> EmulatorEndpoints {
        guard (0...65535).contains(port) else {
            throw EmulatorError(.invalidArgument, "port \(port) is not in 0...65535")
        }
        let (context, current) = try core.withLock { core in
            guard core.listener.isListening, let context = core.listener.context,
                let endpoints = core.listener.endpoints
            else {
                throw EmulatorError(.invalidState, "the CastV2 listener is not listening (\(core.listener.phaseName))")
            }
            return (context, endpoints)
        }
        guard port == 0 || port != current.port else {
            throw EmulatorError(.invalidArgument, "already listening on port \(port)")
        }
        let binding = try await bindCastV2(port: port, context: context)
        let moved = core.withLock { core -> (old: CastServer, links: [(number: Int, channel: any Channel)])? in
            guard let old = core.listener.server, var endpoints = core.listener.endpoints else { return nil }
            endpoints.port = binding.port
            core.listener.phase = .listening(binding.server)
            core.listener.oldestAccepted = binding.generation
            core.listener.endpoints = endpoints
            for watcher in core.listener.endpointWatchers.values { watcher.yield(endpoints) }
            return (old, core.takeLinks { $0.generation < binding.generation })
        }
        guard let moved else {
            try? await binding.server.channel.close()
            throw EmulatorError(.invalidState, "the CastV2 listener changed while the new port was being bound")
        }
        castV2Servers.continuation.yield(binding.server)
        listenerChanged.signal()
        logger.info("CastV2 listener moved from port \(current.port) to \(binding.port) (fault injection)")
        try? await moved.old.channel.close()
        await cut(moved.links)
        return core.withLock { $0.listener.endpoints } ?? current
    }

    /// `faults` in `GET /emulator/state` and the answer of `GET /emulator/faults`.
    static func faultsJSON(_ faults: EmulatorFaults, isListening: Bool) -> JSONValue {
        var fields = faults.json.objectValue ?? [:]
        fields["listening"] = .bool(isListening)
        return .object(fields)
    }
}

extension CastDeviceEmulator.Core {
    /// The links that match, marked as cut on purpose (their end is logged so).
    mutating func takeLinks(
        where wanted: (CastDeviceEmulator.Link) -> Bool
    ) -> [(number: Int, channel: any Channel)] {
        let taken = links.filter { wanted($0.value) }.map { (number: $0.key, channel: $0.value.channel) }
        cutLinks.formUnion(taken.map(\.number))
        return taken
    }
}

extension EmulatorEndpoints {
    /// As the control interface reports it: `{host, port, httpPort, httpsPort}` (absent ports null).
    var json: JSONValue {
        [
            "host": .string(host), "port": .number(Double(port)),
            "httpPort": httpPort.map { .number(Double($0)) } ?? .null,
            "httpsPort": httpsPort.map { .number(Double($0)) } ?? .null,
        ]
    }
}
