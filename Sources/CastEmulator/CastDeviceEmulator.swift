import CastdSupport
import CastProtocol
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// An emulated Google Cast device: the device side of CastV2 over TLS, with a platform receiver,
/// a few well-known apps and a media player whose clock can be driven by tests.
///
/// ```swift
/// let emulator = CastDeviceEmulator(configuration: .init(), logger: Logger(label: "emulator"))
/// let endpoints = try await emulator.start()      // bound; endpoints.port is the CastV2 port
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await emulator.run() }
///     // … talk to endpoints.host:endpoints.port …
///     await emulator.shutdown()
/// }
/// ```
///
/// It behaves like a real receiver where senders can tell: virtual connections (messages before
/// CONNECT are dropped), heartbeats, statuses that answer the requester and are broadcast to
/// every connected sender, the 64 KiB frame limit, and the untidy parts real senders rely on.
/// Its media player is the Default Media Receiver as the sender SDK's remote media client sees
/// it: queues, tracks, ad breaks, live windows, playback rate, LOAD_FAILED.
///
/// What senders asked of it (launches with their language, app types and credentials; loads
/// with theirs) is in ``state()``, and, with ``EmulatorConfiguration/httpPort``, at
/// `GET /emulator/state`.
public final class CastDeviceEmulator: Sendable {
    public let configuration: EmulatorConfiguration
    let logger: Logger
    let deviceDescription: EmulatorDeviceDescription
    let clock: any EmulatorClock

    struct Core {
        var device: EmulatedDevice
        var outbound: [Int: AsyncStream<Outgoing>.Continuation] = [:]
        var nextConnection = 1
        var txtWatchers: [Int: AsyncStream<[String: String]>.Continuation] = [:]
        var nextTXTWatcher = 1
        /// The faults being played (see `CastDeviceEmulator+Faults.swift`).
        var faults: EmulatorFaults
        /// The CastV2 listener: where it listens, or that it is down.
        var listener = CastV2Listener()
        /// Every TLS connection accepted and not yet closed.
        var links: [Int: Link] = [:]
        /// Links the emulator cut on purpose (fault injection), so that their end is told as such.
        var cutLinks: Set<Int> = []
        var mediaFetch = MediaFetchControl()

        /// Queues `message` for `connection`: dropped while the device is silent, due later when
        /// replies are delayed (all but `tp.*`).
        func enqueue(_ message: CastMessage, on connection: Int) {
            guard let continuation = outbound[connection], faults.heartbeat != .silent else { return }
            var due: ContinuousClock.Instant?
            if faults.replyDelay > .zero, !CastNamespace.isTransport(message.namespace) {
                due = .now + faults.replyDelay
            }
            continuation.yield(Outgoing(message: message, due: due))
        }

        func deliver(_ deliveries: [DeviceOutcome.Delivery]) {
            for delivery in deliveries { enqueue(delivery.message, on: delivery.connection) }
        }
    }

    /// A message on its way to one connection, and when it may leave (nil: at once).
    struct Outgoing: Sendable {
        var message: CastMessage
        var due: ContinuousClock.Instant?
    }

    /// An accepted TLS connection, and which bind of the CastV2 listener accepted it.
    struct Link {
        var channel: any Channel
        var generation: Int
    }

    typealias CastServer = NIOAsyncChannel<AcceptedConnection, Never>
    typealias HTTPConnection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>
    typealias HTTPServer = NIOAsyncChannel<HTTPConnection, Never>

    struct AcceptedConnection: Sendable {
        /// Whether the connection goes on to TLS.
        enum Admission: Sendable {
            case accepted
            /// The device refuses TLS (fault injection).
            case refused
            /// Accepted by a listener that has been closed or replaced meanwhile.
            case listenerClosed
        }

        var number: Int
        var remote: String
        var admission: Admission
        var channel: NIOAsyncChannel<CastMessage, CastMessage>
    }

    /// What device authentication needs: the device's credentials and the TLS certificate whose
    /// DER the challenge signature covers.
    struct Authentication: Sendable {
        var credentials: EmulatorDeviceCredentials
        var tlsCertificateDER: [UInt8]
    }

