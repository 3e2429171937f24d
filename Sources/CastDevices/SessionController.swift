import CastProtocol
import CastSenderLink
import CastdAPI
import CastdSupport
import Foundation
import Logging

/// The one session castd keeps on a device (the sender SDK's CastSession): started by joining
/// or launching an app, ended by a client or by the device (its app gone from a
/// RECEIVER_STATUS), suspended while the link is down and resumed when it is back, given up when
/// the device stays away too long, and adopted where another device's session moved. It sends
/// the platform receiver's requests through `ReceiverController`, asks a new session's media
/// status through `MediaController`, and publishes each change to watchers, custom-channel
/// listeners and the state file.
///
/// The device's controller owns it, keeps the link and hands it in; its isolation guards this
/// object (the async methods run on the controller's executor, `nonisolated(nonsending)`).
/// Session changes (start, end, adopting a transfer) take turns in arrival order
/// (``beginChange()``), so that two clients starting a session at once share one launch.
final class SessionController {
    /// The session castd holds on the device.
    private(set) var session: CastdSession?
    /// A session whose link dropped: rejoined when the link is back if its app still runs.
    private(set) var suspended: CastdSession?
    private var suspendedAt: ContinuousClock.Instant?
    /// Why castd's session ends while castd ends it (the device's answer to a STOP must not
    /// read as another app replacing it).
    private var endingReason: String?
    /// How long a suspended session waits for its device before castd gives it up.
    private let resumeWindow: Duration
    private var changeBusy = false
    private var changeQueue: [CheckedContinuation<Void, Never>] = []

    private let receiver: ReceiverController
    private let media: MediaController
    private let deviceID: String
    private let info: Locked<(name: String, endpoint: DeviceEndpoint)>
    private let store: CastdStateStore
    private let channels: NamespaceListeners
    private let sessionStore: SessionStore?
    /// Told when castd's session vanished from the device while its media was playing (the
    /// registry looks for it on the other devices: stream transfer).
    private let vanished: @Sendable (CastdSession, CastMediaInformation) -> Void
    /// CastSession: what clients ask of the device's sessions.
    let logger: Logger

    init(
        deviceID: String, info: Locked<(name: String, endpoint: DeviceEndpoint)>, receiver: ReceiverController,
        media: MediaController, store: CastdStateStore, channels: NamespaceListeners, sessionStore: SessionStore?,
        resumeWindow: Duration, vanished: @escaping @Sendable (CastdSession, CastMediaInformation) -> Void,
        logger: Logger
    ) {
        self.deviceID = deviceID
        self.info = info
        self.receiver = receiver
        self.media = media
        self.store = store
        self.channels = channels
        self.sessionStore = sessionStore
        self.resumeWindow = resumeWindow
        self.vanished = vanished
        self.logger = logger
        receiver.statusApplied = { [unowned self] in self.receiverSaid($0) }
    }

    private var name: String { info.withLock { $0.name } }

    /// castd holds no session here, live or to rejoin.
    var holdsNone: Bool { session == nil && suspended == nil }

    // MARK: turns

    /// Waits for the session changes that came first.
    nonisolated(nonsending) func beginChange() async {
        if changeBusy {
            await withCheckedContinuation { changeQueue.append($0) }
        } else {
            changeBusy = true
        }
    }

    /// Lets the next session change go.
    func endChange() {
        if changeQueue.isEmpty {
            changeBusy = false
        } else {
            changeQueue.removeFirst().resume()
        }
    }

    // MARK: starting

