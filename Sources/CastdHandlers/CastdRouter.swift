import CastdServer
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

    /// The answer to a call castd gives from its own state without waiting (see `inline`).
    typealias InlineHandler =
        @Sendable (_ service: CastdService, _ request: [UInt8], _ context: CallContext) throws -> any SwiftProtobuf
        .Message

    private struct Inline: Sendable {
        /// Which requests are answered inline, judged on their bytes before they are decoded
        /// (and on how the service is set up).
        let accepts: @Sendable (CastdService, [UInt8]) -> Bool
        let answer: InlineHandler
    }

    private var handlers: [CastdMethod: Handler] = [:]
    private var inline: [CastdMethod: Inline] = [:]

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

    /// Whether castd answers this call from its own state, without waiting: CastdServer then
    /// answers it on the connection's event loop, in the read that brings it, with
    /// `answerInline`, and starts no task for it.
    func answersInline(_ method: CastdMethod, service: CastdService, request: [UInt8]) -> Bool {
        inline[method]?.accepts(service, request) ?? false
    }

    /// The response of a call that `answersInline`, computed without waiting: what the method's
    /// handler would send. Throws `CastdError` like the handler.
    func answerInline(
        _ method: CastdMethod, service: CastdService, request: [UInt8], context: CallContext
    ) throws -> any SwiftProtobuf.Message {
        guard let inline = inline[method], inline.accepts(service, request) else {
            throw CastdError(.internal, "\(method.path) is not answered inline")
        }
        return try inline.answer(service, request, context)
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
            try await send(try await body(service, try Self.request(method.method, bytes), context))
        }
    }

    /// A unary method castd answers from its own state without waiting, for every request: its
    /// handler returns the response already encoded (a `Response`'s bytes, shared between calls:
    /// GetStatus). Answered inline (`answersInline`).
    mutating func inlineEncoded<Request, Response>(
        _ method: CastdUnaryMethod<Request, Response>,
        _ body: @escaping @Sendable (CastdService, Request, CallContext) throws -> EncodedMessage
    ) {
        let answer: InlineHandler = { service, bytes, context in
            try body(service, try Self.request(method.method, bytes), context)
        }
        inline[method.method] = Inline(accepts: { _, _ in true }, answer: answer)
        add(method.method, nil) { service, bytes, context, send in
            try await send(try answer(service, bytes, context))
        }
    }

    /// A unary method that castd answers from its own state without waiting for the requests
    /// `accepts` takes (judged on their bytes: ListDevices without criteria is the empty
    /// request, when castd has no criterion of its own), with `inline`; every other request goes
    /// to `body`.
    mutating func unary<Request, Response>(
        _ method: CastdUnaryMethod<Request, Response>,
        inlineWhen accepts: @escaping @Sendable (CastdService, [UInt8]) -> Bool,
        inline: @escaping @Sendable (CastdService, Request, CallContext) throws -> Response,
        _ body: @escaping @Sendable (CastdService, Request, CallContext) async throws -> Response
    ) {
        let answer: InlineHandler = { service, bytes, context in
            try inline(service, try Self.request(method.method, bytes), context)
        }
        self.inline[method.method] = Inline(accepts: accepts, answer: answer)
        add(method.method, nil) { service, bytes, context, send in
            if accepts(service, bytes) {
                try await send(try answer(service, bytes, context))
            } else {
                try await send(try await body(service, try Self.request(method.method, bytes), context))
            }
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
            try await body(service, try Self.request(method.method, bytes), context, ResponseStream(write: send))
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

    /// A method's request from its bytes, checked against the method's rules
    /// (``CastdValidation/check(_:for:)``): what every handler gets. INVALID_ARGUMENT if the
    /// bytes are not a request of its type, or the request breaks a rule.
    static func request<M: SwiftProtobuf.Message>(_ method: CastdMethod, _ bytes: [UInt8]) throws(CastdError) -> M {
        let request = try decode(M.self, bytes)
        try CastdValidation.check(request, for: method)
        return request
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
