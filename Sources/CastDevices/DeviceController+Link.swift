import CastSenderLink
import CastProtocol
import CastdAPI
import Foundation

/// The device's link: opened on first use, kept while castd holds anything there, retried with
/// backoff when it drops; a session rejoined when it is back.
extension DeviceController {
    // MARK: the link

    /// The connected link, connecting first if needed. Fails with UNAVAILABLE if the device
    /// cannot be reached within the connect timeout.
    package func link() async throws -> CastLink {
        switch keeper.phase {
        case .connected(let link):
            return link
        case .connecting:
            break
        case .idle:
            attemptSoon()
        }
        // A request whose caller gives up (its deadline, a cancelled call, castd stopping) stops
        // waiting at once, rather than when the attempt ends (or never, if it never runs).
        let id = keeper.nextWaiterID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    keeper.wait(id, continuation)
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
            switch keeper.phase {
            case .connected(let link):
                return link
            case .connecting:
                return try await link()
            case .idle:
                let gap = keeper.remainingGap()
                if gap > .zero {
                    try await Task.sleep(for: gap)
                    continue
                }
                try await limiter.acquire()
                // Things may have moved while this call waited.
                guard keeper.isIdle, keeper.remainingGap() == .zero else {
                    limiter.release()
                    continue
                }
                startAttempt(permit: limiter)
                return try await link()
            }
        }
    }

    func dropLinkWaiter(_ id: UInt64) {
        keeper.removeWaiter(id)?.resume(throwing: CancellationError())
    }

    /// Connects in the background (a group, to learn its members), without waiting.
    nonisolated func connectSoon() {
        spawn { [self] in _ = try? await self.link() }
    }

    /// Starts an attempt now, or as soon as the last one is a ``ReconnectBackoff/minimumGap``
    /// old: never more than one attempt per second per device, however many reasons to try.
    func attemptSoon() {
        guard keeper.isIdle else { return }
        let gap = keeper.remainingGap()
        if gap > .zero {
            scheduleAttempt(after: gap)
        } else {
            startAttempt()
        }
    }

    func startAttempt(permit: LinkAttemptLimiter? = nil) {
        let retrying = keeper.startAttempt(permit: permit)
        store.updateKnownDevice(id: id) {
            $0.linkState = .connecting
            $0.nextRetryAtMs = 0
            if !retrying { $0.linkError = "" }
        }
        let endpoint = self.endpoint
        spawn { [self] in await self.runLink(endpoint) }
    }

    /// Tries again after `delay`, unless something starts an attempt first.
    func scheduleAttempt(after delay: Duration) {
        let generation = keeper.scheduleRetry()
        let at = Date().addingTimeInterval(Double(ReconnectBackoff.milliseconds(delay)) / 1000)
        let attempts = keeper.failedRetries
        store.updateKnownDevice(id: id) {
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

    func retryFired(_ generation: UInt64) {
        guard keeper.retryIsDue(generation) else { return }
        startAttempt()
    }

    /// mDNS announced the device (again, or at a new address): if castd is waiting to retry,
    /// retry now rather than at the end of the backoff.
    func announced() {
        guard keeper.isIdle, keeper.wantsLink || sessions.suspended != nil else { return }
        logger.debug("announced while disconnected; retrying now")
        attemptSoon()
    }

    /// The device left mDNS. castd keeps trying only while it has a session there to rejoin.
    /// Returns whether castd now holds nothing on it (see ``isIdle``).
    @discardableResult
    func vanished() -> Bool {
        guard sessions.holdsNone else { return false }
        keeper.wantsLink = false
        guard keeper.isIdle else { return false }
        keeper.callOffRetries()
        store.updateKnownDevice(id: id) {
            if $0.linkState == .reconnecting { $0.linkState = .disconnected }
            $0.nextRetryAtMs = 0
        }
        return isIdle
    }

    /// castd holds nothing on the device: no link (nor an attempt, nor a request waiting for
    /// one), no session (live or to rejoin), no link it will open on its own, no client
    /// listening on its channels. A registry may then forget it.
    var isIdle: Bool {
        keeper.isIdle && !keeper.wantsLink && sessions.holdsNone && !keeper.hasWaiters && !channels.hasListeners
    }

    /// A session saved by a castd that stopped (or was killed): hold it as suspended and connect,
    /// so that `linkUp` rejoins it if the device still runs it, or drops it if not.
    func restore(_ saved: SavedSession) {
        guard sessions.restore(saved) else { return }
        keeper.wantsLink = true
        attemptSoon()
    }

    /// Holds the link until it closes. Runs as a child of the registry's task group.
    nonisolated func runLink(_ endpoint: DeviceEndpoint) async {
        let reason: String
        var wasUp = false
        var authenticationRefused = false
        var configuration = linkConfiguration
        configuration.authentication.pinnedKey = trust.pinnedKey
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
            reason = DeviceFailure.describe(error)
            authenticationRefused = trust.recordRefusal(error)
        }
        await linkDown(reason: reason, wasUp: wasUp, authenticationRefused: authenticationRefused)
    }

    func linkUp(_ link: CastLink) async throws {
        trust.record(link.authentication)
        try await link.connect(to: CastWire.platformReceiverID)
        // A new link counts its messages from 1.
        receiver.linkChanged()
        media.linkChanged()
        let reply = try await receiver.firstStatus(on: link)
        let (downtime, failedRetries) = keeper.up(link)
        logger.info(
            "connected",
            metadata: [
                "device.address": "\(endpoint)",
                "after": "\(downtime.map { "\($0) down, \(failedRetries) failed retries" } ?? "first connection")",
            ])
        store.updateKnownDevice(id: id) {
            $0.linkState = .connected
            $0.linkError = ""
            $0.nextRetryAtMs = 0
            $0.reconnectAttempts = 0
        }
        linkCameUp(self)
        let status = receiver.receive(reply.payload, arrival: reply.arrival)
        if let device = store.device(id: id), device.isGroup || device.capabilities & 32 != 0 {
            await multizone.askMembers(on: link)
        }
        await sessions.resume(status: status, on: link)
        askQueueOrderIfWanted()
        for waiter in keeper.takeWaiters() { waiter.resume(returning: link) }
    }

    func linkDown(reason: String, wasUp: Bool, authenticationRefused: Bool = false) {
        let wasConnected = keeper.down(wasUp: wasUp, holdsSession: sessions.suspended != nil)
        logger.info("link down", metadata: ["reason": "\(reason)", "failed.retries": "\(keeper.failedRetries)"])
        let error = DeviceTrust.linkFailure(
            reason: reason, refused: authenticationRefused, device: name, at: endpoint)
        for waiter in keeper.takeWaiters() { waiter.resume(throwing: error) }
        sessions.linkLost(reason: reason)
        receiver.linkLost()
        if authenticationRefused {
            // What answers at this address is not a device castd trusts: no retrying on its own
            // (a client's request or the device's next announcement tries again), and a session
            // waiting for the genuine device is not rejoined through it.
            keeper.wantsLink = false
            sessions.endSuspended(reason: "castd refused the device: \(reason)")
        }
        let gaveUp = sessions.giveUpIfOverdue()
        if gaveUp, !keeper.everUp { keeper.wantsLink = false }
        if keeper.wantsLink || sessions.suspended != nil {
            store.updateKnownDevice(id: id) { $0.linkError = reason }
            scheduleAttempt(after: keeper.retryDelay())
        } else {
            store.updateKnownDevice(id: id) {
                $0.linkState = wasConnected ? .disconnected : .failed
                $0.linkError = reason
            }
        }
        if gaveUp || isIdle { becameIdle(self) }
    }
}
