import Foundation
import SwiftProtobuf

/// Bytes already in protobuf's binary form, sent as a response message as they are. Its binary
/// serialization is exactly its bytes (`Visitor.visitUnknown`), so `FrameWriter` needs nothing
/// special for it. castd only ever writes it; nothing decodes one.
struct EncodedMessage: SwiftProtobuf.Message {
    static let protoMessageName = "castd.v1.EncodedMessage"
    var bytes = Data()
    var unknownFields = UnknownStorage()

    init() {}

    init(_ bytes: Data) {
        self.bytes = bytes
    }

    mutating func decodeMessage<D: SwiftProtobuf.Decoder>(decoder: inout D) throws {
        while try decoder.nextFieldNumber() != nil {}
    }

    func traverse<V: SwiftProtobuf.Visitor>(visitor: inout V) throws {
        try visitor.visitUnknown(bytes: bytes)
    }

    func isEqualTo(message: any SwiftProtobuf.Message) -> Bool {
        (message as? EncodedMessage)?.bytes == bytes
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
    }

    var debugDescription: String { "EncodedMessage(\(bytes.count) bytes)" }
}
