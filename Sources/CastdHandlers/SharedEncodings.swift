import CastdServer
import CastDevices
import CastdAPI
import CastdSupport
import Foundation

/// What castd encodes once and sends many times: each change event, to every watcher (one
/// encoding of a MEDIA_STATUS, however many watch), and the devices, sessions and media of
/// GetStatus until the next change.
final class SharedEncodings: Sendable {
    private struct State {
        /// Recent change events, each in slot `sequence % eventsKept` (each number is one
        /// change, the same for every watcher). Snapshots and lag notices are per watcher, and
        /// never kept.
        var events: [(sequence: UInt64, bytes: Data)?] = Array(repeating: nil, count: SharedEncodings.eventsKept)
        /// StatusResponse fields 2-4 (devices, sessions, media) as of a store sequence number.
        var status: (sequence: UInt64, bytes: Data)?
        /// StatusResponse field 1 (daemon) for each of its recent values: they change only when
        /// a client comes or goes or discovery changes, so each is encoded once.
        var daemons: [DaemonKey: Data] = [:]
    }

    /// What tells one DaemonInfo of this castd from another: the rest is fixed at start-up.
    struct DaemonKey: Hashable {
        var discovery: String
        var discoverySince: Date
        var clients: UInt32
        var access: Castd_V1_Access
    }

    /// How many DaemonInfo encodings are kept (all are dropped when there would be more).
    static let daemonsKept = 16

    var cachedDaemons: Int { state.withLock { $0.daemons.count } }

    private let state = Locked(State())
    /// Watchers read at their own pace: under `make soak` (2,000-3,000 events a second to 8
    /// watchers) they were often more than 32 events apart, each then encoded the event again,
    /// which made the ones behind slower still, until castd dropped events for them (`lagged`).
    /// 1,024 recent events are about a megabyte.
    static let eventsKept = 1024

    /// `event`, encoded once for all watchers.
    func event(_ event: CastdEvent) throws -> EncodedMessage {
        switch event.kind {
        case .snapshot?, .lagged?, nil:
            return EncodedMessage(try event.serializedData())
        default:
            break
        }
        let slot = Int(event.sequence % UInt64(Self.eventsKept))
        let cached = state.withLock { state -> Data? in
            guard let entry = state.events[slot], entry.sequence == event.sequence else { return nil }
            return entry.bytes
        }
        if let cached { return EncodedMessage(cached) }
        let bytes = try event.serializedData()
        state.withLock { state in
            // A watcher far behind must not evict a newer event the others still need.
            if let entry = state.events[slot], entry.sequence > event.sequence { return }
            state.events[slot] = (event.sequence, bytes)
        }
        return EncodedMessage(bytes)
    }

    /// A StatusResponse: `daemon` (made and encoded only for a `key` not seen lately), then the
    /// store's devices, sessions and media, encoded once per change. (A message's encoding is its
    /// fields' encodings one after the other, so the two parts concatenate into the whole.)
    func status(daemon key: DaemonKey, store: CastdStateStore, _ daemon: () -> Castd_V1_DaemonInfo) throws
        -> EncodedMessage
    {
        var bytes: Data
        if let head = state.withLock({ $0.daemons[key] }) {
            bytes = head
        } else {
            var head = CastdStatusResponse()
            head.daemon = daemon()
            bytes = try head.serializedData()
            state.withLock { state in
                if state.daemons.count >= Self.daemonsKept { state.daemons.removeAll() }
                state.daemons[key] = bytes
            }
        }
        let sequence = store.sequence
        if let cached = state.withLock({ $0.status?.sequence == sequence ? $0.status?.bytes : nil }) {
            bytes.append(cached)
            return EncodedMessage(bytes)
        }
        let (current, snapshot) = store.sequencedSnapshot()
        var tail = CastdStatusResponse()
        tail.devices = snapshot.devices
        tail.sessions = snapshot.sessions
        tail.media = snapshot.media
        tail.castState = snapshot.castState
        let encoded = try tail.serializedData()
        state.withLock { $0.status = (current, encoded) }
        bytes.append(encoded)
        return EncodedMessage(bytes)
    }
}
