import CastSenderLink
import CastProtocol
import CastdAPI
import Foundation

/// How a client asks for a session: which app, join or launch, and the launch options.
public struct SessionRequest: Sendable {
    public var appID: String
    public var mode: Castd_V1_StartMode
    public var launch: CastdLaunchOptions

    public init(appID: String = "", mode: Castd_V1_StartMode = .joinOrLaunch, launch: CastdLaunchOptions = .init()) {
        self.appID = appID
        self.mode = mode
        self.launch = launch
    }
}

/// What castd launches when a client does not say (castd.toml's `[launch]`, or castd's
/// `--launch-*` flags): the receiver app, its launch options, and whether a running instance is
/// joined or launched again.
public struct LaunchDefaults: Sendable, Equatable {
    /// The app a session without an app id starts or joins, and the one a LOAD starts when the
    /// session has no media player. Nil: a session without an app id joins whatever app runs
    /// (else launches the Default Media Receiver), and a LOAD starts the Default Media Receiver.
    public var appID: String?
    /// Launch options for those sessions; a client's own options win field by field.
    public var options: CastdLaunchOptions
    /// Launch the default app again when it already runs (the SDK's relaunch-if-running policy),
    /// instead of joining it.
    public var relaunch: Bool
    /// List only the devices that can run the default app (the SDK's discovery criterion), unless
    /// a client asks otherwise.
    public var filterDevices: Bool

    public init(
        appID: String? = nil, options: CastdLaunchOptions = .init(), relaunch: Bool = false, filterDevices: Bool = false
    ) {
        self.appID = appID
        self.options = options
        self.relaunch = relaunch
        self.filterDevices = filterDevices
    }

    /// The app devices must be able to run to be listed, or nil when castd lists every device.
    public var deviceCriterion: String? { filterDevices ? appID : nil }

    /// `request` with the defaults filled in: the default app for a request that names none,
    /// with the relaunch policy, and the default language and Android TV compatibility where the
    /// request leaves them out. Credentials are never defaulted: they are a user's, per call.
    public func applied(to request: SessionRequest) -> SessionRequest {
        var request = request
        if request.appID.isEmpty, let appID {
            request.appID = appID
            if request.mode == .joinOrLaunch, relaunch { request.mode = .launch }
        }
        if request.launch.language.isEmpty { request.launch.language = options.language }
        if options.androidTv { request.launch.androidTv = true }
        return request
    }

    /// What a LOAD starts when the session has no media player.
    var mediaSession: SessionRequest {
        applied(to: SessionRequest(appID: appID ?? CastAppID.defaultMediaReceiver))
    }
}

extension DeviceController {
    func refreshReceiver(_ link: CastLink) async throws -> CastReceiverStatus {
        let reply = try await receiverRequest(link) { ReceiverRequest.getStatus(requestID: $0) }
        let status = applyReceiver(reply)
        return status
    }

