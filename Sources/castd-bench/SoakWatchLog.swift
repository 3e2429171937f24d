import CastClient

/// What one watcher saw: the sequence its snapshot was current at, then every event after it
/// in the order it arrived, each as its sequence number and a digest of its bytes (castd
/// encodes the same event for every watcher, so the same event has the same bytes).
struct WatchLog: Sendable {
    struct Entry: Sendable, Equatable {
        var sequence: UInt64
        var digest: UInt64
    }

    private(set) var snapshotSequence: UInt64?
    private(set) var entries: [Entry] = []
    /// `lagged` events: castd dropped part of this watcher's backlog.
    private(set) var lagged = 0
    /// Events whose sequence was not the one after the previous event's.
    private(set) var gaps = 0
    /// Messages that were not events, or came before the snapshot.
    private(set) var malformed = 0
    /// Link changes of each device, as events reported them: drops (connected → anything
    /// else) and reconnections (anything else → connected).
    private(set) var linkDrops: [String: Int] = [:]
    private(set) var reconnections: [String: Int] = [:]
    private var linkStates: [String: CastdLinkState] = [:]
    /// Session events by the state they announced (suspended, resuming, resumed, ended, …).
    private(set) var sessionStates: [CastdSessionState: Int] = [:]
    private(set) var notes: [String] = []

    var lastSequence: UInt64? { entries.last?.sequence ?? snapshotSequence }

    mutating func record(_ bytes: [UInt8]) {
        // Most events are media statuses, thousands a second under the soak: for those the
        // sequence number (read off the wire) and the digest are all the log needs, and a
        // watcher that decoded each one in full fell behind castd (the driver's doing, not
        // castd's). The rest are decoded.
        guard let header = Self.header(bytes) else {
            malformed += 1
            return
        }
        if header.kind == Self.mediaField {
            append(sequence: header.sequence, bytes)
            return
        }
        guard let event = try? CastdEvent(serializedBytes: bytes) else {
            malformed += 1
            return
        }
        switch event.kind {
        case .snapshot(let snapshot)?:
            if snapshotSequence == nil {
                snapshotSequence = event.sequence
                for device in snapshot.devices { linkStates[device.id] = device.linkState }
                return
            }
            // A snapshot after the first one only follows `lagged`; the events in between
            // are gone, so nothing after it can be compared in order.
            note("a second snapshot at sequence \(event.sequence)")
            for device in snapshot.devices { linkChanged(device) }
        case .lagged(let info)?:
            lagged += 1
            note("lagged at sequence \(event.sequence): \(info.dropped) events dropped")
        case .deviceAdded(let device)?, .deviceUpdated(let device)?:
            linkChanged(device)
        case .session(let session)?:
            sessionStates[session.state, default: 0] += 1
        default:
            break
        }
        append(sequence: event.sequence, bytes)
    }

    /// Logs one event after the snapshot, noting one that comes before it or out of sequence.
    private mutating func append(sequence: UInt64, _ bytes: [UInt8]) {
        guard snapshotSequence != nil else {
            malformed += 1
            note("an event (sequence \(sequence)) before the snapshot")
            return
        }
        if let last = lastSequence, sequence != last + 1 {
            gaps += 1
            note("sequence \(sequence) after \(last)")
        }
        entries.append(Entry(sequence: sequence, digest: Self.digest(bytes)))
    }

    private mutating func linkChanged(_ device: CastdDevice) {
        let before = linkStates[device.id]
        if before == .connected && device.linkState != .connected { linkDrops[device.id, default: 0] += 1 }
        if let before, before != .connected && device.linkState == .connected {
            reconnections[device.id, default: 0] += 1
        }
        linkStates[device.id] = device.linkState
    }

    private mutating func note(_ text: String) {
        if notes.count < 10 { notes.append(text) }
    }

    /// `castd.v1.Event.media`'s field number.
    static let mediaField = 8

    /// An event's `sequence` and the field number of its `kind`, read off the protobuf wire
    /// (tags and varints; lengths skipped); nil if the bytes are not a well-formed message.
    static func header(_ bytes: [UInt8]) -> (sequence: UInt64, kind: Int)? {
        var index = 0
        func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.count && shift < 64 {
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }
        var sequence: UInt64 = 0
        var kind = 0
        while index < bytes.count {
            guard let tag = varint() else { return nil }
            let field = Int(tag >> 3)
            switch tag & 7 {
            case 0:
                guard let value = varint() else { return nil }
                if field == 1 { sequence = value }
            case 2:
                guard let length = varint(), length <= UInt64(bytes.count - index) else { return nil }
                index += Int(length)
                if field >= 3 { kind = field }
            case 1:
                guard index + 8 <= bytes.count else { return nil }
                index += 8
            case 5:
                guard index + 4 <= bytes.count else { return nil }
                index += 4
            default:
                return nil
            }
        }
        return (sequence, kind)
    }

    /// FNV-1a, 64 bits.
    static func digest(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// The entries with `from < sequence ≤ through`.
    func entries(after from: UInt64, through: UInt64) -> ArraySlice<Entry> {
        let start = entries.firstIndex { $0.sequence > from } ?? entries.endIndex
        let end = entries.firstIndex { $0.sequence > through } ?? entries.endIndex
        return entries[start..<max(start, end)]
    }
}

/// Whether every watcher saw the same events in the same order.
struct WatchComparison: Sendable {
    /// Watchers compared.
    var watchers: Int
    /// The sequences every watcher must have: after the latest snapshot, through `through`.
    var from: UInt64
    var through: UInt64
    /// Watchers that got `lagged`.
    var lagged: Int
    /// What differed, first things first; empty when they all agree.
    var differences: [String]

    var identical: Bool { differences.isEmpty && lagged == 0 && watchers > 0 }
    var compared: Int { through > from ? Int(through - from) : 0 }

    /// Compares the logs over the sequences after the latest snapshot among them, through
    /// `through` (a sequence every watcher has been seen to reach).
    static func compare(_ logs: [WatchLog], through: UInt64) -> WatchComparison {
        let from = logs.compactMap(\.snapshotSequence).max() ?? 0
        var differences: [String] = []
        let lagged = logs.filter { $0.lagged > 0 }.count
        if lagged > 0 {
            differences.append("\(lagged) of \(logs.count) watchers lagged (castd dropped events for them)")
        }
        var reference: ArraySlice<WatchLog.Entry>?
        for (index, log) in logs.enumerated() {
            guard log.snapshotSequence != nil else {
                differences.append("watcher \(index + 1) got no snapshot")
                continue
            }
            if log.malformed > 0 { differences.append("watcher \(index + 1): \(log.malformed) malformed events") }
            if log.gaps > 0 { differences.append("watcher \(index + 1): \(log.gaps) gaps in the sequence") }
            let slice = log.entries(after: from, through: through)
            let expected = through > from ? Int(through - from) : 0
            if slice.count != expected {
                differences.append(
                    "watcher \(index + 1) has \(slice.count) events in \(from + 1)…\(through), not \(expected)")
            }
            if let reference {
                if let mismatch = zip(reference, slice).first(where: { $0 != $1 }) {
                    differences.append(
                        "watcher \(index + 1) differs from watcher 1 at sequence \(mismatch.1.sequence) (watcher 1: \(mismatch.0.sequence))"
                    )
                }
            } else {
                reference = slice
            }
        }
        return WatchComparison(
            watchers: logs.count, from: from, through: through, lagged: lagged, differences: differences)
    }
}
