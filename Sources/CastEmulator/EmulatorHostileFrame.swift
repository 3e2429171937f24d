import CastProtocol

/// One thing a hostile (or badly broken) device writes on its senders' links: a frame that
/// breaks CastV2's framing, a frame that holds no valid CastMessage, or a valid CastMessage whose
/// payload a sender must not trust. ``CastDeviceEmulator/sendHostile(_:)`` writes it on every
/// open link, below the emulator's own encoder; `POST /emulator/faults/hostile` with `{"kind"}`
/// does the same (``kind`` is the name there).
///
/// What a sender should do with each (castd does so):
/// - framing broken (``breaksFraming``: over 64 KiB, or length 0): the stream cannot be trusted
///   after it, so the link is closed, with the reason;
/// - a frame that is not a valid CastMessage, a binary payload on a JSON namespace, JSON that
///   is not JSON or nests too deep: that message is skipped, the link goes on;
/// - JSON of the wrong types: the fields that cannot be read are ignored, the rest is used.
public enum EmulatorHostileFrame: Sendable, Hashable, CustomStringConvertible {
    // MARK: framing

    /// A length prefix over the 65,536-byte CastV2 maximum (`length` from 65,537 to 2³²−1),
    /// followed by `trailingBytes` bytes (0xAB) of the body it announces.
    case oversizedFrame(length: UInt32 = 65_537, trailingBytes: Int = 0)
    /// A length prefix of 0: a frame with no body, which CastV2 does not allow.
    case zeroLengthFrame

    // MARK: frames that are not valid CastMessages

    /// A frame of a valid length (1 to 65,536) whose body (0xFF bytes) is not a protobuf.
    case garbageFrame(length: Int = 64)
    /// A frame holding a real RECEIVER_STATUS CastMessage cut off in the middle of its payload
    /// (the length prefix is the cut length: the framing stays intact).
    case truncatedMessage
    /// A RECEIVER_STATUS broadcast with `source_id` "".
    case emptySourceID
    /// A RECEIVER_STATUS broadcast with `destination_id` "".
    case emptyDestinationID
    /// A RECEIVER_STATUS broadcast with `namespace` "".
    case emptyNamespace
    /// `payload_type` STRING with the payload in `payload_binary` and no `payload_utf8`.
    case stringTypeWithBinaryPayload
    /// `payload_type` BINARY with the payload in `payload_utf8` and no `payload_binary`.
    case binaryTypeWithUTF8Payload

    // MARK: valid CastMessages with payloads a sender must not trust

    /// A real status of `namespace` (MEDIA_STATUS on the media namespace, RECEIVER_STATUS
    /// otherwise) sent as `payload_type` BINARY on that JSON namespace.
    case binaryPayload(namespace: String = CastNamespace.media)
    /// MEDIA_STATUS whose `status` is a string.
    case mediaStatusString
    /// MEDIA_STATUS whose entry has `mediaSessionId` "abc" (letters, not a number).
    case mediaSessionIDLetters
    /// MEDIA_STATUS whose entry has `currentTime` as an object.
    case currentTimeObject
    /// MEDIA_STATUS whose entry has `volume.level` "loud".
    case volumeLevelString
    /// RECEIVER_STATUS whose `volume.level` is "loud".
    case receiverVolumeLevelString
    /// RECEIVER_STATUS whose `applications` is an object (the running app, not in an array).
    case applicationsNotArray
    /// MEDIA_STATUS whose numbers are out of every range castd publishes them in: the media's
    /// and a queue item's `metadataType` ±2⁴⁰, image and track sizes of 2⁴⁰ and −1,
    /// `supportedMediaCommands` of 2⁶⁰, ids of 10²⁰.
    case outOfRangeNumbers
    /// Text that is not JSON, on `namespace`.
    case notJSON(namespace: String = CastNamespace.receiver)
    /// A MEDIA_STATUS (on `namespace`) whose `status` is `depth` nested arrays. 10,000 levels fit
    /// in a frame (at most 32,000).
    case deeplyNested(depth: Int = 10_000, namespace: String = CastNamespace.media)

    /// Every kind's name, as `POST /emulator/faults/hostile` takes it.
    public static let kinds = [
        "oversized-frame", "zero-length-frame", "garbage-frame", "truncated-message", "empty-source-id",
        "empty-destination-id", "empty-namespace", "string-type-binary-payload", "binary-type-utf8-payload",
        "binary-payload", "media-status-string", "media-session-id-letters", "current-time-object",
        "volume-level-string", "receiver-volume-level-string", "applications-not-array", "out-of-range-numbers",
        "not-json", "deeply-nested",
    ]

    /// The deepest nesting ``deeplyNested(depth:namespace:)`` takes: two bytes a level, within
    /// a 64 KiB frame.
    public static let maximumDepth = 32_000

    /// The name of this kind (see ``kinds``).
    public var kind: String {
        switch self {
        case .oversizedFrame: "oversized-frame"
        case .zeroLengthFrame: "zero-length-frame"
        case .garbageFrame: "garbage-frame"
        case .truncatedMessage: "truncated-message"
        case .emptySourceID: "empty-source-id"
        case .emptyDestinationID: "empty-destination-id"
        case .emptyNamespace: "empty-namespace"
        case .stringTypeWithBinaryPayload: "string-type-binary-payload"
        case .binaryTypeWithUTF8Payload: "binary-type-utf8-payload"
        case .binaryPayload: "binary-payload"
        case .mediaStatusString: "media-status-string"
        case .mediaSessionIDLetters: "media-session-id-letters"
        case .currentTimeObject: "current-time-object"
        case .volumeLevelString: "volume-level-string"
        case .receiverVolumeLevelString: "receiver-volume-level-string"
        case .applicationsNotArray: "applications-not-array"
        case .outOfRangeNumbers: "out-of-range-numbers"
        case .notJSON: "not-json"
        case .deeplyNested: "deeply-nested"
        }
    }

