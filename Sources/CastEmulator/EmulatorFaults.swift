import CastProtocol

/// The faults an emulated device is playing now: what a flaky network or a flaky device does to
/// its senders, so that their reconnection, liveness checks and session rejoin can be tested.
///
/// These are the switches that stay on until turned off (``CastDeviceEmulator/setFaults(_:)``,
/// ``CastDeviceEmulator/updateFaults(_:)``, `POST /emulator/faults`). The one-off faults are
/// actions: ``CastDeviceEmulator/dropLinks()``, ``CastDeviceEmulator/restart(downtime:)``,
/// ``CastDeviceEmulator/movePort(to:)``, ``CastDeviceEmulator/transferSession(to:)``, and a
/// hostile device's ``CastDeviceEmulator/sendHostile(_:)`` and
/// ``CastDeviceEmulator/floodMediaStatus(perSecond:for:)``.
public struct EmulatorFaults: Sendable, Hashable, CustomStringConvertible {
    /// What the device does on `tp.heartbeat`, and beyond.
    public enum Heartbeat: String, Sendable, Hashable, CaseIterable {
        /// PONG to every PING; a PING of its own after `pingAfter` of quiet.
        case normal
        /// Neither PONG nor PING; every other message is answered as usual. A sender that
        /// relies on heartbeats declares the device dead although it still answers requests.
        case stopped
        /// Nothing at all is sent on any link, and nothing received is handled (heartbeats
        /// included), while the TCP connections stay open: a device that vanished without
        /// closing anything. New connections complete TLS and then hear nothing either. The
        /// device does not close quiet links itself while silent; when it stops being silent,
        /// each link's quiet time starts again.
        case silent
    }

    public var heartbeat: Heartbeat
    /// New TCP connections are closed before the TLS handshake (the sender's handshake fails).
    /// Links already open are not affected.
    public var refuseTLS: Bool
    /// Every message the device sends, but `tp.*` ones (device authentication, CONNECT/CLOSE,
    /// heartbeats), leaves this much later than it would, in order: a slow device.
    public var replyDelay: Duration

    public init(heartbeat: Heartbeat = .normal, refuseTLS: Bool = false, replyDelay: Duration = .zero) {
        self.heartbeat = heartbeat
        self.refuseTLS = refuseTLS
        self.replyDelay = replyDelay
    }

    /// No fault: a healthy device.
    public static let none = EmulatorFaults()

    public var description: String {
        "heartbeat \(heartbeat.rawValue), refuseTLS \(refuseTLS), replyDelay \(replyDelay)"
    }

    /// The longest reply delay the control interface accepts: ten minutes.
    public static let maximumReplyDelay = Duration.seconds(600)

    /// Milliseconds, as the control interface reports it.
    var replyDelayMilliseconds: Double {
        let (seconds, attoseconds) = replyDelay.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    /// The faults as `GET /emulator/faults` reports them.
    var json: JSONValue {
        [
            "heartbeat": .string(heartbeat.rawValue),
            "refuseTLS": .bool(refuseTLS),
            "replyDelayMs": .number(replyDelayMilliseconds),
        ]
    }

    /// The keys `POST /emulator/faults` takes.
    static let controlKeys: Set<String> = ["heartbeat", "refuseTLS", "replyDelayMs"]

    /// These faults with the fields of a `POST /emulator/faults` body applied; fields that are
    /// absent stay as they are.
    func applying(_ body: ControlRequestBody) throws(ControlRequestError) -> EmulatorFaults {
        var faults = self
        if let name = try body.string("heartbeat") {
            guard let mode = Heartbeat(rawValue: name) else {
                let allowed = Heartbeat.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                throw ControlRequestError(key: "heartbeat", "must be one of \(allowed)")
            }
            faults.heartbeat = mode
        }
        if let refuse = try body.bool("refuseTLS") { faults.refuseTLS = refuse }
        if let milliseconds = try body.number(
            "replyDelayMs", in: 0...(Self.maximumReplyDelay.seconds * 1000), "milliseconds"
        ) {
            faults.replyDelay = .microseconds(Int64((milliseconds * 1000).rounded()))
        }
        return faults
    }
}
