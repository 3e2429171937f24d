import CastSenderLink
import CastProtocol
import CastdAPI

/// What clients ask of the device's session, handed to the session controller in its turn with
/// the link; and which apps the device can run.
extension DeviceController {
    /// Joins the app if it runs, else launches it (or as `request.mode` says), with castd's
    /// launch defaults filled in. An empty app id joins whatever non-idle app runs, else
    /// launches the Default Media Receiver.
    public func startSession(_ request: SessionRequest) async throws -> CastdSession {
        defer { askQueueOrderIfWanted() }
        await sessions.beginChange()
        defer { sessions.endChange() }
        let request = launchDefaults.applied(to: request)
        do {
            return try await sessions.start(request, on: link())
        } catch {
            throw DeviceFailure.castdError(error, device: name, ask: .launch(appID: request.appID))
        }
    }

    /// Leaves the session (the app keeps running) or stops the app; with no session, stopping
    /// stops whatever app runs.
    public func endSession(stopApp: Bool) async throws -> CastdSession {
        await sessions.beginChange()
        defer { sessions.endChange() }
        do {
            guard sessions.session != nil else {
                guard stopApp else { throw CastdError(.failedPrecondition, "there is no session on \(name)") }
                return try await sessions.stopRunningApp(on: link())
            }
            return try await sessions.end(stopApp: stopApp, on: link())
        } catch {
            throw DeviceFailure.castdError(error, device: name, ask: .endSession(stopApp: stopApp))
        }
    }

    /// Whether this device now runs `appID` playing `media`, castd's session on another device
    /// when it vanished there; if so castd follows it here (stream transfer). Nil when it does
    /// not, or castd already holds a session here.
    func adoptTransferred(appID: String, media: CastMediaInformation, from source: String) async -> CastdSession? {
        guard sessions.holdsNone else { return nil }
        defer { askQueueOrderIfWanted() }
        await sessions.beginChange()
        defer { sessions.endChange() }
        guard sessions.holdsNone else { return nil }
        do {
            return try await sessions.adopt(appID: appID, media: media, from: source, on: link())
        } catch {
            sessions.logger.debug("not the transfer target", metadata: ["error": "\(DeviceFailure.describe(error))"])
            return nil
        }
    }

    // MARK: app availability

    /// Which of `appIDs` the device can run (GET_APP_AVAILABILITY), remembered until the link
    /// drops. With `limiter` (read calls), a link castd must open first waits for its place.
    public func appAvailability(_ appIDs: [String], openingWithin limiter: LinkAttemptLimiter? = nil) async throws
        -> [String: Bool]
    {
        let unknown = receiver.unknownAvailability(of: appIDs)
        if !unknown.isEmpty {
            do {
                if let limiter {
                    try await receiver.askAvailability(of: unknown, on: link(openingWithin: limiter))
                } else {
                    try await receiver.askAvailability(of: unknown, on: link())
                }
            } catch {
                throw DeviceFailure.castdError(error, device: name, ask: .appAvailability)
            }
        }
        return receiver.availability(of: appIDs)
    }
}
