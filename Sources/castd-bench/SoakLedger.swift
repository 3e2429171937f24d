import CastClient

/// The soak's accounting of one connection's calls, from the castd.v1 frames castd sent and
/// nothing else. The soak's clients give call ids in order (1, 2, 3, …) and never reuse one, so
/// a frame's id alone says whether its call was never opened, is open, or has ended.
///
/// Every call must end with exactly one status frame; a unary call's OK status comes after
/// exactly one message frame. A failure (UNAVAILABLE while a device's link is down, ABORTED when
/// a newer request superseded it) is a reply like any other: its code is counted. What counts
/// against castd:
/// - lost: a call with no status within the deadline, or none when the connection ended;
/// - duplicated: a frame for a call that has already ended (a second status, a message after
///   the status), or a unary call's second message;
/// - unknown: a frame for a call id never opened (0 included: castd's connection-level status);
/// - missing message: a unary call's OK status without its message;
/// - late: a status that came after the deadline had already counted its call lost.
struct CallLedger: Sendable {
    struct OpenCall: Sendable {
        var method: CastdMethod
        var started: UInt64
        var messages = 0
    }

    /// A call that has ended with a status.
    struct Ended: Sendable, Equatable {
        var callID: UInt64
        var method: CastdMethod
        var code: Int
        var latency: UInt64
    }

    private(set) var nextCallID: UInt64 = 1
    private var open: [UInt64: OpenCall] = [:]
    /// Calls the deadline counted lost, still open to a late status.
    private var expired: Set<UInt64> = []
    private(set) var tally = SoakTally()

    var openCount: Int { open.count }

    /// Opens the next call; returns its id.
    mutating func start(_ method: CastdMethod, at time: UInt64) -> UInt64 {
        let id = nextCallID
        nextCallID += 1
        open[id] = OpenCall(method: method, started: time)
        tally.calls += 1
        return id
    }

    /// Accounts for one frame from castd; returns the call it ended, if it ended one.
    mutating func receive(_ frame: Castd_V1_Frame, at time: UInt64) -> Ended? {
        let id = frame.callID
        guard id != 0, id < nextCallID else {
            tally.unknown += 1
            tally.note("frame for call id \(id), which was never opened: \(Self.describe(frame))")
            return nil
        }
        if var call = open[id] {
            switch frame.kind {
            case .message?:
                call.messages += 1
                open[id] = call
                if !call.method.isStreaming && call.messages > 1 {
                    tally.duplicated += 1
                    tally.note("\(call.method.rawValue) call \(id): message number \(call.messages) of a unary call")
                }
                return nil
            case .status(let status)?:
                open[id] = nil
                let code = Int(status.code.rawValue)
                if code == 0 && !call.method.isStreaming && call.messages == 0 {
                    tally.missingMessages += 1
                    tally.note("\(call.method.rawValue) call \(id): OK status without its message")
                }
                let latency = time >= call.started ? time - call.started : 0
                tally.record(call.method, code: code, latency: latency)
                return Ended(callID: id, method: call.method, code: code, latency: latency)
            case .start?, .cancel?, nil:
                tally.malformed += 1
                tally.note("call \(id): a frame castd must not send: \(Self.describe(frame))")
                return nil
            }
        }
        if expired.contains(id) {
            tally.late += 1
            if case .status? = frame.kind { expired.remove(id) }
            tally.note("call \(id): \(Self.describe(frame)) after its deadline")
            return nil
        }
        tally.duplicated += 1
        tally.note("call \(id): \(Self.describe(frame)) after the call had ended")
        return nil
    }

    /// Counts every call opened before `cutoff` as lost; returns them (each ends now, for the
    /// caller's bookkeeping). A status that comes for one later is counted late.
    mutating func expire(startedBefore cutoff: UInt64) -> [UInt64] {
        let overdue = open.filter { $0.value.started < cutoff }.map(\.key).sorted()
        for id in overdue {
            let call = open.removeValue(forKey: id)!
            expired.insert(id)
            tally.lost += 1
            tally.note("\(call.method.rawValue) call \(id): no status within the deadline")
        }
        return overdue
    }

    /// The connection ended: every call still open is lost.
    mutating func close() {
        for (id, call) in open.sorted(by: { $0.key < $1.key }) {
            tally.lost += 1
            tally.note("\(call.method.rawValue) call \(id): no status before the connection ended")
        }
        open = [:]
    }

    static func describe(_ frame: Castd_V1_Frame) -> String {
        switch frame.kind {
        case .message(let bytes)?: return "a message frame (\(bytes.count) bytes)"
        case .status(let status)?:
            return "a status frame (\(SoakTally.codeName(Int(status.code.rawValue))) \(status.message.prefix(160)))"
        case .start?: return "a start frame"
        case .cancel?: return "a cancel frame"
        case nil: return "an empty frame"
        }
    }
}

/// What the soak's connections counted, merged.
struct SoakTally: Sendable {
    /// Calls opened.
    var calls = 0
    var lost = 0
    var duplicated = 0
    var unknown = 0
    var missingMessages = 0
    var late = 0
    /// Frames castd may not send (start, cancel, no kind), and frames that did not decode.
    var malformed = 0
    /// Connections that ended before their calls did.
    var connectionsLost = 0
    /// Status codes by method.
    var codes: [CastdMethod: [Int: Int]] = [:]
    /// Call → status, by method.
    var latencies: [CastdMethod: [UInt64]] = [:]
    /// The first anomalies, described.
    private(set) var notes: [String] = []
    static let noteLimit = 20

    /// Calls that got their status (whatever its code).
    var replies: Int { codes.values.reduce(0) { $0 + $1.values.reduce(0, +) } }
    /// Everything that counts against castd.
    var anomalies: Int { lost + duplicated + unknown + missingMessages + late + malformed }

    mutating func record(_ method: CastdMethod, code: Int, latency: UInt64) {
        codes[method, default: [:]][code, default: 0] += 1
        latencies[method, default: []].append(latency)
    }

    mutating func note(_ text: String) {
        if notes.count < Self.noteLimit { notes.append(text) }
    }

    mutating func merge(_ other: SoakTally) {
        calls += other.calls
        lost += other.lost
        duplicated += other.duplicated
        unknown += other.unknown
        missingMessages += other.missingMessages
        late += other.late
        malformed += other.malformed
        connectionsLost += other.connectionsLost
        for (method, counts) in other.codes {
            for (code, count) in counts { codes[method, default: [:]][code, default: 0] += count }
        }
        for (method, values) in other.latencies { latencies[method, default: []] += values }
        for text in other.notes { note(text) }
    }

    static func codeName(_ code: Int) -> String {
        (CastdCode(rawValue: code) ?? .UNRECOGNIZED(code)).name
    }
}
