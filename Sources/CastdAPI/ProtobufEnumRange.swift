#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import SwiftProtobuf

// Protobuf enums are int32 on the wire, but SwiftProtobuf's generated enums hold any `Int` in
// `.UNRECOGNIZED(n)`. SwiftProtobuf sizes an enum field as an int32 and then writes the whole
// varint, so an enum outside the int32 range writes past the buffer it sized (only an `assert`,
// dropped in release builds, guards it). Everything that turns a number from outside — a device's
// JSON, a file — into an enum goes through `init(checkedRawValue:)`; tests and the fuzzers check
// what castd publishes with `outOfRangeEnumFields(in:)`.

extension SwiftProtobuf.Enum {
    /// The enum for a number from outside castd: the named case, `.UNRECOGNIZED(n)` for another
    /// number protobuf can carry, nil for a number outside the int32 range.
    public init?(checkedRawValue raw: Int64) {
        guard let value = Int32(exactly: raw) else { return nil }
        self.init(rawValue: Int(value))
    }
}

/// The enum fields of `message`, at any depth, whose value does not fit protobuf's int32: each
/// as "field path = value". Empty when the message encodes safely.
public func outOfRangeEnumFields(in message: some SwiftProtobuf.Message) -> [String] {
    var visitor = EnumRangeVisitor()
    try? message.traverse(visitor: &visitor)
    return visitor.found
}

private struct EnumRangeVisitor: SwiftProtobuf.Visitor {
    var path: [Int] = []
    var found: [String] = []

    mutating func check(_ raw: Int, _ fieldNumber: Int) {
        if Int32(exactly: raw) == nil {
            found.append((path + [fieldNumber]).map(String.init).joined(separator: ".") + " = \(raw)")
        }
    }

    mutating func visitSingularEnumField<E: SwiftProtobuf.Enum>(value: E, fieldNumber: Int) throws {
        check(value.rawValue, fieldNumber)
    }

    mutating func visitSingularMessageField<M: SwiftProtobuf.Message>(value: M, fieldNumber: Int) throws {
        path.append(fieldNumber)
        defer { path.removeLast() }
        try value.traverse(visitor: &self)
    }

    mutating func visitMapField<KeyType, ValueType>(
        fieldType: _ProtobufEnumMap<KeyType, ValueType>.Type,
        value: _ProtobufEnumMap<KeyType, ValueType>.BaseType,
        fieldNumber: Int
    ) throws where ValueType.RawValue == Int {
        for element in value.values { check(element.rawValue, fieldNumber) }
    }

    mutating func visitMapField<KeyType, ValueType>(
        fieldType: _ProtobufMessageMap<KeyType, ValueType>.Type,
        value: _ProtobufMessageMap<KeyType, ValueType>.BaseType,
        fieldNumber: Int
    ) throws {
        for element in value.values { try visitSingularMessageField(value: element, fieldNumber: fieldNumber) }
    }

    // Fields that hold no enum.
    mutating func visitMapField<KeyType, ValueType: MapValueType>(
        fieldType: _ProtobufMap<KeyType, ValueType>.Type,
        value: _ProtobufMap<KeyType, ValueType>.BaseType,
        fieldNumber: Int
    ) throws {}
    mutating func visitSingularDoubleField(value: Double, fieldNumber: Int) throws {}
    mutating func visitSingularInt64Field(value: Int64, fieldNumber: Int) throws {}
    mutating func visitSingularUInt64Field(value: UInt64, fieldNumber: Int) throws {}
    mutating func visitSingularBoolField(value: Bool, fieldNumber: Int) throws {}
    mutating func visitSingularStringField(value: String, fieldNumber: Int) throws {}
    mutating func visitSingularBytesField(value: Data, fieldNumber: Int) throws {}
    mutating func visitUnknown(bytes: Data) throws {}
}
