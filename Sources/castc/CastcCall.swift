import CastClient
import SwiftProtobuf

/// One unary castd call as a command makes it: the method's descriptor (`CastdMethods.pause`,
/// which fixes the request's and the answer's types) and the request. Commands build it in a
/// function of their parsed arguments (tests check it field by field) and `run()` sends it.
struct CastcCall<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message> {
    var descriptor: CastdUnaryMethod<Request, Response>
    var request: Request

    init(_ descriptor: CastdUnaryMethod<Request, Response>, _ request: Request) {
        self.descriptor = descriptor
        self.request = request
    }

    var method: CastdMethod { descriptor.method }

    func send(_ client: CastdClient) async throws -> Response {
        try await client.unary(descriptor, request)
    }
}

/// A command that makes one call, built from its arguments alone, whose answer is a media
/// status, and prints that status (`printMedia`).
protocol MediaStatusCommand: CastcCommand {
    associatedtype Request: SwiftProtobuf.Message
    func call() -> CastcCall<Request, CastdMediaStatus>
}

extension MediaStatusCommand {
    func run() async throws {
        try options.printMedia(try await options.send(call()))
    }
}

extension GlobalOptions {
    /// Connects, makes the call, disconnects; returns the daemon's answer. One call on a
    /// connection of its own needs no event loop (`CastdClient.unaryOnce`).
    func send<Request, Response>(_ call: CastcCall<Request, Response>) async throws -> Response {
        try await CastdClient.unaryOnce(socketPath: socket, call.descriptor, call.request)
    }

    /// Prints a media status: as JSON with --json, else one line (`playing  1:23 / 9:56  Title`).
    func printMedia(_ status: CastdMediaStatus) throws {
        try print(status) { MediaSummary.line(status, at: .now) }
    }

    /// A `MediaRequest` for the selected device.
    var mediaRequest: Castd_V1_MediaRequest {
        var request = Castd_V1_MediaRequest()
        request.device = deviceSelector
        return request
    }
}