    /// Joins the app if it runs, else launches it (or as `request.mode` says). An empty app id
    /// joins whatever non-idle app runs, else launches the Default Media Receiver.
    public func startSession(_ request: SessionRequest) async throws -> CastdSession {
        await beginSessionChange()
        defer { endSessionChange() }
        let request = launchDefaults.applied(to: request)
        do {
            let link = try await link()
            let status = try await refreshReceiver(link)
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
                if let session, session.sessionID == app.sessionID { return session }
                return try await join(app, on: link, state: .started, joined: true)
            case .launch:
                if let app {
                    // Relaunch: stop the running instance, then launch afresh.
                    endingReason = "relaunched by a castd client"
                    let reply = try await receiverRequest(link) {
                        ReceiverRequest.stop(sessionID: app.sessionID, requestID: $0)
                    }
                    applyReceiver(reply)
                    if var session, session.sessionID == app.sessionID {
                        session.state = .ended
                        session.reason = "relaunched by a castd client"
                        self.session = nil
                        publish(session)
                        clearMedia()
                    }
                    endingReason = nil
                }
                return try await launch(wanted, options: request.launch, on: link)
            default:
                if let app { try await sendCredentials(request.launch, to: app, on: link) }
                if let session, session.appID == wanted { return session }
                if let app { return try await join(app, on: link, state: .started, joined: true) }
                return try await launch(wanted, options: request.launch, on: link)
            }
        } catch {
            endingReason = nil
            throw Self.map(error, device: name)
        }
    }

    /// The old entry point: join or launch `appID`.
    public func startSession(appID: String) async throws -> CastdSession {
        try await startSession(SessionRequest(appID: appID))
    }

    /// Hands launch credentials to an app that already runs, as the sender SDK does when it
    /// joins: a LAUNCH of the running app with its `launchCheckerParams`, which the device answers
    /// with the same session (the app is not restarted) and passes to the app as a launch-or-join
    /// request (Cast Connect's `CastLaunchRequest`). Nothing is sent without credentials.
    private func sendCredentials(_ options: CastdLaunchOptions, to app: CastApplication, on link: CastLink)
        async throws
    {
        guard !options.credentials.isEmpty else { return }
        sessionLogger.debug("handing credentials to the running app", metadata: ["app": "\(app.appID)"])
        let reply = try await receiverRequest(link) {
            ReceiverRequest.launch(
                appID: app.appID, requestID: $0, language: options.language.nonEmpty, androidTV: options.androidTv,
                credentials: options.credentials, credentialsType: options.credentialsType.nonEmpty)
        }
        applyReceiver(reply)
    }

    func beginSessionChange() async {
        if sessionChangeBusy {
            await withCheckedContinuation { sessionChangeQueue.append($0) }
        } else {
            sessionChangeBusy = true
        }
    }

    func endSessionChange() {
        if sessionChangeQueue.isEmpty {
            sessionChangeBusy = false
        } else {
            sessionChangeQueue.removeFirst().resume()
        }
    }

    private func launch(_ appID: String, options: CastdLaunchOptions, on link: CastLink) async throws -> CastdSession {
        var starting = CastdSession()
        starting.deviceID = id
        starting.deviceName = name
        starting.appID = appID
        starting.state = .starting
        publish(starting)
        sessionLogger.debug("launching", metadata: ["app": "\(appID)"])
        do {
            let reply = try await receiverRequest(link) {
                ReceiverRequest.launch(
                    appID: appID, requestID: $0, language: options.language.nonEmpty,
                    androidTV: options.androidTv,
                    credentials: options.credentials.nonEmpty, credentialsType: options.credentialsType.nonEmpty)
            }
            var status = applyReceiver(reply)
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
            return try await join(app, on: link, state: .started, joined: false)
        } catch {
            starting.state = .startFailed
            starting.reason = Self.map(error, device: name).message
            publish(starting)
            sessionLogger.notice("launch failed", metadata: ["app": "\(appID)", "reason": "\(starting.reason)"])
            throw error
        }
    }

    func join(_ app: CastApplication, on link: CastLink, state: Castd_V1_SessionState, joined: Bool) async throws
        -> CastdSession
    {
        guard let transport = app.transportID else {
            throw CastdError(.failedPrecondition, "\(app.displayName) on \(name) has no transport to join")
        }
        try await link.connect(to: transport)
        var session = CastdSession(deviceID: id, deviceName: name, app: app, state: state)
        session.joined = joined
        self.session = session
        suspended = nil
        // The media status first, so that a client acting on "started" or "resumed" finds
        // what plays (a pause right after "resumed" must not meet "nothing is loaded").
        var mediaError: (any Error)?
        if app.declares(namespace: CastNamespace.media) {
            do {
                let reply = try await link.requestReply(namespace: CastNamespace.media, destination: transport) {
                    MediaRequest.getStatus.payload(requestID: $0)
                }
                applyMedia(reply)
            } catch {
                mediaError = error
            }
        }
        let published = self.session ?? session
        publish(published)
        sessionLogger.info(
            state == .resumed ? "session resumed" : joined ? "joined the app's session" : "session started",
            metadata: ["session": "\(published.sessionID)", "app": "\(app.appID)"])
        if let mediaError { throw mediaError }
        return published
    }

    /// The link is back after it dropped under a session: rejoin the same session if its app
    /// still runs (no relaunch, playback untouched), else tell everyone it ended.
    func resume(_ suspended: CastdSession, status: CastReceiverStatus, on link: CastLink) async {
        var resuming = suspended
        resuming.state = .resuming
        resuming.reason = ""
        store.updateSession(resuming)
        if let app = status.applications.first(where: { $0.sessionID == suspended.sessionID }), app.transportID != nil {
            do {
                _ = try await join(app, on: link, state: .resumed, joined: suspended.joined)
                return
            } catch {
                sessionLogger.warning("could not rejoin the session", metadata: ["error": "\(Self.describe(error))"])
            }
        }
        endSuspended(reason: "the app stopped while castd was disconnected from \(name)")
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
            store.updateSession(session)
            if stopApp {
                endingReason = "stopped by a castd client"
                let sessionID = session.sessionID
                let reply = try await receiverRequest(link) {
                    ReceiverRequest.stop(sessionID: sessionID, requestID: $0)
                }
                applyReceiver(reply)
            }
            if self.session != nil {
                // Left, or the device did not drop the app yet: either way castd stops following it.
                await link.disconnect(from: session.transportID)
                session.state = .ended
                session.reason = stopApp ? "stopped by a castd client" : "left; the app keeps running on the device"
                self.session = nil
                endingReason = nil
                publish(session)
                clearMedia()
                sessionLogger.info(
                    "session ended", metadata: ["session": "\(session.sessionID)", "reason": "\(session.reason)"])
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
            let reply = try await receiverRequest(link) {
                ReceiverRequest.stop(sessionID: app.sessionID, requestID: $0)
            }
            applyReceiver(reply)
            var ended = CastdSession(deviceID: id, deviceName: name, app: app, state: .ended)
            ended.reason = "stopped by a castd client"
            store.updateSession(ended)
            return ended
        } catch {
            throw Self.map(error, device: name)
        }
    }

    // MARK: app availability

    /// Which of `appIDs` the device can run (GET_APP_AVAILABILITY), remembered until the link
    /// drops. With `limiter` (read calls), a link castd must open first waits for its place.
    public func appAvailability(_ appIDs: [String], openingWithin limiter: LinkAttemptLimiter? = nil) async throws
        -> [String: Bool]
    {
        let unknown = appIDs.filter { receiverState.availability[$0] == nil }
        if !unknown.isEmpty {
            do {
                let link: CastLink
                if let limiter {
                    link = try await self.link(openingWithin: limiter)
                } else {
                    link = try await self.link()
                }
                let reply = try await receiverRequest(link) {
                    ReceiverRequest.getAppAvailability(appIDs: unknown, requestID: $0)
                }
                let answers = CastAppAvailability(payload: reply.payload)
                receiverState.remember(unknown.map { ($0, answers.isAvailable($0)) })
            } catch {
                throw Self.map(error, device: name)
            }
        }
        var result: [String: Bool] = [:]
        for appID in appIDs { result[appID] = receiverState.availability[appID] ?? false }
        return result
    }
}

