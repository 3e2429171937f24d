import CastProtocol
import NIOHTTP1

/// The emulator's own HTTP interface, under `/emulator/` on the device-description servers
/// (`--http-port`, `--https-port`): what tests and app developers ask of the emulator itself,
/// never something a real device serves.
///
/// - `GET /emulator` — the list of routes.
/// - `GET /emulator/state` — ``EmulatorState/json``: the running app, the media session, the
///   device volume, connected senders, and the last 100 launches and loads with what senders
///   sent (language, app types, credentials).
///
/// Routes are a table of method, path and handler, each answering JSON, so that the fault
/// injection to come (`POST /emulator/faults/…` with a JSON body) joins it without changing the
/// server. Unknown paths under `/emulator/` are 404 and known paths with another method 405, both
/// with a JSON `error`.
extension CastDeviceEmulator {
    struct ControlRoute: Sendable {
        var method: HTTPMethod
        var path: String
        var summary: String
        var handle: @Sendable (CastDeviceEmulator, _ body: [UInt8]) -> HTTPResponse
    }

    static let controlPrefix = "/emulator"

    static let controlRoutes: [ControlRoute] = [
        ControlRoute(method: .GET, path: "/emulator", summary: "this list of routes") { _, _ in
            HTTPResponse(.ok, json: ["routes": .array(controlRoutes.map(\.json))])
        },
        ControlRoute(
            method: .GET, path: "/emulator/state",
            summary: "the running app, media session, volume, senders, last launches and loads"
        ) { emulator, _ in
            HTTPResponse(.ok, json: emulator.currentState().json)
        },
    ]

    /// The answer of the control interface, or nil when `path` is not one of its paths.
    func respondToControl(method: HTTPMethod, path: String, body: [UInt8]) -> HTTPResponse? {
        let path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        guard path == Self.controlPrefix || path.hasPrefix(Self.controlPrefix + "/") else { return nil }
        let routes = Self.controlRoutes.filter { $0.path == path }
        guard !routes.isEmpty else {
            return HTTPResponse(
                .notFound,
                json: ["error": .string("no route \(path)"), "routes": .array(Self.controlRoutes.map(\.json))]
            )
        }
        let wanted: HTTPMethod = method == .HEAD ? .GET : method
        guard let route = routes.first(where: { $0.method == wanted }) else {
            let allowed = routes.map(\.method.rawValue).joined(separator: ", ")
            return HTTPResponse(
                .methodNotAllowed, json: ["error": .string("\(method.rawValue) \(path): allowed \(allowed)")],
                headers: [("Allow", allowed)]
            )
        }
        return route.handle(self, body)
    }
}

extension CastDeviceEmulator.ControlRoute {
    var json: JSONValue {
        ["method": .string(method.rawValue), "path": .string(path), "summary": .string(summary)]
    }
}
