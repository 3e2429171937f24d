import CastdAPI
import SwiftProtobuf

/// castd.v1's handlers, one per method, each registered by its typed descriptor
/// (`CastdMethods.pause`): the handler gets the request decoded as the method's request type
/// and answers with the method's response type, so a handler of the wrong types does not
/// compile. The service's areas register their handlers (`CastdService+Media` and the like);
/// `CastdService.router` is the table, built once.
struct CastdRouter: Sendable {
    /// Writes one response message of a call.
    typealias Send = @Sendable (any SwiftProtobuf.Message) async throws -> Void
    typealias Handler =
        @Sendable (_ service: CastdService, _ request: [UInt8], _ context: CallContext, _ send: @escaping Send)
        async throws ->
        Void

    private var handlers: [CastdMethod: Handler] = [:]

    init(_ register: (inout CastdRouter) -> Void) {
        register(&self)
        let missing = CastdMethod.allCases.filter { handlers[$0] == nil }
        precondition(missing.isEmpty, "castd.v1 methods without a handler: \(missing.map(\.rawValue))")
    }

    /// The handler of `method`.
    subscript(method: CastdMethod) -> Handler {
        // `init` checked that every method has one.
        handlers[method]!
    }

    /// Checked before a method's request is decoded: whether the service can serve the method
    /// at all (a service without castd's logging cannot serve the log methods), so that it says
    /// so whatever the request.
    typealias Available = @Sendable (CastdService) throws -> Void

    /// A unary method whose handler returns its response.
    mutating func unary<Request, Response>(
        _ method: CastdUnaryMethod<Request, Response>,
        available: Available? = nil,
        _ body: @escaping @Sendable (CastdService, Request, CallContext) async throws -> Response
    ) {
        add(method.method, available) { service, bytes, context, send in
            try await send(try await body(service, try Self.decode(Request.self, bytes), context))
        }
    }

    /// A unary method whose handler returns its response already encoded (a `Response`'s bytes,
    /// shared between calls: GetStatus).
    mutating func unaryEncoded<Request, Response>(
        _ method: CastdUnaryMethod<Request, Response>,
        _ body: @escaping @Sendable (CastdService, Request, CallContext) async throws -> EncodedMessage
    ) {
        add(method.method, nil) { service, bytes, context, send in
            try await send(try await body(service, try Self.decode(Request.self, bytes), context))
        }
    }

    /// A server-streaming method: the handler sends its responses on `ResponseStream` and returns
    /// (or throws) to end the call.
    mutating func serverStreaming<Request, Response>(
        _ method: CastdServerStreamingMethod<Request, Response>,
        available: Available? = nil,
        _ body: @escaping @Sendable (CastdService, Request, CallContext, ResponseStream<Response>) async throws -> Void
    ) {
        add(method.method, available) { service, bytes, context, send in
            try await body(service, try Self.decode(Request.self, bytes), context, ResponseStream(write: send))
        }
    }

    private mutating func add(_ method: CastdMethod, _ available: Available?, _ handler: @escaping Handler) {
        precondition(handlers[method] == nil, "two handlers for \(method.rawValue)")
        guard let available else {
            handlers[method] = handler
            return
        }
        handlers[method] = { service, bytes, context, send in
            try available(service)
            try await handler(service, bytes, context, send)
        }
    }

    /// A method's request message from its bytes; INVALID_ARGUMENT if they are not one.
    static func decode<M: SwiftProtobuf.Message>(_ type: M.Type, _ bytes: [UInt8]) throws(CastdError) -> M {
        do {
            return try M(serializedBytes: bytes)
        } catch {
            throw CastdError(.invalidArgument, "malformed \(M.protoMessageName) request: \(error)")
        }
    }
}

/// Where a server-streaming handler sends its responses.
struct ResponseStream<Response: SwiftProtobuf.Message>: Sendable {
    let write: CastdRouter.Send

    func send(_ response: Response) async throws {
        try await write(response)
    }

    /// A response already encoded (a `Response`'s bytes, shared between watchers).
    func send(encoded response: EncodedMessage) async throws {
        try await write(response)
    }
}
