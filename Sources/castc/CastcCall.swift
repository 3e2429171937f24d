import CastClient
import SwiftProtobuf

/// One unary castd call as a command makes it: the method and the request. Commands build it in
/// a function of their parsed arguments (tests check it field by field) and `run()` sends it.
struct CastcCall<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message> {
    var method: CastdMethod
    var request: Request

    init(_ method: CastdMethod, _ request: Request, returning: Response.Type = Response.self) {
        self.method = method
        self.request = request
    }

    func send(_ client: CastdClient) async throws -> Response {
        try await client.unary(method, request, as: Response.self)
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
        try await CastdClient.unaryOnce(socketPath: socket, call.method, call.request, as: Response.self)
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