    /// What binding the CastV2 listener again (after a restart, on a new port) needs.
    struct CastV2Context: Sendable {
        var tls: NIOSSLContext
        var messageLog: EmulatorMessageLog?
        var authentication: Authentication
    }

    /// The servers bound by ``start()``. The CastV2 listener itself lives in `Core.listener`,
    /// because faults close and re-bind it while the emulator runs.
    struct Servers: Sendable {
        var castV2: CastV2Context
        var http: HTTPServer?
        var https: HTTPServer?
        var endpoints: EmulatorEndpoints

        func close() async {
            try? await http?.channel.close()
            try? await https?.channel.close()
            castV2.messageLog?.close()
        }
    }

    enum Lifecycle {
        case idle
        case starting
        case started(Servers)
        case running
        case shutDown
    }

    let core: Locked<Core>
    let lifecycle = Locked(Lifecycle.idle)
    let startTime = ContinuousClock.now
    /// Bumped whenever playback changes, so that the end-of-media timer is re-armed.
    let playbackChanged = ChangeSignal()
    let shutdownRequested = ChangeSignal()
    let runFinished = ChangeSignal()
    /// Bumped when the CastV2 listener goes down, comes back or moves.
    let listenerChanged = ChangeSignal()
    /// Bumped when a link closes or ends.
    let linksChanged = ChangeSignal()
    /// Every CastV2 listener bound, for ``run()`` to serve: the first from ``start()``, then one
    /// per restart or move.
    let castV2Servers = AsyncStream.makeStream(of: CastServer.self)

