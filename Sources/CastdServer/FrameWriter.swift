import CastdAPI
import Foundation
import NIOCore
import SwiftProtobuf

/// Writes frames on one connection. NIO's outbound writer serializes concurrent writers; each
/// frame is one buffer, its length prefix included (`CastdRPC.write`, as for the answers
/// `ClientFrameHandler` writes itself), so frames never interleave.
struct FrameWriter: Sendable {
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    let allocator: ByteBufferAllocator

    func message(callID: UInt64, _ message: any SwiftProtobuf.Message) async throws {
        try await outbound.write(frame(callID: callID, message))
    }

    /// A message frame, encoded, to write later.
    func frame(callID: UInt64, _ message: any SwiftProtobuf.Message) throws -> ByteBuffer {
        try encode(Self.messageFrame(callID: callID, try message.serializedData()))
    }

    /// Ends a call: OK when `error` is nil. `response`, a unary call's message frame, goes in
    /// the same write, just before the status.
    func status(callID: UInt64, _ error: CastdError?, after response: ByteBuffer? = nil) async {
        guard let status = try? encode(Self.statusFrame(callID: callID, error)) else { return }
        if let response {
            try? await outbound.write(contentsOf: [response, status])
        } else {
            try? await outbound.write(status)
        }
    }

    /// Ends a unary call with its encoded response, or with why there is none.
    func answer(callID: UInt64, _ result: Result<Data, CastdError>) async {
        switch result {
        case .success(let response):
            await status(callID: callID, nil, after: try? encode(Self.messageFrame(callID: callID, response)))
        case .failure(let error):
            await status(callID: callID, error)
        }
    }

    /// The frame carrying one of a call's response messages, already encoded.
    static func messageFrame(callID: UInt64, _ message: Data) -> Castd_V1_Frame {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        frame.message = message
        return frame
    }

    /// The frame that ends a call: OK when `error` is nil.
    static func statusFrame(callID: UInt64, _ error: CastdError?) -> Castd_V1_Frame {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        frame.status = error?.status ?? Castd_V1_Status()
        return frame
    }

    private func encode(_ frame: Castd_V1_Frame) throws -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 0)
        try CastdRPC.write(frame, into: &buffer)
        return buffer
    }
}
