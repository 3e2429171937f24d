import CastProtocol

/// A snapshot of an emulated device: what it would report right now, and who is connected.
public struct EmulatorState: Sendable {
    /// One TLS connection and the virtual connections its senders opened.
    public struct Connection: Sendable, Hashable {
        /// The emulator's number for the connection (as in the message log), from 1.
        public var number: Int
        public var virtualConnections: [VirtualConnection]
    }

    /// A CONNECT that is in force: `sender` → `endpoint` (`receiver-0` or a transport id).
    public struct VirtualConnection: Sendable, Hashable {
        public var sender: String
        public var endpoint: String
    }

    /// RECEIVER_STATUS's `status` object, exactly as it would be sent.
    public var receiverStatusJSON: JSONValue
    /// The current media session's MEDIA_STATUS entry, with `currentTime` as of now; nil when
    /// nothing is loaded.
    public var mediaStatusJSON: JSONValue?
    public var connections: [Connection]

    /// The receiver status, parsed as a sender would.
    public var receiverStatus: CastReceiverStatus { CastReceiverStatus(payload: receiverStatusJSON) }
    /// The media status, parsed as a sender would.
    public var mediaStatus: CastMediaStatus? { mediaStatusJSON.flatMap(CastMediaStatus.init(json:)) }
    /// The running app, if any.
    public var runningApp: CastApplication? { receiverStatus.applications.first }
    /// Every sender id with at least one virtual connection, sorted.
    public var senders: [String] {
        Array(Set(connections.flatMap { $0.virtualConnections.map(\.sender) })).sorted()
    }
}

extension EmulatedDevice {
    func snapshot(at now: Duration) -> EmulatorState {
        EmulatorState(
            receiverStatusJSON: receiverStatusObject,
            mediaStatusJSON: player?.statusEntry(at: now, includeMedia: true),
            connections: connections.keys.sorted().map { number in
                EmulatorState.Connection(
                    number: number,
                    virtualConnections: connections[number, default: []]
                        .map { EmulatorState.VirtualConnection(sender: $0.sender, endpoint: $0.endpoint) }
                        .sorted { ($0.sender, $0.endpoint) < ($1.sender, $1.endpoint) }
                )
            }
        )
    }
}
