import CastClient
import SwiftProtobuf

/// castc's --json output: the castd.v1 message in proto3's JSON mapping, on one line
/// (lowerCamelCase names, enums by name, 64-bit integers as strings, default values omitted).
enum JSONOutput {
    static func string(_ message: some SwiftProtobuf.Message) throws -> String {
        do {
            return try message.jsonString()
        } catch {
            throw CastdError(.internal, "cannot print \(type(of: message).protoMessageName) as JSON: \(error)")
        }
    }
}