    public init(configuration: EmulatorConfiguration, logger: Logger) {
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "device.id"] = "\(configuration.deviceID)"
        self.logger = logger
        self.deviceDescription = EmulatorDeviceDescription(configuration: configuration)
        self.clock = configuration.clock
        self.core = Locked(
            Core(
                device: EmulatedDevice(apps: configuration.apps, settings: EmulatedDevice.Settings(configuration)),
                faults: EmulatorFaults(replyDelay: configuration.replyDelay)
            )
        )
    }

    // MARK: lifecycle

    /// Generates the TLS identity and binds every server. Returns where they listen.
    public func start() async throws -> EmulatorEndpoints {
        try lifecycle.withLock { state in
            guard case .idle = state else {
                throw EmulatorError(.invalidState, "start() may be called once, before shutdown()")
            }
            state = .starting
        }
        let servers: Servers
        let castV2: CastV2Binding
        do {
            // The device identity (three RSA keys, made once per process) before listening:
            // made on a sender's first challenge instead, it spent that sender's connect timeout
            // (over a minute in a sanitizer build on a loaded machine).
            _ = try deviceAuthority()
            (servers, castV2) = try await bindServers()
        } catch {
            lifecycle.withLock { state in
                if case .starting = state { state = .idle }
            }
            throw error
        }
        let stillWanted = lifecycle.withLock { state -> Bool in
            guard case .starting = state else { return false }
            state = .started(servers)
            return true
        }
        guard stillWanted, installFirstListener(castV2, servers: servers) else {
            await servers.close()
            try? await castV2.server.channel.close()
            throw EmulatorError(.invalidState, "shut down while starting")
        }
        logger.info(
            "\(configuration.model) “\(configuration.name)” listening on \(servers.endpoints)",
            metadata: ["device.port": "\(servers.endpoints.port)"]
        )
        return servers.endpoints
    }

    /// Serves until ``shutdown()`` is called or the calling task is cancelled. Starts the
    /// emulator first if ``start()`` has not been called.
    public func run() async throws {
        if case .idle = lifecycle.withLock({ $0 }) {
            _ = try await start()
        }
        let servers = try lifecycle.withLock { state -> Servers? in
            switch state {
            case .started(let servers):
                state = .running
                return servers
            case .shutDown:
                return nil
            case .idle, .starting, .running:
                throw EmulatorError(.invalidState, "run() may be called once, after start()")
            }
        }
        guard let servers else { return }
        defer {
            core.withLock { $0.mediaFetch.stop() }
            runFinished.signal()
        }

        struct ShutdownRequested: Error {}
        do {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await self.serveCastV2Listeners(authentication: servers.castV2.authentication) }
                if let http = servers.http {
                    group.addTask { try await self.serveHTTP(http, scheme: "http") }
                }
                if let https = servers.https {
                    group.addTask { try await self.serveHTTP(https, scheme: "https") }
                }
                group.addTask { await self.runPlaybackClock() }
                group.addTask {
                    await self.shutdownRequested.wait(beyond: 0)
                    throw ShutdownRequested()  // cancels the servers: every channel closes
                }
            }
        } catch is ShutdownRequested {
            // The normal way out.
        } catch is CancellationError {
            // So is cancelling the task that runs the emulator.
        } catch {
            await servers.close()
            await closeCastV2Listener()
            logger.error("emulator stopped: \(error)")
            throw error
        }
        await servers.close()
        await closeCastV2Listener()
        logger.info("emulator stopped")
    }

    /// Stops serving: closes the listeners and every connection, and waits for ``run()`` to
    /// return.
    public func shutdown() async {
        enum Action {
            case none
            case close(Servers)
            case waitForRun
        }
        let action = lifecycle.withLock { state -> Action in
            defer { state = .shutDown }
            switch state {
            case .idle, .starting, .shutDown: return .none
            case .started(let servers): return .close(servers)
            case .running: return .waitForRun
            }
        }
        shutdownRequested.signal()
        let (watchers, endpointWatchers) = core.withLock { core in
            defer {
                core.txtWatchers = [:]
                core.listener.endpointWatchers = [:]
            }
            return (Array(core.txtWatchers.values), Array(core.listener.endpointWatchers.values))
        }
        for watcher in watchers { watcher.finish() }
        for watcher in endpointWatchers { watcher.finish() }
        switch action {
        case .none:
            await closeCastV2Listener()
        case .close(let servers):
            await servers.close()
            await closeCastV2Listener()
        case .waitForRun:
            await runFinished.wait(beyond: 0)
        }
    }

    // MARK: the device's own controls

    /// What the device's own volume buttons (or its remote) do: the device volume changes and
    /// every sender connected to receiver-0 gets an unsolicited RECEIVER_STATUS (requestId 0).
    /// Nil leaves that part as it is. Throws `invalidArgument` for neither, or a level outside
    /// 0…1. A fixed-volume device still changes here: its buttons are not SET_VOLUME.
    public func changeVolumeOnDevice(level: Double? = nil, muted: Bool? = nil) throws {
        var volume: [String: JSONValue] = [:]
        if let level { volume["level"] = .number(level) }
        if let muted { volume["muted"] = .bool(muted) }
        guard let change = VolumeChange(.object(volume)) else {
            throw EmulatorError(.invalidArgument, "give a level from 0 to 1, muted, or both")
        }
        let outcome = transition { $0.changeVolumeOnDevice(change) }
        report(outcome, logger: logger)
    }

    /// What the TV does (its remote, another HDMI source switched to): on a device configured
    /// with ``EmulatorConfiguration/tv``, its state changes and every sender connected to
    /// receiver-0 gets an unsolicited RECEIVER_STATUS. Nil leaves that part as it is. Throws
    /// `invalidState` on a device that reports no TV, `invalidArgument` for neither.
    @discardableResult
    public func changeTV(standBy: Bool? = nil, activeInput: Bool? = nil) throws -> EmulatorTV {
        guard standBy != nil || activeInput != nil else {
            throw EmulatorError(.invalidArgument, "give standBy, activeInput, or both")
        }
        guard configuration.tv != nil else {
            throw EmulatorError(.invalidState, "this device reports no TV (start it with --tv)")
        }
        var after = EmulatorTV()
        let outcome = transition { device in
            defer { after = device.tv ?? after }
            return device.changeTV(standBy: standBy, activeInput: activeInput)
        }
        report(outcome, logger: logger)
        return after
    }

    // MARK: internals

    /// Where the emulator makes its keys and certificates: RSA work that takes seconds in a
    /// debug build, and would hold a thread of the cooperative pool (and so stall every other
    /// task of the process that awaits) for as long.
    static let keyWork = ThreadExecutor(name: "emulator-keys")

    /// The device's TLS identity and what it answers device authentication with.
    func makeIdentity() throws -> (NIOSSLContext, Authentication) {
        let identity = try EmulatorTLSIdentity.generate(
            commonName: configuration.deviceID, lifetime: configuration.certificateLifetime,
            impostor: configuration.impostor
        )
        let tls: NIOSSLContext
        do {
            tls = try identity.makeServerContext()
        } catch {
            throw EmulatorError(.certificate, "cannot configure TLS", cause: error)
        }
        var credentials = try deviceAuthority().issueDeviceCredentials(
            commonName: configuration.deviceID, impostor: configuration.impostor)
        if configuration.impostor == .signatureOverOtherCertificate {
            // Another certificate of the same kind: what a relayed answer would sign.
            credentials.otherTLSCertificateDER = try EmulatorTLSIdentity.generate(
                commonName: configuration.deviceID, lifetime: configuration.certificateLifetime
            ).certificateDER
        }
        let authentication = Authentication(credentials: credentials, tlsCertificateDER: identity.certificateDER)
        return (tls, authentication)
    }

    func bindServers() async throws -> (Servers, CastV2Binding) {
        let (tls, authentication) = try await withTaskExecutorPreference(Self.keyWork) {
            try self.makeIdentity()
        }
        let messageLog = try configuration.logFile.map { try EmulatorMessageLog(path: $0) }
        core.withLock { $0.mediaFetch.log = messageLog }
        let castV2 = CastV2Context(tls: tls, messageLog: messageLog, authentication: authentication)
        var bound: [any Channel] = []
        do {
            let cast = try await bindCastV2(port: configuration.port, context: castV2)
            bound.append(cast.server.channel)
            var http: HTTPServer?
            if let port = configuration.httpPort {
                let server = try await bindHTTP(port: port, tls: nil)
                bound.append(server.channel)
                http = server
            }
            var https: HTTPServer?
            if let port = configuration.httpsPort {
                let server = try await bindHTTP(port: port, tls: tls)
                bound.append(server.channel)
                https = server
            }
            let endpoints = EmulatorEndpoints(
                host: configuration.host,
                port: cast.port,
                httpPort: http.map { $0.channel.localAddress?.port ?? 0 },
                httpsPort: https.map { $0.channel.localAddress?.port ?? 0 }
            )
            return (Servers(castV2: castV2, http: http, https: https, endpoints: endpoints), cast)
        } catch {
            for channel in bound { try? await channel.close() }
            messageLog?.close()
            throw error
        }
    }

    /// Runs a device transition under the lock: delivers its messages in order, tells TXT
    /// watchers when the running app (and so `st`/`rs`) changed, and media fetching of the change.
    func transition(_ body: (inout EmulatedDevice) -> DeviceOutcome) -> DeviceOutcome {
        core.withLock { core in
            let appBefore = core.device.running?.app
            let outcome = body(&core.device)
            core.deliver(outcome.deliveries)
            core.mediaFetch.deviceChanged(core.device, outcome, now: clock.now(), emulator: self)
            let appAfter = core.device.running?.app
            if appAfter != appBefore, !core.txtWatchers.isEmpty {
                let record = deviceDescription.txtRecord(runningApp: appAfter)
                for watcher in core.txtWatchers.values { watcher.yield(record) }
            }
            return outcome
        }
    }

    /// Hands a device outcome to the log and wakes the playback timer if needed.
    func report(_ outcome: DeviceOutcome, logger: Logger) {
        for note in outcome.notes { logger.log(level: note.level, "\(note.message)") }
        if logger.logLevel <= .debug {
            for delivery in outcome.deliveries {
                logger.debug("out #\(delivery.connection): \(delivery.message.summary)")
            }
        }
        if outcome.playbackChanged { playbackChanged.signal() }
    }

    /// Lets the media clock run: wakes when playing media reaches its end (or when playback
    /// changes) and tells the device the time.
    func runPlaybackClock() async {
        while !Task.isCancelled {
            let seen = playbackChanged.generation
            let deadline = core.withLock { $0.device.nextDeadline }
            await withTaskGroup(of: Void.self) { group in
                if let deadline {
                    group.addTask { try? await self.clock.sleep(until: deadline) }
                }
                group.addTask { await self.playbackChanged.wait(beyond: seen) }
                await group.next()
                group.cancelAll()
            }
            if Task.isCancelled { return }
            let now = clock.now()
            let outcome = transition { $0.advance(to: now) }
            report(outcome, logger: logger)
        }
    }
}
