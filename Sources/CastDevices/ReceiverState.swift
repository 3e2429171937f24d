import CastProtocol
import CastdSupport
import Logging

/// What castd knows of one device's receiver namespace: the last RECEIVER_STATUS (its apps and
/// its volume), read leniently and applied in the link's order, and the apps it said it can run.
/// `ReceiverController` keeps it.
struct ReceiverState {
    let logger: Logger
    /// Messages castd cannot read: a few logged a minute (shared with the device's controller).
    let badMessageLog: LogThrottle

    /// What the device last said of itself; nil before the first RECEIVER_STATUS of a link.
    private(set) var status: CastReceiverStatus?
    /// The `arrival` of the newest RECEIVER_STATUS applied from the current link.
    private var appliedArrival: UInt64 = 0
    /// The app ids this device said it can or cannot run, until the link drops.
    private(set) var availability: [String: Bool] = [:]
    /// The most app ids whose availability castd remembers for a device.
    static let availabilityLimit = 256

    init(logger: Logger, badMessageLog: LogThrottle) {
        self.logger = logger
        self.badMessageLog = badMessageLog
    }

    /// A new link counts its messages from 1.
    mutating func linkChanged() {
        appliedArrival = 0
    }

    /// The link dropped: what the device said no longer holds.
    mutating func linkLost() {
        status = nil
        availability.removeAll()
    }

    /// A RECEIVER_STATUS payload as castd applies it. A field the device sent but that cannot be
    /// read (`applications` that is not an array, a volume level that is not a number) is no
    /// news: it keeps what castd knew, rather than ending the session or showing a volume of 0.
    func read(_ payload: JSONValue) -> CastReceiverStatus {
        var read = CastReceiverStatus(payload: payload)
        let unreadable = CastReceiverStatus.unreadableFields(in: payload)
        for field in unreadable {
            switch field {
            case .applications: read.applications = status?.applications ?? []
            case .volume: read.volume = status?.volume
            case .volumeLevel: read.volume?.level = status?.volume?.level
            case .volumeMuted: read.volume?.muted = status?.volume?.muted
            case .currentTime, .playbackRate: break
            }
        }
        if !unreadable.isEmpty, badMessageLog.admit() != nil {
            logger.warning(
                "the device's RECEIVER_STATUS has fields that cannot be read; kept what castd knew of them",
                metadata: ["fields": "\(unreadable.map(\.rawValue).joined(separator: ", "))"])
        }
        return read
    }

    /// Takes `next` as what the device says now. With `arrival` (its place in the link's order),
    /// one older than a status already applied is skipped. A reply is applied by the request
    /// that asked, when that request resumes on the device's actor, while the link's message
    /// loop applies the statuses nobody asked for: the two interleave, and a status handled
    /// late must not undo what came after it (a broadcast from before a LAUNCH, applied after
    /// the LAUNCH's reply, would end the session it started).
    ///
    /// - Returns: nil when skipped; otherwise whether it differs from what castd held.
    mutating func apply(_ next: CastReceiverStatus, arrival: UInt64?) -> Bool? {
        if let arrival {
            guard arrival > appliedArrival else { return nil }
            appliedArrival = arrival
        }
        let changed = next != status
        status = next
        return changed
    }

    /// Remembers the device's answers about apps, forgetting all it knew first if they would
    /// make more than ``availabilityLimit`` (an app a client asks about next is most likely
    /// what they asked about last).
    mutating func remember(_ answers: [(String, Bool)]) {
        if availability.count + answers.count > Self.availabilityLimit { availability = [:] }
        for (appID, available) in answers { availability[appID] = available }
    }
}
