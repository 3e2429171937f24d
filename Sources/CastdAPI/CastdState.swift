/// castd's published state — devices, live sessions, media, the cast state — folded from its
/// ordered stream of events: the one rule by which castd's store keeps its state and every
/// client (CastClient's ``CastdStateWatch``, cast-mpris, castc) reads Watch. Pure: no I/O, no
/// clock; what an event means is said here once.
public struct CastdState: Sendable, Equatable {
    /// The sequence number of the last event applied.
    public private(set) var sequence: UInt64 = 0
    public private(set) var devices: [String: CastdDevice] = [:]
    /// By device id; only live sessions (``isLive(_:)``).
    public private(set) var sessions: [String: CastdSession] = [:]
    /// By device id; a status that plays nothing is not kept (``playsNothing(_:)``).
    public private(set) var media: [String: CastdMediaStatus] = [:]
    public private(set) var castState: CastdCastState = .noDevicesAvailable

    public init() {}

    /// The state a snapshot says.
    public init(_ snapshot: Castd_V1_Snapshot, sequence: UInt64 = 0) {
        self.sequence = sequence
        devices = Dictionary(snapshot.devices.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        sessions = Dictionary(
            snapshot.sessions.filter(Self.isLive).map { ($0.deviceID, $0) }, uniquingKeysWith: { $1 })
        media = Dictionary(snapshot.media.map { ($0.deviceID, $0) }, uniquingKeysWith: { $1 })
        castState = snapshot.castState
    }

    /// A session that has not ended, nor failed to start or to resume.
    public static func isLive(_ session: CastdSession) -> Bool {
        switch session.state {
        case .ended, .startFailed, .resumeFailed: false
        default: true
        }
    }

    /// An idle status with no media session and no media: nothing plays, nothing is kept.
    public static func playsNothing(_ status: CastdMediaStatus) -> Bool {
        status.mediaSessionID == 0 && status.playerState == .idle && status.media.contentID.isEmpty
    }

    /// Applies `event` (castd's store, on every change it publishes: nothing is allocated to say
    /// what changed).
    public mutating func apply(_ event: CastdEvent) {
        _ = fold(event, noting: false)
    }

    /// Applies `event`, and returns the ids of the devices whose device, session or media it
    /// changed (every device a snapshot names or dropped, for a snapshot): what a client
    /// redraws.
    public mutating func applyReportingDevices(_ event: CastdEvent) -> Set<String> {
        fold(event, noting: true)
    }

    /// Applies `event`; returns the devices it changed if `noting`, else nothing.
    private mutating func fold(_ event: CastdEvent, noting: Bool) -> Set<String> {
        // The ids, when they are asked for (no array for a variadic list on castd's path).
        func changed(_ id: String) -> Set<String> { noting ? [id] : [] }
        func changed(_ id: String, _ other: String) -> Set<String> { noting ? [id, other] : [] }
        sequence = max(sequence, event.sequence)
        switch event.kind {
        case .snapshot(let snapshot):
            let before = noting ? Set(devices.keys).union(sessions.keys).union(media.keys) : []
            self = CastdState(snapshot, sequence: event.sequence)
            return noting ? before.union(devices.keys).union(sessions.keys).union(media.keys) : []
        case .deviceAdded(let device), .deviceUpdated(let device):
            devices[device.id] = device
            return changed(device.id)
        case .deviceRemoved(let device):
            devices[device.id] = nil
            // What it last played goes with it, unless a session still holds it.
            if sessions[device.id] == nil { media[device.id] = nil }
            return changed(device.id)
        case .session(let session):
            sessions[session.deviceID] = Self.isLive(session) ? session : nil
            return changed(session.deviceID)
        case .transferred(let transfer):
            sessions[transfer.fromDeviceID] = nil
            if transfer.hasSession, Self.isLive(transfer.session) {
                sessions[transfer.toDeviceID] = transfer.session
            }
            return changed(transfer.fromDeviceID, transfer.toDeviceID)
        case .media(let status):
            media[status.deviceID] = Self.playsNothing(status) ? nil : status
            return changed(status.deviceID)
        case .queue(let change):
            // The change carries the queue's order after it (when castd knows it).
            guard !change.order.isEmpty, var status = media[change.deviceID],
                status.mediaSessionID == change.mediaSessionID
            else { return [] }
            status.queueItemIds = change.order
            media[change.deviceID] = status
            return changed(change.deviceID)
        case .castState(let change):
            castState = change.state
            return []
        case .lagged, .none:
            // A lag is followed by a fresh snapshot.
            return []
        }
    }

    /// castd's store only: a device's media replaced without an event of its own (a status
    /// whose only news is the queue's order, which the queue events with it say, or which a
    /// new watcher's snapshot carries).
    package mutating func replaceMedia(_ status: CastdMediaStatus) {
        guard media[status.deviceID] != nil else { return }
        media[status.deviceID] = status
    }
}
