import CastdAPI
import SwiftProtobuf

/// What CastdServer serves: the application's answers to castd.v1 calls. The transport owns the
/// socket, the connections, the frames, access (each call judged once, `ClientFrame`), deadlines,
/// cancellation and the order of writes; the handler owns what each method does. castd's is
/// `CastdService` (CastdHandlers); the seam is where another front end's calls (media served
/// from descriptors the clients pass) meet the same transport.
public protocol CastdCallHandler: Sendable {
    /// Runs one call. `send` writes one response message (a unary method sends one, a stream
    /// any number). Throws `CastdError` for a non-OK end.
    func handle(
        _ method: CastdMethod, request: [UInt8], context: CallContext,
        send: @escaping @Sendable (any SwiftProtobuf.Message) async throws -> Void
    ) async throws

    /// Whether the call is answered from the application's own state without waiting: the
    /// transport then answers it on the connection's event loop, in the read that brings it,
    /// with ``answerInline(_:request:context:)``, and starts no task for it.
    func answersInline(_ method: CastdMethod, request: [UInt8]) -> Bool

    /// The response to a call that ``answersInline(_:request:)``, computed without waiting:
    /// what ``handle(_:request:context:send:)`` would send. Throws `CastdError` like it.
    func answerInline(_ method: CastdMethod, request: [UInt8], context: CallContext) throws
        -> any SwiftProtobuf.Message

    /// Ends every stream now, each with its status (the server is shutting down).
    func endStreams()
}

/// What the transport knows about a call.
public struct CallContext: Sendable {
    /// How many clients are connected now.
    public var connectedClients: Int
    /// What the caller may do.
    public var access: Castd_V1_Access
    /// Who called (nil for calls answered inline, which change nothing).
    public var peer: PeerCredentials?

    public init(connectedClients: Int, access: Castd_V1_Access = .control, peer: PeerCredentials? = nil) {
        self.connectedClients = connectedClients
        self.access = access
        self.peer = peer
    }
}