    /// Joins the app if it runs, else launches it (or as `request.mode` says). An empty app id
    /// joins whatever non-idle app runs, else launches the Default Media Receiver.
    nonisolated(nonsending) func start(_ request: SessionRequest, on link: CastLink) async throws -> CastdSession {
        do {
            let status = try await receiver.getStatus(on: link)
            let running = status.applications.first { !$0.isIdleScreen && $0.transportID != nil }
            let wanted = request.appID.isEmpty ? (running?.appID ?? CastAppID.defaultMediaReceiver) : request.appID
            let app = status.application(id: wanted).flatMap { $0.transportID == nil ? nil : $0 }
            switch request.mode {
            case .join:
                guard let app else {
                    throw CastdError(
                        .notFound,
                        "\(wanted) is not running on \(name); nothing to join (castc launch \(wanted) starts it)")
                }
                try await sendCredentials(request.launch, to: app, on: link)
                if var session, session.sessionID == app.sessionID {
                    // This call joined what castd already held: nothing was launched for it.
                    session.joined = true
                    return session
                }
                return try await join(app, on: link, state: .started, joined: true)
            case .launch:
                if let app {
                    // Relaunch: stop the running instance, then launch afresh.
                    let reason = "relaunched by a castd client"
                    endingReason = reason
                    _ = try await receiver.stop(sessionID: app.sessionID, on: link)
                    if let session, session.sessionID == app.sessionID { close(session, reason: reason) }
                    endingReason = nil
                }
                return try await launch(wanted, options: request.launch, on: link)
            default:
                if let app { try await sendCredentials(request.launch, to: app, on: link) }
                if var session, session.appID == wanted {
                    session.joined = true  // as for .join: this call launched nothing
                    return session
                }
                if let app { return try await join(app, on: link, state: .started, joined: true) }
                return try await launch(wanted, options: request.launch, on: link)
            }
        } catch {
            endingReason = nil
            throw error
        }
    }

    /// Hands launch credentials to an app that already runs, as the sender SDK does when it
    /// joins: a LAUNCH of the running app with its `launchCheckerParams`, which the device answers
    /// with the same session (the app is not restarted) and passes to the app as a launch-or-join
    /// request (Cast Connect's `CastLaunchRequest`). Nothing is sent without credentials.
    private nonisolated(nonsending) func sendCredentials(
        _ options: CastdLaunchOptions, to app: CastApplication, on link: CastLink
    ) async throws {
        guard !options.credentials.isEmpty else { return }
        logger.debug("handing credentials to the running app", metadata: ["app": "\(app.appID)"])
        _ = try await receiver.launch(app.appID, options: options, on: link)
    }

    private nonisolated(nonsending) func launch(
        _ appID: String, options: CastdLaunchOptions, on link: CastLink
    ) async throws -> CastdSession {
        var starting = CastdSession()
        starting.deviceID = deviceID
        starting.deviceName = name
        starting.appID = appID
        starting.state = .starting
        publish(starting)
        logger.debug("launching", metadata: ["app": "\(appID)"])
        do {
            var status = try await receiver.launch(appID, options: options, on: link)
            // Some devices answer a LAUNCH before the app is listed; ask again a few times.
            var attempts = 0
            while status.application(id: appID)?.transportID == nil && attempts < 10 {
                attempts += 1
                try await Task.sleep(for: .milliseconds(200))
                status = try await receiver.getStatus(on: link)
            }
            guard let app = status.application(id: appID), app.transportID != nil else {
                throw CastdError(.unavailable, "\(name) accepted the launch of \(appID) but never listed the app")
            }
            return try await join(app, on: link, state: .started, joined: false)
        } catch {
            starting.state = .startFailed
            starting.reason = DeviceFailure.castdError(error, device: name, ask: .launch(appID: appID)).message
            publish(starting)
            logger.notice("launch failed", metadata: ["app": "\(appID)", "reason": "\(starting.reason)"])
            throw error
        }
    }

