import CastChannel
import CastProtocol
import CastdAPI
import Foundation
import Logging
import Synchronization

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
/// status, the one session castd keeps on it, and that session's media status. Every client's
/// requests for the device come through here, and every change goes out through the hub.
public actor DeviceController {
    nonisolated let id: String
    /// Name and address change with discovery, outside the actor.
    private let info: Mutex<(name: String, endpoint: DeviceEndpoint)>
    private var name: String { info.withLock { $0.name } }
    private var endpoint: DeviceEndpoint { info.withLock { $0.endpoint } }
    private let hub: CastdEventHub
    private let spawn: @Sendable (@escaping @Sendable () async -> Void) -> Void
    private let linkConfiguration: CastLinkConfiguration
    private let logger: Logger

    private enum Phase {
        case idle
        case connecting
        case connected(CastLink)
    }
    private var phase: Phase = .idle
    private var linkWaiters: [CheckedContinuation<CastLink, any Error>] = []
    private var receiver: CastReceiverStatus?
    private var session: CastdSession?
    private var endingReason: String?
    private var mediaInfo: [Int64: CastMediaInformation] = [:]
    private var lastMedia: CastMediaStatus?
    /// Session changes (start, end) run one at a time, in arrival order, so that two clients
    /// starting a session at once share one launch.
    private var sessionChangeBusy = false
    private var sessionChangeQueue: [CheckedContinuation<Void, Never>] = []

    init(
        id: String, name: String, endpoint: DeviceEndpoint, hub: CastdEventHub, linkConfiguration: CastLinkConfiguration,
        logger: Logger, spawn: @escaping @Sendable (@escaping @Sendable () async -> Void) -> Void
    ) {
        self.id = id
        self.info = Mutex((name, endpoint))
        self.hub = hub
        self.linkConfiguration = linkConfiguration
        var logger = logger
        logger[metadataKey: "device.id"] = "\(id)"
        self.logger = logger
        self.spawn = spawn
    }

    nonisolated func update(name: String, endpoint: DeviceEndpoint) {
        info.withLock { $0 = (name, endpoint) }
    }

    // MARK: the link

    /// The connected link, connecting first if needed. Fails with UNAVAILABLE if the device
    /// cannot be reached within the connect timeout.
    private func link() async throws -> CastLink {
        switch phase {
        case .connected(let link):
            return link
        case .connecting:
            break
        case .idle:
            phase = .connecting
            hub.updateDevice(id: id) {
                $0.linkState = .connecting
                $0.linkError = ""
            }
            let endpoint = self.endpoint
            spawn { [self] in await self.runLink(endpoint) }
        }
        return try await withCheckedThrowingContinuation { linkWaiters.append($0) }
    }

    /// Holds the link until it closes. Runs as a child of the registry's task group.
    private nonisolated func runLink(_ endpoint: DeviceEndpoint) async {
        let reason: String
        do {
            reason = try await CastLink.withConnection(
                host: endpoint.host, port: endpoint.port, configuration: linkConfiguration, logger: logger
            ) { link in
                try await self.linkUp(link)
                for await message in link.messages {
                    await self.handle(message, on: link)
                }
                return link.closedReason?.message ?? "the link closed"
            }
        } catch {
            reason = Self.describe(error)
        }
        await linkDown(reason: reason)
    }

    private func linkUp(_ link: CastLink) async throws {
        try await link.connect(to: CastWire.platformReceiverID)
        let reply = try await link.request(namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID) {
            ReceiverRequest.getStatus(requestID: $0)
        }
        phase = .connected(link)
        logger.info("connected", metadata: ["device.address": "\(endpoint)"])
        hub.updateDevice(id: id) {
            $0.linkState = .connected
            $0.linkError = ""
        }
        applyReceiver(CastReceiverStatus(payload: reply))
        let waiters = linkWaiters
        linkWaiters.removeAll()
        for waiter in waiters { waiter.resume(returning: link) }
    }

    private func linkDown(reason: String) {
        let wasConnected: Bool
        if case .connected = phase { wasConnected = true } else { wasConnected = false }
        phase = .idle
        logger.info("link down", metadata: ["reason": "\(reason)"])
        hub.updateDevice(id: id) {
            $0.linkState = wasConnected ? .disconnected : .failed
            $0.linkError = reason
        }
        let waiters = linkWaiters
        linkWaiters.removeAll()
        let error = CastdError(.unavailable, "cannot reach \(name) at \(endpoint): \(reason)")
        for waiter in waiters { waiter.resume(throwing: error) }
        if var session {
            session.state = .suspended
            session.reason = "connection to the device lost: \(reason)"
            self.session = nil
            hub.updateSession(session)
        }
        receiver = nil
    }

    // MARK: what the device says

    private func handle(_ message: CastMessage, on link: CastLink) {
        guard message.payloadType == .string else { return }
        let payload: JSONValue
        do {
            payload = try message.jsonPayload()
        } catch {
            logger.warning(
                "skipped a message the device sent",
                metadata: ["cast.namespace": "\(message.namespace)", "error": "\(error)"])
            return
        }
        let type = CastEnvelope(payload).type
        switch (message.namespace, type) {
        case (CastNamespace.receiver, "RECEIVER_STATUS"):
            applyReceiver(CastReceiverStatus(payload: payload))
        case (CastNamespace.media, "MEDIA_STATUS"):
            guard let session, message.sourceID == session.transportID || message.sourceID == CastWire.platformReceiverID
            else { return }
            applyMedia(CastMediaStatus.entries(in: payload))
        case (CastNamespace.connection, "CLOSE"):
            logger.debug("device closed a virtual connection", metadata: ["cast.source": "\(message.sourceID)"])
        default:
            logger.trace("message", metadata: ["cast.namespace": "\(message.namespace)", "cast.type": "\(type)"])
        }
    }

    private func applyReceiver(_ status: CastReceiverStatus) {
        let changed = status != receiver
        receiver = status
        if changed {
            hub.updateDevice(id: id) {
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
            self.session = nil
            self.endingReason = nil
            hub.updateSession(session)
            clearMedia()
        }
    }

    private func applyMedia(_ entries: [CastMediaStatus]) {
        guard var entry = entries.first else {
            if lastMedia != nil { clearMedia() }
            return
        }
        if let media = entry.media {
            mediaInfo[entry.mediaSessionID] = media
        } else {
            entry.media = mediaInfo[entry.mediaSessionID]
        }
        if entry == lastMedia { return }  // the reply and its broadcast twin
        lastMedia = entry
        hub.updateMedia(CastdMediaStatus(deviceID: id, entry, receivedAt: Date()))
    }

    private func clearMedia() {
        lastMedia = nil
        mediaInfo.removeAll()
        var empty = CastdMediaStatus()
        empty.deviceID = id
        empty.playerState = .idle
        hub.updateMedia(empty)
    }

    // MARK: sessions

    private func refreshReceiver(_ link: CastLink) async throws -> CastReceiverStatus {
        let reply = try await link.request(namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID) {
            ReceiverRequest.getStatus(requestID: $0)
        }
        let status = CastReceiverStatus(payload: reply)
        applyReceiver(status)
        return status
    }

    /// Joins the app if it runs, else launches it. An empty `appID` joins whatever non-idle app
    /// runs, else launches the Default Media Receiver.
    public func startSession(appID: String) async throws -> CastdSession {
        await beginSessionChange()
        defer { endSessionChange() }
        do {
            let link = try await link()
            let status = try await refreshReceiver(link)
            let running = status.applications.first { !$0.isIdleScreen && $0.transportID != nil }
            let wanted = appID.isEmpty ? (running?.appID ?? CastAppID.defaultMediaReceiver) : appID
            if let session, session.appID == wanted { return session }
            if let app = status.application(id: wanted), app.transportID != nil {
                return try await join(app, on: link, joined: true)
            }
            return try await launch(wanted, on: link)
        } catch {
            throw Self.map(error, device: name)
        }
    }

    private func beginSessionChange() async {
        if sessionChangeBusy {
            await withCheckedContinuation { sessionChangeQueue.append($0) }
        } else {
            sessionChangeBusy = true
        }
    }

    private func endSessionChange() {
        if sessionChangeQueue.isEmpty {
            sessionChangeBusy = false
        } else {
            sessionChangeQueue.removeFirst().resume()
        }
    }

    private func launch(_ appID: String, on link: CastLink) async throws -> CastdSession {
        var starting = CastdSession()
        starting.deviceID = id
        starting.deviceName = name
        starting.appID = appID
        starting.state = .starting
        hub.updateSession(starting)
        do {
            let reply = try await link.request(namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID) {
                ReceiverRequest.launch(appID: appID, requestID: $0)
            }
            var status = CastReceiverStatus(payload: reply)
            applyReceiver(status)
            // Some devices answer a LAUNCH before the app is listed; ask again a few times.
            var attempts = 0
            while status.application(id: appID)?.transportID == nil && attempts < 10 {
                attempts += 1
                try await Task.sleep(for: .milliseconds(200))
                status = try await refreshReceiver(link)
            }
            guard let app = status.application(id: appID), app.transportID != nil else {
                throw CastdError(.unavailable, "\(name) accepted the launch of \(appID) but never listed the app")
            }
            return try await join(app, on: link, joined: false)
        } catch {
            starting.state = .startFailed
            starting.reason = Self.map(error, device: name).message
            hub.updateSession(starting)
            throw error
        }
    }

    private func join(_ app: CastApplication, on link: CastLink, joined: Bool) async throws -> CastdSession {
        guard let transport = app.transportID else {
            throw CastdError(.failedPrecondition, "\(app.displayName) on \(name) has no transport to join")
        }
        try await link.connect(to: transport)
        var session = CastdSession()
        session.deviceID = id
        session.deviceName = name
        session.sessionID = app.sessionID
        session.appID = app.appID
        session.displayName = app.displayName
        session.transportID = transport
        session.state = .started
        session.joined = joined
        self.session = session
        hub.updateSession(session)
        if app.declares(namespace: CastNamespace.media) {
            let reply = try await link.request(namespace: CastNamespace.media, destination: transport) {
                MediaRequest.command("GET_STATUS", mediaSessionID: nil, requestID: $0)
            }
            applyMedia(CastMediaStatus.entries(in: reply))
        }
        return self.session ?? session
    }

    /// Leaves the session (the app keeps running) or stops the app.
    public func endSession(stopApp: Bool) async throws -> CastdSession {
        await beginSessionChange()
        defer { endSessionChange() }
        if session == nil && stopApp {
            return try await stopRunningApp()
        }
        guard var session else {
            throw CastdError(.failedPrecondition, "there is no session on \(name)")
        }
        do {
            let link = try await link()
            session.state = .ending
            hub.updateSession(session)
            if stopApp {
                endingReason = "stopped by a castd client"
                let reply = try await link.request(
                    namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
                ) { ReceiverRequest.stop(sessionID: session.sessionID, requestID: $0) }
                applyReceiver(CastReceiverStatus(payload: reply))
            }
            if self.session != nil {
                // Left, or the device did not drop the app yet: either way castd stops following it.
                await link.disconnect(from: session.transportID)
                session.state = .ended
                session.reason = stopApp ? "stopped by a castd client" : "left; the app keeps running on the device"
                self.session = nil
                endingReason = nil
                hub.updateSession(session)
                clearMedia()
            } else {
                session.state = .ended
                session.reason = "stopped by a castd client"
            }
            return session
        } catch {
            endingReason = nil
            throw Self.map(error, device: name)
        }
    }

    /// Stops whatever app runs on the device when castd holds no session there (it left, or
    /// another sender started the app).
    private func stopRunningApp() async throws -> CastdSession {
        do {
            let link = try await link()
            let status = try await refreshReceiver(link)
            guard let app = status.applications.first(where: { !$0.isIdleScreen }) else {
                throw CastdError(.failedPrecondition, "nothing is running on \(name)")
            }
            let reply = try await link.request(namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID) {
                ReceiverRequest.stop(sessionID: app.sessionID, requestID: $0)
            }
            applyReceiver(CastReceiverStatus(payload: reply))
            var ended = CastdSession()
            ended.deviceID = id
            ended.deviceName = name
            ended.sessionID = app.sessionID
            ended.appID = app.appID
            ended.displayName = app.displayName
            ended.transportID = app.transportID ?? ""
            ended.state = .ended
            ended.reason = "stopped by a castd client"
            hub.updateSession(ended)
            return ended
        } catch {
            throw Self.map(error, device: name)
        }
    }

    // MARK: media

    private func mediaSession() async throws -> (CastLink, CastdSession) {
        if let session, receiver?.applications.first(where: { $0.sessionID == session.sessionID })?
            .declares(namespace: CastNamespace.media) ?? false
        {
            return (try await link(), session)
        }
        let session = try await startSession(appID: CastAppID.defaultMediaReceiver)
        return (try await link(), session)
    }

    public func load(_ media: CastMediaInformation, autoplay: Bool, startTime: Double) async throws -> CastdMediaStatus {
        do {
            let (link, session) = try await mediaSession()
            let reply = try await link.request(namespace: CastNamespace.media, destination: session.transportID) {
                MediaRequest.load(media: media, autoplay: autoplay, currentTime: startTime, requestID: $0)
            }
            applyMedia(CastMediaStatus.entries(in: reply))
            return currentMedia()
        } catch {
            throw Self.map(error, device: name)
        }
    }

    /// PLAY, PAUSE or STOP on the loaded media.
    public func mediaCommand(_ type: String) async throws -> CastdMediaStatus {
        try await withLoadedMedia { mediaSessionID, requestID in
            MediaRequest.command(type, mediaSessionID: mediaSessionID, requestID: requestID)
        }
    }

    public func seek(to position: Double, relative: Bool) async throws -> CastdMediaStatus {
        try await withLoadedMedia { mediaSessionID, requestID in
            relative
                ? MediaRequest.seek(mediaSessionID: mediaSessionID, relativeTime: position, requestID: requestID)
                : MediaRequest.seek(mediaSessionID: mediaSessionID, currentTime: position, requestID: requestID)
        }
    }

    /// Sends a request about the loaded media. A stale media session id is answered by
    /// refreshing the status and retrying once.
    private func withLoadedMedia(_ make: @Sendable @escaping (Int64, Int64) -> JSONValue) async throws -> CastdMediaStatus {
        do {
            guard let session, let link = try? await link() else {
                throw CastdError(.failedPrecondition, "there is no session on \(name); load something first (castc load URL)")
            }
            guard let media = lastMedia, media.mediaSessionID != 0 else {
                throw CastdError(.failedPrecondition, "nothing is loaded on \(name); load something first (castc load URL)")
            }
            do {
                let reply = try await link.request(namespace: CastNamespace.media, destination: session.transportID) {
                    make(media.mediaSessionID, $0)
                }
                applyMedia(CastMediaStatus.entries(in: reply))
            } catch let error as CastChannelError where error.deviceError?.reason == "INVALID_MEDIA_SESSION_ID" {
                let status = try await link.request(namespace: CastNamespace.media, destination: session.transportID) {
                    MediaRequest.command("GET_STATUS", mediaSessionID: nil, requestID: $0)
                }
                applyMedia(CastMediaStatus.entries(in: status))
                guard let fresh = lastMedia, fresh.mediaSessionID != 0 else { throw error }
                let reply = try await link.request(namespace: CastNamespace.media, destination: session.transportID) {
                    make(fresh.mediaSessionID, $0)
                }
                applyMedia(CastMediaStatus.entries(in: reply))
            }
            return currentMedia()
        } catch {
            throw Self.map(error, device: name)
        }
    }

    private func currentMedia() -> CastdMediaStatus {
        hub.media(deviceID: id) ?? {
            var empty = CastdMediaStatus()
            empty.deviceID = id
            empty.playerState = .idle
            return empty
        }()
    }

    public func setVolume(level: Double?, muted: Bool?) async throws -> CastdVolume {
        do {
            let link = try await link()
            let reply = try await link.request(namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID) {
                ReceiverRequest.setVolume(level: level, muted: muted, requestID: $0)
            }
            let status = CastReceiverStatus(payload: reply)
            applyReceiver(status)
            return CastdVolume(status.volume ?? CastVolume())
        } catch {
            throw Self.map(error, device: name)
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
                return CastdError(code, "\(device) answered \(deviceError.map { "\($0)" } ?? "an error")")
            }
        case is CancellationError:
            return CastdError(.cancelled, "cancelled")
        default:
            return CastdError(.internal, "\(device): \(error)")
        }
    }
}
