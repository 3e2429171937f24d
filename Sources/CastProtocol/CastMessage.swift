import Foundation
import SwiftProtobuf

/// One CastV2 message: the protobuf that travels, length-prefixed, on a device's TLS link.
public typealias CastMessage = Extensions_Api_CastChannel_CastMessage
public typealias DeviceAuthMessage = Extensions_Api_CastChannel_DeviceAuthMessage
public typealias AuthChallenge = Extensions_Api_CastChannel_AuthChallenge
public typealias AuthResponse = Extensions_Api_CastChannel_AuthResponse
public typealias AuthError = Extensions_Api_CastChannel_AuthError
public typealias AuthHashAlgorithm = Extensions_Api_CastChannel_HashAlgorithm

/// Fixed facts of the CastV2 wire.
public enum CastWire {
    /// The largest body a frame may carry; bigger (or empty) frames close the link.
    public static let maximumFrameLength = 65_536
    /// The platform endpoint on every device.
    public static let platformReceiverID = "receiver-0"
    /// Destination of broadcasts.
    public static let broadcastID = "*"
    public static let defaultPort = 8009
}

/// The namespaces castd speaks.
public enum CastNamespace {
    public static let connection = "urn:x-cast:com.google.cast.tp.connection"
    public static let heartbeat = "urn:x-cast:com.google.cast.tp.heartbeat"
    public static let deviceAuth = "urn:x-cast:com.google.cast.tp.deviceauth"
    public static let receiver = "urn:x-cast:com.google.cast.receiver"
    public static let media = "urn:x-cast:com.google.cast.media"
    public static let multizone = "urn:x-cast:com.google.cast.multizone"

    /// The Cast platform's own namespaces (`com.google.cast.*`); apps use others.
    public static func isPlatform(_ namespace: String) -> Bool {
        namespace.hasPrefix("urn:x-cast:com.google.cast.")
    }

    /// `tp.*` namespaces need no virtual connection.
    public static func isTransport(_ namespace: String) -> Bool {
        namespace.hasPrefix("urn:x-cast:com.google.cast.tp.")
    }
}

/// The `type` of the messages castd reads by type (requests are typed: `MediaRequest`,
/// `ReceiverRequest`).
public enum CastMessageType {
    public static let receiverStatus = "RECEIVER_STATUS"
    public static let mediaStatus = "MEDIA_STATUS"
    /// On the media namespace: the receiver's queue changed.
    public static let queueChange = "QUEUE_CHANGE"
    /// On the connection namespace: a sender opens a virtual connection.
    public static let connect = "CONNECT"
    /// On the connection namespace: the other side closed a virtual connection.
    public static let close = "CLOSE"
    /// On the heartbeat namespace: either side asks whether the other is there.
    public static let ping = "PING"
    /// On the heartbeat namespace: the answer to a PING.
    public static let pong = "PONG"
}

/// Well-known app ids.
public enum CastAppID {
    public static let defaultMediaReceiver = "CC1AD845"
    public static let backdrop = "E8C28D3C"
}

extension CastMessage {
    /// A message with a JSON payload. `protocol_version` and `payload_type` are set explicitly so
    /// that they are on the wire even though their values are 0.
    public static func json(
        source: String,
        destination: String,
        namespace: String,
        payload: JSONValue
    ) -> CastMessage {
        string(source: source, destination: destination, namespace: namespace, text: payload.jsonString)
    }

    public static func string(source: String, destination: String, namespace: String, text: String) -> CastMessage {
        var message = CastMessage()
        message.protocolVersion = .castv210
        message.sourceID = source
        message.destinationID = destination
        message.namespace = namespace
        message.payloadType = .string
        message.payloadUtf8 = text
        return message
    }

    public static func binary(source: String, destination: String, namespace: String, bytes: Data) -> CastMessage {
        var message = CastMessage()
        message.protocolVersion = .castv210
        message.sourceID = source
        message.destinationID = destination
        message.namespace = namespace
        message.payloadType = .binary
        message.payloadBinary = bytes
        return message
    }

    /// Checks what a receiver checks: ids and namespace present, the payload matching its type.
    public func validate() throws {
        guard hasProtocolVersion, hasSourceID, hasDestinationID, hasNamespace, hasPayloadType else {
            throw CastProtocolError.invalidMessage("a required field is missing")
        }
        if sourceID.isEmpty { throw CastProtocolError.invalidMessage("empty source_id") }
        if destinationID.isEmpty { throw CastProtocolError.invalidMessage("empty destination_id") }
        if namespace.isEmpty { throw CastProtocolError.invalidMessage("empty namespace") }
        switch payloadType {
        case .string:
            guard hasPayloadUtf8, !hasPayloadBinary else {
                throw CastProtocolError.invalidMessage("payload_type STRING without payload_utf8")
            }
        case .binary:
            guard hasPayloadBinary, !hasPayloadUtf8 else {
                throw CastProtocolError.invalidMessage("payload_type BINARY without payload_binary")
            }
        }
    }

    /// The JSON payload of a STRING message.
    public func jsonPayload() throws -> JSONValue {
        guard payloadType == .string, hasPayloadUtf8 else {
            throw CastProtocolError.invalidMessage("binary payload on JSON namespace \(namespace)")
        }
        return try JSONValue.parse(payloadUtf8)
    }

    /// Serializes the message as a frame body (without its length prefix). Fails if the body is
    /// over the 64 KiB limit: that request fails, the link does not.
    public func frameBody() throws -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = try serializedBytes()
        } catch {
            throw CastProtocolError.invalidMessage("cannot encode: \(error)")
        }
        guard bytes.count <= CastWire.maximumFrameLength else {
            throw CastProtocolError.messageTooLarge(bytes.count)
        }
        return bytes
    }

    /// Decodes and validates one frame body.
    public static func decodeFrameBody<Bytes: SwiftProtobufContiguousBytes>(_ body: Bytes) throws -> CastMessage {
        let message: CastMessage
        do {
            message = try CastMessage(serializedBytes: body)
        } catch {
            throw CastProtocolError.invalidMessage("not a CastMessage: \(error)")
        }
        try message.validate()
        return message
    }

    /// A one-line description for logs.
    public var summary: String {
        let body: String
        if payloadType == .binary {
            body = "<\(payloadBinary.count) bytes>"
        } else {
            body = payloadUtf8.count > 300 ? String(payloadUtf8.prefix(300)) + "…" : payloadUtf8
        }
        return "\(sourceID) → \(destinationID) [\(namespace)] \(body)"
    }
}

/// What the CastV2 layer refuses.
public enum CastProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidMessage(String)
    case invalidJSON(String)
    case messageTooLarge(Int)
    case unexpectedPayload(String)

    public var description: String {
        switch self {
        case .invalidMessage(let why): return "invalid CastMessage: \(why)"
        case .invalidJSON(let why): return "invalid JSON payload: \(why)"
        case .messageTooLarge(let n): return "message of \(n) bytes is over the 65536-byte CastV2 limit"
        case .unexpectedPayload(let why): return "unexpected payload: \(why)"
        }
    }
}