    private nonisolated(nonsending) func join(
        _ app: CastApplication, on link: CastLink, state: Castd_V1_SessionState, joined: Bool
    ) async throws -> CastdSession {
        guard let transport = app.transportID else {
            throw CastdError(.failedPrecondition, "\(app.displayName) on \(name) has no transport to join")
        }
        try await link.connect(to: transport)
        var session = CastdSession(deviceID: deviceID, deviceName: name, app: app, state: state)
        session.joined = joined
        self.session = session
        suspended = nil
        // The media status first, so that a client acting on "started" or "resumed" finds
        // what plays (a pause right after "resumed" must not meet "nothing is loaded").
        var mediaError: (any Error)?
        if app.declares(namespace: CastNamespace.media) {
            do {
                media.receive(try await media.getStatus(at: AppEndpoint(link: link, transportID: transport)))
            } catch {
                mediaError = error
            }
        }
        let published = self.session ?? session
        publish(published)
        logger.info(
            state == .resumed ? "session resumed" : joined ? "joined the app's session" : "session started",
            metadata: ["session": "\(published.sessionID)", "app": "\(app.appID)"])
        if let mediaError { throw mediaError }
        return published
    }

    // MARK: ending

    /// Leaves the session (the app keeps running) or stops its app.
    nonisolated(nonsending) func end(stopApp: Bool, on link: CastLink) async throws -> CastdSession {
        guard var session else {
            throw CastdError(.failedPrecondition, "there is no session on \(name)")
        }
        do {
            session.state = .ending
            store.updateSession(session)
            if stopApp {
                endingReason = "stopped by a castd client"
                _ = try await receiver.stop(sessionID: session.sessionID, on: link)
            }
            guard self.session != nil else {
                // The device's answer to the STOP ended it already.
                session.state = .ended
                session.reason = "stopped by a castd client"
                return session
            }
            // Left, or the device did not drop the app yet: either way castd stops following it.
            await link.disconnect(from: session.transportID)
            let ended = close(
                session, reason: stopApp ? "stopped by a castd client" : "left; the app keeps running on the device")
            logger.info("session ended", metadata: ["session": "\(ended.sessionID)", "reason": "\(ended.reason)"])
            return ended
        } catch {
            endingReason = nil
            throw error
        }
    }

    /// Stops whatever app runs on the device when castd holds no session there (it left, or
    /// another sender started the app).
    nonisolated(nonsending) func stopRunningApp(on link: CastLink) async throws -> CastdSession {
        let status = try await receiver.getStatus(on: link)
        guard let app = status.applications.first(where: { !$0.isIdleScreen }) else {
            throw CastdError(.failedPrecondition, "nothing is running on \(name)")
        }
        _ = try await receiver.stop(sessionID: app.sessionID, on: link)
        var ended = CastdSession(deviceID: deviceID, deviceName: name, app: app, state: .ended)
        ended.reason = "stopped by a castd client"
        store.updateSession(ended)
        return ended
    }

    /// castd's session ends: everyone is told why, and what it played is forgotten.
    @discardableResult
    private func close(_ session: CastdSession, reason: String) -> CastdSession {
        var ended = session
        ended.state = .ended
        ended.reason = reason
        self.session = nil
        endingReason = nil
        publish(ended)
        media.clear()
        return ended
    }

    /// What a RECEIVER_STATUS the receiver controller applied means for castd's session: if its
    /// app is gone from the device, the session ended (and if it was playing, it may have moved
    /// to another device).
    private func receiverSaid(_ status: CastReceiverStatus) {
        guard let session, !status.applications.contains(where: { $0.sessionID == session.sessionID }) else {
            return
        }
        let reason: String
        if let endingReason {
            reason = endingReason
        } else if let other = status.applications.first(where: { !$0.isIdleScreen }) {
            reason = "replaced on the device by \(other.displayName)"
        } else {
            reason = "the app was stopped on the device"
        }
        let followable = endingReason == nil ? media.takeActiveMedia() : nil
        let ended = close(session, reason: reason)
        if let followable { vanished(ended, followable) }
    }

    // MARK: the link

    /// The link dropped: the session waits to be resumed.
    func linkLost(reason: String) {
        guard var session else { return }
        session.state = .suspended
        session.reason = "connection to the device lost: \(reason)"
        self.session = nil
        suspended = session
        suspendedAt = .now
        publish(session)
    }

