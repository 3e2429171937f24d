import Foundation
import SwiftProtobuf

/// Bytes already in protobuf's binary form, sent as a response message as they are. Its binary
/// serialization is exactly its bytes (`Visitor.visitUnknown`), so `FrameWriter` needs nothing
/// special for it. castd only ever writes it; nothing decodes one.
public struct EncodedMessage: SwiftProtobuf.Message {
    public static let protoMessageName = "castd.v1.EncodedMessage"
    public var bytes = Data()
    public var unknownFields = UnknownStorage()

    public init() {}

    public init(_ bytes: Data) {
        self.bytes = bytes
    }

    public mutating func decodeMessage<D: SwiftProtobuf.Decoder>(decoder: inout D) throws {
        while try decoder.nextFieldNumber() != nil {}
    }

    public func traverse<V: SwiftProtobuf.Visitor>(visitor: inout V) throws {
        try visitor.visitUnknown(bytes: bytes)
    }

    public func isEqualTo(message: any SwiftProtobuf.Message) -> Bool {
        (message as? EncodedMessage)?.bytes == bytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
    }

    public var debugDescription: String { "EncodedMessage(\(bytes.count) bytes)" }
}
