import CastSync
import CastChannel
import CastProtocol
import CastdAPI
import Foundation
import Logging

/// Where a device listens.
public struct DeviceEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Owns everything castd holds for one device: its link (opened on first use), its receiver
/// status, the one session castd keeps on it, that session's media status and custom channels.
/// Every client's requests for the device come through here, and every change goes out through
/// the hub (state) or the channel router (app messages).
///
/// The actor is split by concern: this file holds the link and what the device says;
/// `+Sessions`, `+Media` and `+Channels` hold what clients ask.
public actor DeviceController {
    public nonisolated let id: String
    /// Name and address change with discovery, outside the actor.
    private let info: Locked<(name: String, endpoint: DeviceEndpoint)>
    var name: String { info.withLock { $0.name } }
    var endpoint: DeviceEndpoint { info.withLock { $0.endpoint } }
    let hub: CastdEventHub
    public nonisolated let channels = ChannelRouter()
    private let spawn: @Sendable (@escaping @Sendable () async -> Void) -> Void
    private let linkConfiguration: CastLinkConfiguration
    private let backoff: ReconnectBackoff
    let sessionStore: SessionStore?
    /// The key each device id first authenticated with; nil: no pinning.
    let keyPins: DeviceKeyPins?
    /// Told when castd's session vanished from the device while its media was playing: the
    /// registry looks for it on the other devices (stream transfer).
    let sessionVanished: @Sendable (DeviceController, CastdSession, JSONValue) -> Void
    /// Told when castd stopped holding anything on the device (a link it wants, a session to
    /// rejoin): the registry forgets a device that nothing announces any more.
    let becameIdle: @Sendable (DeviceController) -> Void
    /// The device's lifecycle (CastDevice); `sessionLogger` and `mediaLogger` log what clients
    /// ask of its sessions (CastSession) and media (CastMedia), with the same metadata.
    let logger: Logger
    let sessionLogger: Logger
    let mediaLogger: Logger
    /// Messages the device (or an app on it) sent that castd cannot read: a few logged a minute.
    let badMessageLog = LogThrottle()

    private enum Phase {
        case idle
        case connecting
        case connected(CastLink)
    }
    private var phase: Phase = .idle
    /// Where the attempt in flight holds its place, when a read call started it
    /// (`link(openingWithin:)`): given back when the attempt ends.
    private var attemptPermit: LinkAttemptLimiter?
    /// castd keeps this device's link: once a link has been up, castd reconnects on its own
    /// whenever it drops, until the device leaves mDNS with no session to rejoin.
    private var wantsLink = false
    /// Attempts that failed since the link was lost (the backoff's exponent).
    private var failedRetries = 0
    private var lastAttemptStart: ContinuousClock.Instant?
    private var lostAt: ContinuousClock.Instant?
    /// Whether a link to this device has been up in this castd's life.
    private var everUp = false
    /// How long a suspended session waits for its device before castd gives it up.
    let resumeWindow: Duration
    /// Bumped whenever an attempt starts or is rescheduled: a sleeping retry with an older
    /// generation does nothing when it wakes.
    private var retryGeneration: UInt64 = 0
    /// Requests waiting for the link, by a number each, so a cancelled one can leave.
    private var linkWaiters: [(id: UInt64, continuation: CheckedContinuation<CastLink, any Error>)] = []
    private var nextLinkWaiter: UInt64 = 0
    var receiver: CastReceiverStatus?
    var session: CastdSession?
    /// A session whose link dropped: rejoined when the link is back if its app still runs.
    var suspended: CastdSession?
    var suspendedAt: ContinuousClock.Instant?
    var endingReason: String?
    /// What castd last knew of the loaded media (of the latest media session only: an app that
    /// starts a new media session with every status must not grow castd), and of queue items
    /// (at most ``itemMediaLimit``).
    var mediaJSON: [Int64: JSONValue] = [:]
    var itemMedia: [Int64: JSONValue] = [:]
    /// The most queue items whose media castd keeps; past it, only the items the latest
    /// status names are kept.
    static let itemMediaLimit = 1024
    var lastEntry: JSONValue?
    /// The media status castd last published for this device.
    var lastMediaStatus: CastdMediaStatus?
    /// The last media seen playing, paused or buffering, and when.
    var lastActiveMedia: (media: JSONValue, at: ContinuousClock.Instant)?
    /// The app ids this device said it can or cannot run, until the link drops.
    var availability: [String: Bool] = [:]
    /// The `arrival` of the newest RECEIVER_STATUS and MEDIA_STATUS applied from the current
    /// link (see ``applyReceiver(_:arrival:)``).
    var appliedReceiverArrival: UInt64 = 0
    var appliedMediaArrival: UInt64 = 0
    /// Session changes (start, end) run one at a time, in arrival order, so that two clients
    /// starting a session at once share one launch.
    var sessionChangeBusy = false
    var sessionChangeQueue: [CheckedContinuation<Void, Never>] = []
    /// Requests of a kind where a newer one supersedes an older one still waiting (seek, volume, …).
    var inflight: [String: (token: UInt64, task: Task<CastReply, any Error>)] = [:]
    var replacedTokens: Set<UInt64> = []
    var nextToken: UInt64 = 1

    init(
        id: String, name: String, endpoint: DeviceEndpoint, hub: CastdEventHub,
        linkConfiguration: CastLinkConfiguration,
        backoff: ReconnectBackoff = .init(), resumeWindow: Duration = .seconds(300), sessionStore: SessionStore? = nil,
        keyPins: DeviceKeyPins? = nil,
        sessionVanished: @escaping @Sendable (DeviceController, CastdSession, JSONValue) -> Void = { _, _, _ in },
        becameIdle: @escaping @Sendable (DeviceController) -> Void = { _ in },
        logger: Logger, spawn: @escaping @Sendable (@escaping @Sendable () async -> Void) -> Void
    ) {
        self.id = id
        self.info = Locked((name, endpoint))
        self.hub = hub
        self.linkConfiguration = linkConfiguration
        self.backoff = backoff
        self.resumeWindow = resumeWindow
        self.sessionStore = sessionStore
        self.keyPins = keyPins
        self.sessionVanished = sessionVanished
        self.becameIdle = becameIdle
        var logger = logger
        logger[metadataKey: "device.id"] = "\(id)"
        self.logger = logger.subsystem("CastDevice")
        self.sessionLogger = logger.subsystem("CastSession")
        self.mediaLogger = logger.subsystem("CastMedia")
        self.spawn = spawn
    }

    nonisolated func update(name: String, endpoint: DeviceEndpoint) {
        info.withLock { $0 = (name, endpoint) }
    }

    // MARK: the link

    /// The connected link, connecting first if needed. Fails with UNAVAILABLE if the device
    /// cannot be reached within the connect timeout.
    func link() async throws -> CastLink {
        switch phase {
        case .connected(let link):
            return link
        case .connecting:
            break
        case .idle:
            attemptSoon()
        }
        // A request whose caller gives up (its deadline, a cancelled call, castd stopping) stops
        // waiting at once, rather than when the attempt ends (or never, if it never runs).
        nextLinkWaiter += 1
        let id = nextLinkWaiter
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    linkWaiters.append((id, continuation))
                }
            }
        } onCancel: {
            Task { await self.dropLinkWaiter(id) }
        }
    }

    /// The connected link, for a read call: when castd must open it, the attempt waits for a
    /// place among those read calls may have running at once (`limiter`) and holds it until the
    /// attempt ends, however soon the call gives up. A link that is up, or being opened anyway,
    /// takes no place.
    func link(openingWithin limiter: LinkAttemptLimiter) async throws -> CastLink {
        while true {
            switch phase {
            case .connected(let link):
                return link
            case .connecting:
                return try await link()
            case .idle:
                let gap = remainingGap()
                if gap > .zero {
                    try await Task.sleep(for: gap)
                    continue
                }
                try await limiter.acquire()
                // Things may have moved while this call waited.
                guard case .idle = phase, remainingGap() == .zero else {
                    limiter.release()
                    continue
                }
                startAttempt(permit: limiter)
                return try await link()
            }
        }
    }

    private func dropLinkWaiter(_ id: UInt64) {
        guard let index = linkWaiters.firstIndex(where: { $0.id == id }) else { return }
        linkWaiters.remove(at: index).continuation.resume(throwing: CancellationError())
    }

    /// Connects in the background (a group, to learn its members), without waiting.
    nonisolated func connectSoon() {
        spawn { [self] in _ = try? await self.link() }
    }

    /// Starts an attempt now, or as soon as the last one is a ``ReconnectBackoff/minimumGap``
    /// old: never more than one attempt per second per device, however many reasons to try.
    private func attemptSoon() {
        guard case .idle = phase else { return }
        let gap = remainingGap()
        if gap > .zero {
            scheduleAttempt(after: gap)
        } else {
            startAttempt()
        }
    }

    /// How long until an attempt may start: the rest of the minimum gap since the last one.
    private func remainingGap() -> Duration {
        lastAttemptStart.map { backoff.remainingGap(sinceLastAttempt: ContinuousClock.now - $0) } ?? .zero
    }

    /// Stops waiting to rejoin the suspended session (if any) and tells everyone it ended.
    func endSuspended(reason: String) {
        guard var ended = suspended else { return }
        suspended = nil
        suspendedAt = nil
        ended.state = .ended
        ended.reason = reason
        publish(ended)
        clearMedia()
    }

    private func startAttempt(permit: LinkAttemptLimiter? = nil) {
        retryGeneration += 1  // a retry still sleeping is now moot
        phase = .connecting
        attemptPermit = permit
        lastAttemptStart = .now
        let retrying = failedRetries > 0 || wantsLink
        hub.updateKnownDevice(id: id) {
            $0.linkState = .connecting
            $0.nextRetryAtMs = 0
            if !retrying { $0.linkError = "" }
        }
        let endpoint = self.endpoint
        spawn { [self] in await self.runLink(endpoint) }
    }

    /// Tries again after `delay`, unless something starts an attempt first.
    private func scheduleAttempt(after delay: Duration) {
        retryGeneration += 1
        let generation = retryGeneration
        let at = Date().addingTimeInterval(Double(ReconnectBackoff.milliseconds(delay)) / 1000)
        let attempts = failedRetries
        hub.updateKnownDevice(id: id) {
            $0.linkState = .reconnecting
            $0.nextRetryAtMs = Int64((at.timeIntervalSince1970 * 1000).rounded())
            $0.reconnectAttempts = UInt32(clamping: attempts)
        }
        spawn { [self] in
            do {
                try await Task.sleep(for: delay)
            } catch {
                return  // castd is stopping
            }
            await self.retryFired(generation)
        }
    }

    private func retryFired(_ generation: UInt64) {
        guard generation == retryGeneration, case .idle = phase else { return }
        startAttempt()
    }

    /// mDNS announced the device (again, or at a new address): if castd is waiting to retry,
    /// retry now rather than at the end of the backoff.
    func announced() {
        guard case .idle = phase, wantsLink || suspended != nil else { return }
        logger.debug("announced while disconnected; retrying now")
        attemptSoon()
    }

    /// The device left mDNS. castd keeps trying only while it has a session there to rejoin.
    /// Returns whether castd now holds nothing on it (see ``isIdle``).
    @discardableResult
    func vanished() -> Bool {
        guard suspended == nil, session == nil else { return false }
        wantsLink = false
        guard case .idle = phase else { return false }
        retryGeneration += 1
        failedRetries = 0
        hub.updateKnownDevice(id: id) {
            if $0.linkState == .reconnecting { $0.linkState = .disconnected }
            $0.nextRetryAtMs = 0
        }
        return isIdle
    }

    /// castd holds nothing on the device: no link (nor an attempt, nor a request waiting for
    /// one), no session (live or to rejoin), no link it will open on its own, no client
    /// listening on its channels. A registry may then forget it.
    var isIdle: Bool {
        guard case .idle = phase else { return false }
        return !wantsLink && session == nil && suspended == nil && linkWaiters.isEmpty && !channels.hasListeners
    }

    /// A session saved by a castd that stopped (or was killed): hold it as suspended and connect,
    /// so that `linkUp` rejoins it if the device still runs it, or drops it if not.
    func restore(_ saved: SavedSession) {
        guard session == nil, suspended == nil else { return }
        suspended = saved.suspendedSession
        suspendedAt = .now
        hub.updateSession(saved.suspendedSession)
        wantsLink = true
        attemptSoon()
    }

    /// Holds the link until it closes. Runs as a child of the registry's task group.
    private nonisolated func runLink(_ endpoint: DeviceEndpoint) async {
        let reason: String
        var wasUp = false
        var authenticationRefused = false
        var configuration = linkConfiguration
        configuration.authentication.pinnedKey = keyPins?.key(for: id)
        do {
            reason = try await CastLink.withConnection(
                host: endpoint.host, port: endpoint.port, configuration: configuration, logger: logger
            ) { link in
                try await self.linkUp(link)
                wasUp = true
                for await received in link.messages {
                    await self.handle(received, on: link)
                }
                return link.closedReason?.message ?? "the link closed"
            }
        } catch {
            reason = Self.describe(error)
            authenticationRefused = await recordAuthenticationRefusal(error)
        }
        await linkDown(reason: reason, wasUp: wasUp, authenticationRefused: authenticationRefused)
    }

    private func linkUp(_ link: CastLink) async throws {
        recordAuthentication(link.authentication)
        try await link.connect(to: CastWire.platformReceiverID)
        // A new link counts its messages from 1.
        appliedReceiverArrival = 0
        appliedMediaArrival = 0
        let reply = try await link.requestReply(
            namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
        ) {
            ReceiverRequest.getStatus(requestID: $0)
        }
        phase = .connected(link)
        releaseAttemptPermit()
        let downtime = lostAt.map { ContinuousClock.now - $0 }
        logger.info(
            "connected",
            metadata: [
                "device.address": "\(endpoint)",
                "after": "\(downtime.map { "\($0) down, \(failedRetries) failed retries" } ?? "first connection")",
            ])
        wantsLink = true
        everUp = true
        failedRetries = 0
        lostAt = nil
        hub.updateKnownDevice(id: id) {
            $0.linkState = .connected
            $0.linkError = ""
            $0.nextRetryAtMs = 0
            $0.reconnectAttempts = 0
        }
        let status = applyReceiver(reply)
        if let device = hub.device(id: id), device.isGroup || device.capabilities & 32 != 0 {
            await requestGroupMembers(link)
        }
        if let suspended {
            await resume(suspended, status: status, on: link)
        }
        let waiters = linkWaiters
        linkWaiters.removeAll()
        for waiter in waiters { waiter.continuation.resume(returning: link) }
    }

    private func releaseAttemptPermit() {
        attemptPermit?.release()
        attemptPermit = nil
    }

    private func linkDown(reason: String, wasUp: Bool, authenticationRefused: Bool = false) {
        releaseAttemptPermit()
        let wasConnected: Bool
        if case .connected = phase { wasConnected = true } else { wasConnected = false }
        phase = .idle
        if wasConnected || wasUp {
            lostAt = .now
            failedRetries = 0
        } else if wantsLink || suspended != nil {
            failedRetries += 1
        }
        logger.info("link down", metadata: ["reason": "\(reason)", "failed.retries": "\(failedRetries)"])
        let waiters = linkWaiters
        linkWaiters.removeAll()
        let error = linkFailure(reason: reason, authenticationRefused: authenticationRefused)
        for waiter in waiters { waiter.continuation.resume(throwing: error) }
        if var session {
            session.state = .suspended
            session.reason = "connection to the device lost: \(reason)"
            self.session = nil
            suspended = session
            suspendedAt = .now
            publish(session)
        }
        receiver = nil
        availability.removeAll()
        if authenticationRefused {
            // What answers at this address is not a device castd trusts: no retrying on its own
            // (a client's request or the device's next announcement tries again), and a session
            // waiting for the genuine device is not rejoined through it.
            wantsLink = false
            endSuspended(reason: "castd refused the device: \(reason)")
        }
        var gaveUp = false
        if suspended != nil, let since = suspendedAt, ContinuousClock.now - since > resumeWindow {
            // Long enough: stop holding the session (the app, if it still runs, is untouched).
            endSuspended(
                reason: "\(name) could not be reached for \(Self.wording(of: resumeWindow)); castd gave the session up")
            if !everUp { wantsLink = false }
            gaveUp = true
        }
        if wantsLink || suspended != nil {
            // Retry on our own: within a second of a loss, then backing off.
            let delay = backoff.delay(afterFailures: failedRetries)
            hub.updateKnownDevice(id: id) { $0.linkError = reason }
            scheduleAttempt(after: max(delay, remainingGap()))
        } else {
            hub.updateKnownDevice(id: id) {
                $0.linkState = wasConnected ? .disconnected : .failed
                $0.linkError = reason
            }
        }
        if gaveUp || isIdle { becameIdle(self) }
    }

    /// "5 minutes", "90 seconds", "500 ms": a resume window, as a log line and a session's
    /// reason say it.
    static func wording(of window: Duration) -> String {
        let (seconds, attoseconds) = window.components
        if attoseconds == 0, seconds % 60 == 0, seconds >= 60 {
            return seconds == 60 ? "1 minute" : "\(seconds / 60) minutes"
        }
        if attoseconds == 0 { return seconds == 1 ? "1 second" : "\(seconds) seconds" }
        return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms"
    }

    // MARK: what the device says

    private func handle(_ received: LinkMessage, on link: CastLink) {
        let message = received.message
        guard message.payloadType == .string else { return }
        if !message.namespace.hasPrefix("urn:x-cast:com.google.cast.") {
            deliverAppMessage(message)
            return
        }
        let payload: JSONValue
        do {
            payload = try message.jsonPayload()
        } catch {
            if let metadata = badMessageLog.metadata(["cast.namespace": "\(message.namespace)", "error": "\(error)"]) {
                logger.warning("skipped a message the device sent", metadata: metadata)
            }
            return
        }
        let type = CastEnvelope(payload).type
        switch (message.namespace, type) {
        case (CastNamespace.receiver, "RECEIVER_STATUS"):
            applyReceiver(readReceiverStatus(payload), arrival: received.arrival)
        case (CastNamespace.media, "MEDIA_STATUS"):
            guard let session,
                message.sourceID == session.transportID || message.sourceID == CastWire.platformReceiverID
            else { return }
            applyMedia(payload, arrival: received.arrival)
        case (CastNamespace.multizone, _):
            applyMultizone(payload, type: type)
        case (CastNamespace.connection, "CLOSE"):
            logger.debug("device closed a virtual connection", metadata: ["cast.source": "\(message.sourceID)"])
        default:
            logger.trace("message", metadata: ["cast.namespace": "\(message.namespace)", "cast.type": "\(type)"])
        }
    }

    /// A custom namespace's message from the session's app goes to its listeners; its payload
    /// need not be JSON.
    private func deliverAppMessage(_ message: CastMessage) {
        guard let session, message.sourceID == session.transportID else { return }
        var appMessage = CastdAppMessage()
        appMessage.deviceID = id
        appMessage.namespace = message.namespace
        appMessage.sourceID = message.sourceID
        appMessage.destinationID = message.destinationID
        appMessage.payload = message.payloadUtf8
        appMessage.isJson = (try? JSONValue.parse(message.payloadUtf8)) != nil
        channels.deliver(appMessage)
    }

    /// A RECEIVER_STATUS payload as castd applies it. A field the device sent but that cannot be
    /// read (`applications` that is not an array, a volume level that is not a number) is no
    /// news: it keeps what castd knew, rather than ending the session or showing a volume of 0.
    func readReceiverStatus(_ payload: JSONValue) -> CastReceiverStatus {
        var status = CastReceiverStatus(payload: payload)
        let object = payload["status"].flatMap { $0.objectValue != nil ? $0 : nil } ?? payload
        var unreadable: [String] = []
        if let applications = object["applications"], !applications.isNull, applications.arrayValue == nil {
            unreadable.append("applications")
            status.applications = receiver?.applications ?? []
        }
        if let volume = object["volume"], !volume.isNull {
            if volume.objectValue == nil {
                unreadable.append("volume")
                status.volume = receiver?.volume
            } else if status.volume != nil {
                if let level = volume["level"], !level.isNull, level.doubleValue == nil {
                    unreadable.append("volume.level")
                    status.volume?.level = receiver?.volume?.level
                }
                if let muted = volume["muted"], !muted.isNull, muted.boolValue == nil {
                    unreadable.append("volume.muted")
                    status.volume?.muted = receiver?.volume?.muted
                }
            }
        }
        if !unreadable.isEmpty, badMessageLog.admit() != nil {
            logger.warning(
                "the device's RECEIVER_STATUS has fields that cannot be read; kept what castd knew of them",
                metadata: ["fields": "\(unreadable.joined(separator: ", "))"])
        }
        return status
    }

    /// Applies the RECEIVER_STATUS a reply carries, in its place in the link's order; returns
    /// what the reply says.
    @discardableResult
    func applyReceiver(_ reply: CastReply) -> CastReceiverStatus {
        let status = readReceiverStatus(reply.payload)
        applyReceiver(status, arrival: reply.arrival)
        return status
    }

    /// Applies the MEDIA_STATUS a reply carries, in its place in the link's order.
    func applyMedia(_ reply: CastReply) {
        applyMedia(reply.payload, arrival: reply.arrival)
    }

    /// Applies a RECEIVER_STATUS. With `arrival` (its place in the link's order), one older than
    /// a status already applied is skipped: a reply reaches both its request and the link's
    /// message loop, in either order, and the copy handled late must not undo what came after
    /// it (a reply from before a LAUNCH, applied after it, would end the session it started).
    func applyReceiver(_ status: CastReceiverStatus, arrival: UInt64? = nil) {
        if let arrival {
            guard arrival > appliedReceiverArrival else { return }
            appliedReceiverArrival = arrival
        }
        let changed = status != receiver
        receiver = status
        if changed {
            hub.updateKnownDevice(id: id) {
                $0.receiver = Castd_V1_ReceiverStatus(status)
                let running = status.applications.first(where: { !$0.isIdleScreen })
                $0.statusText = running.map { $0.statusText.isEmpty ? $0.displayName : $0.statusText } ?? ""
                $0.busy = running != nil
            }
        }
        // Did our session's app go away?
        if var session, !status.applications.contains(where: { $0.sessionID == session.sessionID }) {
            session.state = .ended
            if let endingReason {
                session.reason = endingReason
            } else if let other = status.applications.first(where: { !$0.isIdleScreen }) {
                session.reason = "replaced on the device by \(other.displayName)"
            } else {
                session.reason = "the app was stopped on the device"
            }
            let followable = endingReason == nil ? takeActiveMedia() : nil
            self.session = nil
            self.endingReason = nil
            publish(session)
            clearMedia()
            if let followable { sessionVanished(self, session, followable) }
        }
    }

    /// The media information of what was playing, paused or buffering when the app went away,
    /// if anything: the media still active, or active until moments ago (a receiver handing its
    /// session to another device ends the media, IDLE CANCELLED, just before its app stops).
    func takeActiveMedia() -> JSONValue? {
        defer { lastActiveMedia = nil }
        guard let (media, at) = lastActiveMedia, ContinuousClock.now - at < .seconds(5) else { return nil }
        if let state = lastEntry?["playerState"]?.stringValue, state == "IDLE",
            let reason = lastEntry?["idleReason"]?.stringValue, reason == "FINISHED" || reason == "ERROR"
        {
            return nil  // it ended on its own
        }
        return media
    }

    /// Publishes a session change to watchers and to custom-channel listeners.
    func publish(_ session: CastdSession) {
        hub.updateSession(session)
        channels.sessionChanged(self.session)
        saveSession()
    }

    /// Keeps the state file in step: the session castd holds here, or the one it waits to rejoin.
    func saveSession() {
        guard let sessionStore else { return }
        let held = (self.session ?? suspended).flatMap { $0.sessionID.isEmpty ? nil : $0 }
        sessionStore.record(deviceID: id, held.map { SavedSession($0, endpoint: endpoint) })
    }

    // MARK: media status

    /// Applies a MEDIA_STATUS payload (a reply or a broadcast).
    func applyMedia(_ payload: JSONValue, arrival: UInt64? = nil) {
        if let arrival {
            // As for RECEIVER_STATUS (see applyReceiver): newest last, each once.
            guard arrival > appliedMediaArrival else { return }
            appliedMediaArrival = arrival
        }
        guard let entries = Self.mediaEntries(payload["status"]) else {
            // Not "no media session" (that is `[]`): a status castd cannot read says nothing.
            mediaLogger.warning(
                "skipped a MEDIA_STATUS whose status cannot be read",
                metadata: ["status": "\(String((payload["status"]?.jsonString ?? "").prefix(100)))"])
            return
        }
        guard let entry = entries.first, let mediaSessionID = entry["mediaSessionId"]?.intValue else {
            if lastEntry != nil { clearMedia() }
            return
        }
        if entry == lastEntry { return }  // the reply and its broadcast twin
        lastEntry = entry
        let currentItem = entry["currentItemId"]?.intValue
        for item in entry["items"]?.arrayValue ?? [] {
            if let itemID = item["itemId"]?.intValue, let media = item["media"], media.objectValue != nil {
                itemMedia[itemID] = media
            }
        }
        var media: JSONValue?
        if let sent = entry["media"], sent.objectValue != nil {
            media = sent
            if let currentItem { itemMedia[currentItem] = sent }
        } else if let currentItem, let known = itemMedia[currentItem] {
            media = known
        } else {
            media = mediaJSON[mediaSessionID]
        }
        if let media { mediaJSON = [mediaSessionID: media] }
        if itemMedia.count > Self.itemMediaLimit {
            // Item ids that keep changing: keep what this status names (bounded by the frame).
            var named = Set((entry["items"]?.arrayValue ?? []).compactMap { $0["itemId"]?.intValue })
            if let currentItem { named.insert(currentItem) }
            itemMedia = itemMedia.filter { named.contains($0.key) }
        }
        if let media, let state = entry["playerState"]?.stringValue, ["PLAYING", "PAUSED", "BUFFERING"].contains(state)
        {
            lastActiveMedia = (media, .now)
        }
        if entry["playerState"]?.stringValue == "IDLE", entry["idleReason"] != nil, entry["items"] == nil {
            // The media session ended; its items are gone with it.
            itemMedia.removeAll()
        }
        var status = CastdMediaStatus(
            deviceID: id, entry: entry, media: media, itemMedia: itemMedia, receivedAt: Date())
        if let previous = lastMediaStatus, previous.mediaSessionID == status.mediaSessionID {
            keepKnown(of: previous, where: entry, in: &status)
        }
        lastMediaStatus = status
        hub.updateMedia(status)
    }

    /// The entries of a MEDIA_STATUS `status`: `[]` when there is no media session (absent,
    /// null, an empty array, entries without `mediaSessionId`), nil when it cannot be read (a
    /// string or a number, entries whose `mediaSessionId` is not a number).
    static func mediaEntries(_ status: JSONValue?) -> [JSONValue]? {
        func readable(_ entry: JSONValue) -> Bool { entry["mediaSessionId"]?.intValue != nil }
        func unreadable(_ entry: JSONValue) -> Bool { entry.objectValue == nil || entry["mediaSessionId"] != nil }
        switch status {
        case nil, .null?:
            return []
        case .array(let items)?:
            let entries = items.filter(readable)
            return entries.isEmpty && items.contains(where: unreadable) ? nil : entries
        case let object? where object.objectValue != nil:
            return readable(object) ? [object] : (unreadable(object) ? nil : [])
        default:
            return nil
        }
    }

    /// Fields of a MEDIA_STATUS entry that are there but cannot be read (a `currentTime` that is
    /// an object, a volume level that is a word) are no news: `status` keeps what castd last
    /// published for the same media session, rather than a position or a volume of 0.
    private func keepKnown(of previous: CastdMediaStatus, where entry: JSONValue, in status: inout CastdMediaStatus) {
        func unreadableNumber(_ value: JSONValue?) -> Bool {
            guard let value, !value.isNull else { return false }
            return !(value.doubleValue?.isFinite ?? false)
        }
        var kept: [String] = []
        if unreadableNumber(entry["currentTime"]) {
            kept.append("currentTime")
            status.currentTime = previous.currentTime
            status.updatedAtMs = previous.updatedAtMs  // the position as of then, not now
        }
        if unreadableNumber(entry["playbackRate"]) {
            kept.append("playbackRate")
            status.playbackRate = previous.playbackRate
        }
        if let volume = entry["volume"], !volume.isNull {
            if volume.objectValue == nil {
                kept.append("volume")
                status.volume = previous.volume
            } else {
                if unreadableNumber(volume["level"]) {
                    kept.append("volume.level")
                    status.volume.level = previous.volume.level
                }
                if let muted = volume["muted"], !muted.isNull, muted.boolValue == nil {
                    kept.append("volume.muted")
                    status.volume.muted = previous.volume.muted
                }
            }
        }
        if !kept.isEmpty {
            mediaLogger.warning(
                "the device's MEDIA_STATUS has fields that cannot be read; kept what castd knew of them",
                metadata: ["fields": "\(kept.joined(separator: ", "))"])
        }
    }

    func clearMedia() {
        lastEntry = nil
        lastMediaStatus = nil
        mediaJSON.removeAll()
        itemMedia.removeAll()
        var empty = CastdMediaStatus()
        empty.deviceID = id
        empty.playerState = .idle
        hub.updateMedia(empty)
    }

    // MARK: groups

    private func requestGroupMembers(_ link: CastLink) async {
        do {
            let reply = try await link.request(
                namespace: CastNamespace.multizone, destination: CastWire.platformReceiverID
            ) {
                MultizoneRequest.getStatus(requestID: $0)
            }
            applyMultizone(reply, type: CastEnvelope(reply).type)
        } catch {
            logger.info("group did not say who its members are", metadata: ["error": "\(Self.describe(error))"])
        }
    }

    /// MULTIZONE_STATUS lists a group's members; DEVICE_ADDED / DEVICE_UPDATED / DEVICE_REMOVED
    /// change one.
    private func applyMultizone(_ payload: JSONValue, type: String) {
        let member = Self.groupMember
        switch type {
        case "MULTIZONE_STATUS":
            let members = (payload["status"]?["devices"]?.arrayValue ?? []).compactMap(member)
            hub.updateKnownDevice(id: id) {
                $0.groupMembers = members
                $0.isGroup = true
            }
        case "DEVICE_ADDED", "DEVICE_UPDATED":
            guard let changed = payload["device"].flatMap(member) else { return }
            hub.updateKnownDevice(id: id) { device in
                if let index = device.groupMembers.firstIndex(where: { $0.deviceID == changed.deviceID }) {
                    device.groupMembers[index] = changed
                } else {
                    device.groupMembers.append(changed)
                }
            }
        case "DEVICE_REMOVED":
            guard let removed = payload["deviceId"]?.stringValue else { return }
            hub.updateKnownDevice(id: id) { $0.groupMembers.removeAll { $0.deviceID == removed } }
        default:
            break
        }
    }

    /// One member of a group, as MULTIZONE_STATUS and DEVICE_ADDED / DEVICE_UPDATED describe it;
    /// nil without a device id.
    package static func groupMember(_ json: JSONValue) -> Castd_V1_GroupMember? {
        guard let id = json["deviceId"]?.stringValue, !id.isEmpty else { return nil }
        var m = Castd_V1_GroupMember()
        m.deviceID = id
        m.name = json["name"]?.stringValue ?? ""
        m.capabilities = json["capabilities"]?.intValue.map { UInt32(clamping: max(0, $0)) } ?? 0
        return m
    }

    // MARK: requests

    /// A request to the platform receiver.
    func receiverRequest(_ link: CastLink, _ make: @Sendable (Int64) -> JSONValue) async throws -> CastReply {
        try await link.requestReply(namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID, make)
    }

    /// Sends a request of `kind`, superseding any request of the same kind still waiting for
    /// its answer: that one's caller gets ABORTED (REPLACED), while the device's answer to it,
    /// like every status, still reaches every watcher.
    func replacing(
        _ kind: String, on link: CastLink, namespace: String, destination: String,
        _ make: @escaping @Sendable (Int64) -> JSONValue
    ) async throws -> CastReply {
        let token = nextToken
        nextToken += 1
        if let previous = inflight[kind] {
            replacedTokens.insert(previous.token)
            previous.task.cancel()
        }
        let task = Task { try await link.requestReply(namespace: namespace, destination: destination, make) }
        inflight[kind] = (token, task)
        defer {
            if inflight[kind]?.token == token { inflight[kind] = nil }
            // A request superseded after its answer had come in (the cancel too late) returns
            // that answer, not ABORTED: its token must not stay behind for castd's life.
            replacedTokens.remove(token)
        }
        do {
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        } catch {
            if replacedTokens.remove(token) != nil {
                throw CastdError.replaced("superseded by a newer \(kind) request before \(name) answered")
            }
            throw error
        }
    }

    // MARK: errors

    static func describe(_ error: any Error) -> String {
        if let error = error as? CastChannelError { return error.message }
        if let error = error as? CastdError { return error.message }
        return "\(error)"
    }

    /// Maps device-side failures to castd.v1 status codes, naming the device.
    static func map(_ error: any Error, device: String) -> CastdError {
        switch error {
        case let error as CastdError:
            return error
        case let error as CastChannelError:
            switch error.code {
            case .connectFailed, .closed:
                return CastdError(.unavailable, "\(device): \(error.message)")
            case .authenticationFailed:
                return CastdError(.failedPrecondition, "\(device): \(error.message)")
            case .timedOut:
                return CastdError(.deadlineExceeded, "\(device): \(error.message)")
            case .invalidRequest:
                return CastdError(.invalidArgument, error.message)
            case .deviceError:
                let deviceError = error.deviceError
                let code: CastdCode
                switch deviceError?.type {
                case "INVALID_REQUEST": code = .invalidArgument
                case "LOAD_CANCELLED": code = .aborted
                case "LAUNCH_ERROR" where deviceError?.reason == "NOT_FOUND": code = .notFound
                default: code = .failedPrecondition
                }
                var details = Castd_V1_DeviceError()
                details.type = deviceError?.type ?? ""
                details.reason = deviceError?.reason ?? ""
                details.detail = deviceError?.detail ?? ""
                return CastdError(
                    code, "\(device) answered \(deviceError.map { "\($0)" } ?? "an error")",
                    reason: CastdError.Reason.deviceError, deviceError: details)
            }
        case is CancellationError:
            return CastdError(.cancelled, "cancelled")
        default:
            return CastdError(.internal, "\(device): \(error)")
        }
    }
}