    /// The link is back after it dropped under a session: rejoin the same session if its app
    /// still runs (no relaunch, playback untouched), else tell everyone it ended.
    nonisolated(nonsending) func resume(status: CastReceiverStatus, on link: CastLink) async {
        guard let suspended else { return }
        var resuming = suspended
        resuming.state = .resuming
        resuming.reason = ""
        store.updateSession(resuming)
        if let app = status.applications.first(where: { $0.sessionID == suspended.sessionID }), app.transportID != nil {
            do {
                _ = try await join(app, on: link, state: .resumed, joined: suspended.joined)
                return
            } catch {
                logger.warning("could not rejoin the session", metadata: ["error": "\(DeviceFailure.describe(error))"])
            }
        }
        endSuspended(reason: "the app stopped while castd was disconnected from \(name)")
    }

    /// Gives the suspended session up if it waited longer than the resume window (the app, if it
    /// still runs, is untouched); returns whether it did.
    func giveUpIfOverdue() -> Bool {
        guard suspended != nil, let since = suspendedAt, ContinuousClock.now - since > resumeWindow else {
            return false
        }
        endSuspended(
            reason: "\(name) could not be reached for \(Self.wording(of: resumeWindow)); castd gave the session up")
        return true
    }

    /// Stops waiting to rejoin the suspended session (if any) and tells everyone it could not
    /// be resumed, and why.
    func endSuspended(reason: String) {
        guard var ended = suspended else { return }
        suspended = nil
        suspendedAt = nil
        ended.state = .resumeFailed
        ended.reason = reason
        publish(ended)
        media.clear()
    }

    /// A session saved by a castd that stopped (or was killed), held as suspended until the
    /// link is up; returns whether castd took it (it holds nothing here yet).
    func restore(_ saved: SavedSession) -> Bool {
        guard holdsNone else { return false }
        suspended = saved.suspendedSession
        suspendedAt = .now
        store.updateSession(saved.suspendedSession)
        return true
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

    // MARK: stream transfer

    /// Whether this device now runs `appID` playing `media` (what castd's session on another
    /// device was playing when it vanished there); if so castd joins it, without disturbing
    /// it, as the session that moved here. Nil when this device has nothing of the kind.
    nonisolated(nonsending) func adopt(
        appID: String, media wanted: CastMediaInformation, from source: String, on link: CastLink
    ) async throws -> CastdSession? {
        let status = try await receiver.getStatus(on: link)
        guard let app = status.application(id: appID), let transport = app.transportID,
            app.declares(namespace: CastNamespace.media)
        else { return nil }
        try await link.connect(to: transport)
        let reply = try await media.getStatus(at: AppEndpoint(link: link, transportID: transport))
        guard let here = CastMediaStatus.entries(in: reply.payload).first?.media, here.namesSameContent(as: wanted)
        else {
            await link.disconnect(from: transport)
            return nil
        }
        var session = CastdSession(deviceID: deviceID, deviceName: name, app: app, state: .started)
        session.joined = true
        session.transferredFromDeviceID = source
        self.session = session
        publish(session)
        media.receive(reply)
        logger.info(
            "followed a session transferred here", metadata: ["from": "\(source)", "session": "\(session.sessionID)"])
        return session
    }

    // MARK: publishing

    /// Publishes a session change to watchers and to custom-channel listeners, and keeps the
    /// state file in step.
    private func publish(_ changed: CastdSession) {
        store.updateSession(changed)
        channels.sessionChanged(session)
        save()
    }

    /// Keeps the state file in step: the session castd holds here, or the one it waits to rejoin.
    private func save() {
        guard let sessionStore else { return }
        let held = (session ?? suspended).flatMap { $0.sessionID.isEmpty ? nil : $0 }
        sessionStore.record(deviceID: deviceID, held.map { SavedSession($0, endpoint: info.withLock { $0.endpoint }) })
    }
}
