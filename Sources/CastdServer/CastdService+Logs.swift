import CastdAPI
import SwiftProtobuf

extension CastdService {
    /// GetLogFilter, SetLogFilter and StreamLogs.
    func handleLogs(
        _ method: CastdMethod, request: [UInt8], send: @Sendable (any SwiftProtobuf.Message) async throws -> Void
    ) async throws {
        throw CastdError(.unimplemented, "\(method.rawValue) is not served yet")
    }
}