    /// Whether it breaks CastV2's framing: after it the stream cannot be trusted, and a sender
    /// closes the link.
    public var breaksFraming: Bool {
        switch self {
        case .oversizedFrame, .zeroLengthFrame: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .oversizedFrame(let length, let trailing): "\(kind) (length \(length), \(trailing) bytes after it)"
        case .garbageFrame(let length): "\(kind) (\(length) bytes)"
        case .binaryPayload(let namespace), .notJSON(let namespace): "\(kind) on \(namespace)"
        case .deeplyNested(let depth, let namespace): "\(kind) (\(depth) levels) on \(namespace)"
        default: kind
        }
    }

    /// Throws `invalidArgument` for values out of range.
    func validate() throws {
        switch self {
        case .oversizedFrame(let length, let trailing):
            guard Int(length) > CastWire.maximumFrameLength else {
                throw EmulatorError(
                    .invalidArgument, "an oversized frame's length must be over \(CastWire.maximumFrameLength)")
            }
            guard (0...CastWire.maximumFrameLength).contains(trailing) else {
                throw EmulatorError(.invalidArgument, "trailing bytes must be 0 to \(CastWire.maximumFrameLength)")
            }
        case .garbageFrame(let length):
            guard (1...CastWire.maximumFrameLength).contains(length) else {
                throw EmulatorError(
                    .invalidArgument, "a garbage frame's length must be 1 to \(CastWire.maximumFrameLength)")
            }
        case .deeplyNested(let depth, let namespace):
            guard (1...Self.maximumDepth).contains(depth) else {
                throw EmulatorError(.invalidArgument, "depth must be 1 to \(Self.maximumDepth)")
            }
            try Self.validate(namespace: namespace)
        case .binaryPayload(let namespace), .notJSON(let namespace):
            try Self.validate(namespace: namespace)
        default:
            break
        }
    }

    private static func validate(namespace: String) throws {
        guard namespace.hasPrefix("urn:x-cast:"), namespace.utf8.count <= 256 else {
            throw EmulatorError(.invalidArgument, "the namespace must start with urn:x-cast: (at most 256 bytes)")
        }
    }

    /// The keys `POST /emulator/faults/hostile` takes, with the kinds each applies to.
    static let controlKeys: [String: Set<String>] = [
        "kind": Set(kinds),
        "length": ["oversized-frame", "garbage-frame"],
        "trailingBytes": ["oversized-frame"],
        "namespace": ["binary-payload", "not-json", "deeply-nested"],
        "depth": ["deeply-nested"],
    ]

    /// The frame a `POST /emulator/faults/hostile` body asks for.
    init(control body: ControlRequestBody) throws(ControlRequestError) {
        guard let kind = try body.string("kind") else {
            throw ControlRequestError(key: "kind", "is required: one of \(Self.kinds.joined(separator: ", "))")
        }
        guard Self.kinds.contains(kind) else {
            throw ControlRequestError(key: "kind", "must be one of \(Self.kinds.joined(separator: ", "))")
        }
        if let key = body.fields.keys.sorted().first(where: {
            $0 != "kind" && Self.controlKeys[$0]?.contains(kind) != true && body.fields[$0]?.isNull == false
        }) {
            let takes = Self.controlKeys.filter { $0.key != "kind" && $0.value.contains(kind) }.keys.sorted()
            throw ControlRequestError(
                key: key,
                "does not apply to \(kind) (it takes \(takes.isEmpty ? "no other key" : takes.joined(separator: ", ")))"
            )
        }
        func namespace(_ fallback: String) throws(ControlRequestError) -> String {
            guard let namespace = try body.string("namespace") else { return fallback }
            guard namespace.hasPrefix("urn:x-cast:"), namespace.utf8.count <= 256 else {
                throw ControlRequestError(key: "namespace", "must start with urn:x-cast: (at most 256 bytes)")
            }
            return namespace
        }
        switch kind {
        case "oversized-frame":
            let length = try body.integer("length", in: (CastWire.maximumFrameLength + 1)...Int(UInt32.max)) ?? 65_537
            let trailing = try body.integer("trailingBytes", in: 0...CastWire.maximumFrameLength) ?? 0
            self = .oversizedFrame(length: UInt32(length), trailingBytes: trailing)
        case "zero-length-frame": self = .zeroLengthFrame
        case "garbage-frame":
            self = .garbageFrame(length: try body.integer("length", in: 1...CastWire.maximumFrameLength) ?? 64)
        case "truncated-message": self = .truncatedMessage
        case "empty-source-id": self = .emptySourceID
        case "empty-destination-id": self = .emptyDestinationID
        case "empty-namespace": self = .emptyNamespace
        case "string-type-binary-payload": self = .stringTypeWithBinaryPayload
        case "binary-type-utf8-payload": self = .binaryTypeWithUTF8Payload
        case "binary-payload": self = .binaryPayload(namespace: try namespace(CastNamespace.media))
        case "media-status-string": self = .mediaStatusString
        case "media-session-id-letters": self = .mediaSessionIDLetters
        case "current-time-object": self = .currentTimeObject
        case "volume-level-string": self = .volumeLevelString
        case "receiver-volume-level-string": self = .receiverVolumeLevelString
        case "applications-not-array": self = .applicationsNotArray
        case "out-of-range-numbers": self = .outOfRangeNumbers
        case "not-json": self = .notJSON(namespace: try namespace(CastNamespace.receiver))
        default:
            self = .deeplyNested(
                depth: try body.integer("depth", in: 1...Self.maximumDepth) ?? 10_000,
                namespace: try namespace(CastNamespace.media))
        }
    }
}
