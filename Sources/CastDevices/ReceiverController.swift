import CastProtocol
import CastSenderLink
import CastdAPI
import CastdSupport
import Logging

/// The receiver namespace of one device, the platform receiver's requests and statuses
/// (pychromecast's ReceiverController): it sends GET_STATUS, LAUNCH, STOP, SET_VOLUME and
/// GET_APP_AVAILABILITY, waits for their replies and applies them, as it applies the
/// RECEIVER_STATUS the device broadcasts. What changed goes out as the device's entry in the
/// state store, and every status applied is told to `statusApplied` (the session controller:
/// did castd's app go away?). What it knows is `ReceiverState`.
///
/// The device's controller owns it; its isolation guards this object (the async methods run on
/// the controller's executor, `nonisolated(nonsending)`).
final class ReceiverController {
    private(set) var state: ReceiverState
    private let deviceID: String
    private let store: CastdStateStore
    private let superseding: SupersedingRequests
    /// The app of castd's discovery criterion (`LaunchDefaults.deviceCriterion`), if any.
    private let criterion: String?
    /// Told of every status applied, after the device's entry is published.
    var statusApplied: (CastReceiverStatus) -> Void = { _ in }

    init(
        deviceID: String, store: CastdStateStore, superseding: SupersedingRequests, criterion: String? = nil,
        logger: Logger, badMessageLog: LogThrottle
    ) {
        self.state = ReceiverState(logger: logger, badMessageLog: badMessageLog)
        self.deviceID = deviceID
        self.store = store
        self.superseding = superseding
        self.criterion = criterion
    }

    /// What the device last said of itself; nil before the first RECEIVER_STATUS of a link.
    var status: CastReceiverStatus? { state.status }

    /// A new link counts its messages from 1.
    func linkChanged() { state.linkChanged() }

    /// The link dropped: what the device said no longer holds.
    func linkLost() { state.linkLost() }

    // MARK: what the device says

    /// A RECEIVER_STATUS payload (a broadcast, or a reply), applied in its place in the link's
    /// order; returns what it says, whether applied or older than a status already applied.
    @discardableResult
    func receive(_ payload: JSONValue, arrival: UInt64?) -> CastReceiverStatus {
        let status = state.read(payload)
        apply(status, arrival: arrival)
        return status
    }

    /// Applies a RECEIVER_STATUS, in its place in the link's order when it has one
    /// (``ReceiverState/apply(_:arrival:)``): the device's entry for every watcher, then
    /// `statusApplied`.
    func apply(_ status: CastReceiverStatus, arrival: UInt64? = nil) {
        guard let changed = state.apply(status, arrival: arrival) else { return }
        if changed {
            store.updateKnownDevice(id: deviceID) {
                $0.receiver = Castd_V1_ReceiverStatus(status)
                $0.tvPower = CastdTvPower(standBy: status.isStandBy)
                $0.tvInput = CastdTvInput(activeInput: status.isActiveInput)
                let running = status.applications.first(where: { !$0.isIdleScreen })
                $0.statusText = running.map { $0.statusText.isEmpty ? $0.displayName : $0.statusText } ?? ""
                $0.busy = running != nil
            }
        }
        statusApplied(status)
    }

    // MARK: requests

    /// GET_STATUS, its answer applied.
    nonisolated(nonsending) func getStatus(on link: CastLink) async throws -> CastReceiverStatus {
        try await request(on: link) { ReceiverRequest.getStatus(requestID: $0) }
    }

    /// GET_STATUS, its answer not yet applied: a new link's first status, which the device's
    /// controller applies once it has told everyone the link is up.
    nonisolated(nonsending) func firstStatus(on link: CastLink) async throws -> CastReply {
        try await link.requestReply(namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID) {
            ReceiverRequest.getStatus(requestID: $0)
        }
    }

    /// LAUNCH `appID` with `options` (to an app that runs, its launch request with credentials:
    /// the device answers with the same session).
    nonisolated(nonsending) func launch(_ appID: String, options: CastdLaunchOptions, on link: CastLink) async throws
        -> CastReceiverStatus
    {
        try await request(on: link) {
            ReceiverRequest.launch(
                appID: appID, requestID: $0, language: options.language.nonEmpty, androidTV: options.androidTv,
                credentials: options.credentials.nonEmpty, credentialsType: options.credentialsType.nonEmpty)
        }
    }

    /// STOP the app of `sessionID`.
    nonisolated(nonsending) func stop(sessionID: String, on link: CastLink) async throws -> CastReceiverStatus {
        try await request(on: link) { ReceiverRequest.stop(sessionID: sessionID, requestID: $0) }
    }

    /// SET_VOLUME: a level, mute, or `steps` of the device's step interval (the volume buttons),
    /// from the volume castd knows (asked first if it knows none). A newer volume request
    /// supersedes this one. `device` names the device in errors.
    nonisolated(nonsending) func setVolume(
        level: Double?, muted: Bool?, steps: Int32, device: String, on link: CastLink
    ) async throws -> CastVolume {
        var current = state.status?.volume
        if current == nil { current = try await getStatus(on: link).volume }
        let known = current ?? CastVolume()
        var level = level
        if steps != 0 || level != nil, known.control == .fixed {
            throw CastdError(.failedPrecondition, "\(device) has a fixed volume; only mute can change")
        }
        if steps != 0 {
            let step = known.stepInterval.flatMap { $0 > 0 ? $0 : nil } ?? 0.05
            level = min(1, max(0, (known.level ?? 0) + Double(steps) * step))
        }
        let requested = level
        let reply = try await superseding.send(
            "volume", device: device, on: link, namespace: CastNamespace.receiver,
            destination: CastWire.platformReceiverID
        ) { ReceiverRequest.setVolume(level: requested, muted: muted, requestID: $0) }
        return receive(reply.payload, arrival: reply.arrival).volume ?? CastVolume()
    }

    /// Which of `appIDs` castd has not asked the device about since the link came up.
    func unknownAvailability(of appIDs: [String]) -> [String] {
        appIDs.filter { state.availability[$0] == nil }
    }

    /// GET_APP_AVAILABILITY for `appIDs`, the answers remembered until the link drops.
    nonisolated(nonsending) func askAvailability(of appIDs: [String], on link: CastLink) async throws {
        let reply = try await link.requestReply(
            namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
        ) { ReceiverRequest.getAppAvailability(appIDs: appIDs, requestID: $0) }
        let answers = CastAppAvailability(payload: reply.payload)
        state.remember(appIDs.map { ($0, answers.isAvailable($0)) })
    }

    /// Whether the device said it can run each of `appIDs` (false for what it was not asked).
    /// An answer about the criterion's app goes to the store too, each time it is read (the
    /// store forgets it with the device, which may be listed again while the link stays up).
    func availability(of appIDs: [String]) -> [String: Bool] {
        var result: [String: Bool] = [:]
        for appID in appIDs { result[appID] = state.availability[appID] ?? false }
        if let criterion, let met = state.availability[criterion] {
            store.recordCriterion(deviceID: deviceID, met: met)
        }
        return result
    }

    private nonisolated(nonsending) func request(on link: CastLink, _ make: @Sendable (Int64) -> JSONValue) async throws
        -> CastReceiverStatus
    {
        let reply = try await link.requestReply(
            namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID, make)
        return receive(reply.payload, arrival: reply.arrival)
    }
}