// MARK: stream transfer

extension DeviceController {
    /// Whether this device now runs `appID` playing `media` (what castd's session on another
    /// device was playing when it vanished there); if so castd joins it, without disturbing
    /// it, as the session that moved here. Nil when this device has nothing of the kind, or
    /// castd already holds a session here.
    func adoptTransferred(appID: String, media: CastMediaInformation, from source: String) async -> CastdSession? {
        guard session == nil, suspended == nil else { return nil }
        await beginSessionChange()
        defer { endSessionChange() }
        guard session == nil, suspended == nil else { return nil }
        do {
            let link = try await link()
            let status = try await refreshReceiver(link)
            guard let app = status.application(id: appID), let transport = app.transportID,
                app.declares(namespace: CastNamespace.media)
            else { return nil }
            try await link.connect(to: transport)
            let reply = try await link.requestReply(namespace: CastNamespace.media, destination: transport) {
                MediaRequest.getStatus.payload(requestID: $0)
            }
            guard let here = CastMediaStatus.entries(in: reply.payload).first?.media, here.namesSameContent(as: media)
            else {
                await link.disconnect(from: transport)
                return nil
            }
            var session = CastdSession(deviceID: id, deviceName: name, app: app, state: .started)
            session.joined = true
            session.transferredFromDeviceID = source
            self.session = session
            publish(session)
            applyMedia(reply)
            sessionLogger.info(
                "followed a session transferred here",
                metadata: ["from": "\(source)", "session": "\(session.sessionID)"])
            return session
        } catch {
            sessionLogger.debug("not the transfer target", metadata: ["error": "\(Self.describe(error))"])
            return nil
        }
    }
}
