import CastProtocol
import Foundation
import NIOHTTP1

/// The emulator's own HTTP interface, under `/emulator/` on the device-description servers
/// (`--http-port`, `--https-port`): what tests and app developers ask of the emulator itself,
/// never something a real device serves.
///
/// - `GET /emulator` — the list of routes.
/// - `GET /emulator/state` — ``EmulatorState/json``: the running app, the media session, the
///   device volume, connected senders, the last 100 launches and loads with what senders sent
///   (language, app types, credentials), the faults being played and the endpoints.
/// - `GET /emulator/faults` — `{"heartbeat", "refuseTLS", "replyDelayMs", "listening"}`.
/// - `POST /emulator/faults` — any of `{"heartbeat": "normal"|"stopped"|"silent",
///   "refuseTLS": bool, "replyDelayMs": number}` (``EmulatorFaults``); answers the faults.
/// - `POST /emulator/faults/clear` — no fault any more (heartbeat normal, TLS accepted, no delay).
/// - `POST /emulator/faults/drop-links` — cuts every link: `{"dropped": n}`.
/// - `POST /emulator/faults/restart` `{"downtimeMs": 1000, "wait": true}` — down for that long,
///   then back on the same port with the same session; answers once back (`{"endpoints"}`), or
///   at once with 202 when `wait` is false.
/// - `POST /emulator/faults/stop-listening`, `POST /emulator/faults/resume-listening` — the two
///   halves of a restart, for a downtime of the caller's choosing.
/// - `POST /emulator/faults/move-port` `{"port": 0}` — listens on another port (0: any free
///   one): `{"endpoints"}`.
/// - `POST /emulator/faults/hostile` `{"kind": KIND, …}` — writes one hostile frame on every
///   open link (``EmulatorHostileFrame``; KIND is its ``EmulatorHostileFrame/kind``, and
///   `length`, `trailingBytes`, `namespace`, `depth` its values where it takes them):
///   `{"kind", "breaksFraming", "links"}`.
/// - `POST /emulator/faults/flood` `{"perSecond": 10000, "durationMs": 1000}` — broadcasts
///   MEDIA_STATUS at that rate to every sender connected to the app (409 with nothing
///   loaded); answers when done: `{"perSecond", "requested", "sent", "links", "linksOpen",
///   "elapsedMs", "achievedPerSecond"}`.
/// - `POST /emulator/tv` `{"standBy": bool, "activeInput": bool}`, either or both — on a
///   device started with a TV (`--tv`, ``EmulatorConfiguration/tv``): the TV's new state, told
///   to every sender; answers `{"standBy", "activeInput"}` (409 on a device without a TV).
/// - `POST /emulator/transfer` `{"to": "http://HOST:PORT"}` — moves the session to the emulator
///   whose control interface is there: `{"appId", "from": {…}, "to": {…}}`.
/// - `POST /emulator/resume-session` `{"appId", "sessionState"}` — the destination's half of a
///   transfer: `{"appId", "sessionId", "transportId", "mediaSessionId", "playerState",
///   "currentTime"}`.
///
/// Bodies are JSON objects (an empty body is `{}`). A key a route does not take, or a value of
/// the wrong type or out of range, is 400 with `{"error", "key"}`; a request the device's state
/// does not allow now (restarting while down, transferring with nothing to transfer) is 409; a
/// transfer the destination refused or did not answer is 502. Unknown paths under `/emulator/`
/// are 404 and known paths with another method 405, both with a JSON `error`.
extension CastDeviceEmulator {
    struct ControlRoute: Sendable {
        var method: HTTPMethod
        var path: String
        var summary: String
        var handle: @Sendable (CastDeviceEmulator, _ body: [UInt8]) async throws -> HTTPResponse
    }

    static let controlPrefix = "/emulator"

    static let controlRoutes: [ControlRoute] = [
        ControlRoute(method: .GET, path: "/emulator", summary: "this list of routes") { _, _ in
            HTTPResponse(.ok, json: ["routes": .array(controlRoutes.map(\.json))])
        },
        ControlRoute(
            method: .GET, path: "/emulator/state",
            summary: "the running app, media session, volume, senders, last launches and loads, faults, endpoints"
        ) { emulator, _ in
            HTTPResponse(.ok, json: emulator.currentState().json)
        },
        ControlRoute(
            method: .GET, path: "/emulator/faults", summary: "the faults played now, and whether the device listens"
        ) { emulator, _ in
            HTTPResponse(.ok, json: emulator.faultsReport())
        },
        ControlRoute(
            method: .POST, path: "/emulator/faults",
            summary: #"{"heartbeat": "normal"|"stopped"|"silent", "refuseTLS": bool, "replyDelayMs": n}, any of them"#
        ) { emulator, body in
            let request = try ControlRequestBody(body, keys: EmulatorFaults.controlKeys)
            let wanted = try emulator.faults.applying(request)
            emulator.updateFaults { $0 = wanted }
            return HTTPResponse(.ok, json: emulator.faultsReport())
        },
        ControlRoute(method: .POST, path: "/emulator/faults/clear", summary: "no fault any more") { emulator, body in
            _ = try ControlRequestBody(body, keys: [])
            emulator.setFaults(.none)
            return HTTPResponse(.ok, json: emulator.faultsReport())
        },
        ControlRoute(
            method: .POST, path: "/emulator/faults/drop-links", summary: "cut every sender's link now"
        ) { emulator, body in
            _ = try ControlRequestBody(body, keys: [])
            let dropped = await emulator.dropLinks()
            return HTTPResponse(.ok, json: ["dropped": .number(Double(dropped))])
        },
        ControlRoute(
            method: .POST, path: "/emulator/faults/restart",
            summary: #"{"downtimeMs": 1000, "wait": true}: down that long, back on the same port with the same session"#
        ) { emulator, body in
            let request = try ControlRequestBody(body, keys: ["downtimeMs", "wait"])
            let milliseconds = try request.number("downtimeMs", in: 0...3_600_000, "milliseconds") ?? 1000
            let downtime = Duration.milliseconds(Int64(milliseconds.rounded()))
            guard try request.bool("wait") ?? true else {
                try await emulator.stopListening()
                // Unstructured: the answer goes out now, and the device comes back after it.
                Task {
                    try? await Task.sleep(for: downtime)
                    do {
                        try await emulator.resumeListening()
                    } catch {
                        emulator.logger.warning("restart: could not listen again: \(error)")
                    }
                }
                return HTTPResponse(.accepted, json: ["listening": false, "downtimeMs": .number(milliseconds)])
            }
            let endpoints = try await emulator.restart(downtime: downtime)
            return HTTPResponse(.ok, json: ["listening": true, "endpoints": endpoints.json])
        },
        ControlRoute(
            method: .POST, path: "/emulator/faults/stop-listening",
            summary: "close the CastV2 listener and every link until resume-listening"
        ) { emulator, body in
            _ = try ControlRequestBody(body, keys: [])
            try await emulator.stopListening()
            return HTTPResponse(.ok, json: ["listening": false])
        },
        ControlRoute(
            method: .POST, path: "/emulator/faults/resume-listening",
            summary: "listen again on the same port, with the same session"
        ) { emulator, body in
            _ = try ControlRequestBody(body, keys: [])
            let endpoints = try await emulator.resumeListening()
            return HTTPResponse(.ok, json: ["listening": true, "endpoints": endpoints.json])
        },
        ControlRoute(
            method: .POST, path: "/emulator/faults/move-port",
            summary: #"{"port": 0}: listen on another port (0: any free one), keep the session, re-announce"#
        ) { emulator, body in
            let request = try ControlRequestBody(body, keys: ["port"])
            let port = try request.integer("port", in: 0...65535) ?? 0
            guard port == 0 || port != emulator.endpoints?.port else {
                throw ControlRequestError(key: "port", "is the port the device listens on already")
            }
            let endpoints = try await emulator.movePort(to: port)
            return HTTPResponse(.ok, json: ["endpoints": endpoints.json])
        },
        ControlRoute(
            method: .POST, path: "/emulator/faults/hostile",
            summary:
                #"{"kind": "oversized-frame"|"zero-length-frame"|"garbage-frame"|…, …}: write a hostile frame on every link"#
        ) { emulator, body in
            let request = try ControlRequestBody(body, keys: Set(EmulatorHostileFrame.controlKeys.keys))
            let frame = try EmulatorHostileFrame(control: request)
            let links = try await emulator.sendHostile(frame)
            return HTTPResponse(
                .ok,
                json: [
                    "kind": .string(frame.kind), "breaksFraming": .bool(frame.breaksFraming),
                    "links": .number(Double(links)),
                ])
        },
        ControlRoute(
            method: .POST, path: "/emulator/faults/flood",
            summary:
                #"{"perSecond": 10000, "durationMs": 1000}: broadcast that many MEDIA_STATUS a second to the app's senders"#
        ) { emulator, body in
            let request = try ControlRequestBody(body, keys: ["perSecond", "durationMs"])
            let perSecond = try request.integer("perSecond", in: 1...1_000_000) ?? 10_000
            let milliseconds = try request.integer("durationMs", in: 1...600_000) ?? 1000
            let report = try await emulator.floodMediaStatus(perSecond: perSecond, for: .milliseconds(milliseconds))
            return HTTPResponse(.ok, json: report.json)
        },
        ControlRoute(
            method: .POST, path: "/emulator/tv",
            summary: #"{"standBy": bool, "activeInput": bool}, either or both: the TV's state now (--tv)"#
        ) { emulator, body in
            let request = try ControlRequestBody(body, keys: ["standBy", "activeInput"])
            let standBy = try request.bool("standBy")
            let activeInput = try request.bool("activeInput")
            guard standBy != nil || activeInput != nil else {
                throw ControlRequestError(key: nil, "give standBy, activeInput, or both")
            }
            return HTTPResponse(.ok, json: try emulator.changeTV(standBy: standBy, activeInput: activeInput).json)
        },
        ControlRoute(
            method: .POST, path: "/emulator/transfer",
            summary: #"{"to": "http://HOST:PORT"}: move the session to the emulator whose control interface is there"#
        ) { emulator, body in
            let request = try ControlRequestBody(body, keys: ["to"])
            guard let to = try request.string("to") else { throw ControlRequestError(key: "to", "is required") }
            guard let url = URL(string: to), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host?.isEmpty == false, url.port != nil, url.path.isEmpty || url.path == "/",
                url.query == nil
            else {
                throw ControlRequestError(key: "to", "must be the destination's control address, http://HOST:PORT")
            }
            let transfer = try await emulator.transferSession(toControlURL: url)
            return HTTPResponse(.ok, json: transfer.json)
        },
        ControlRoute(
            method: .POST, path: "/emulator/resume-session",
            summary: #"{"appId": "CC1AD845", "sessionState": {…}}: run the app and resume a session moved here"#
        ) { emulator, body in
            let request = try ControlRequestBody(body, keys: ["appId", "sessionState"])
            guard let appID = try request.string("appId") else {
                throw ControlRequestError(key: "appId", "is required")
            }
            guard let sessionState = try request.object("sessionState") else {
                throw ControlRequestError(key: "sessionState", "is required")
            }
            do throws(EmulatedDevice.ResumeRefusal) {
                let resumed = try emulator.resumeTransferredSession(appID: appID, sessionState: sessionState)
                return HTTPResponse(.ok, json: resumed.json)
            } catch .loadRefused(let why) {
                throw ControlRequestError(key: "sessionState", "does not load: \(why)")
            } catch {
                throw ControlRequestError(key: "appId", "\(error)")
            }
        },
    ]

    /// The faults and whether the device listens: `GET /emulator/faults`.
    func faultsReport() -> JSONValue {
        let (faults, isListening) = core.withLock { ($0.faults, $0.listener.isListening) }
        return Self.faultsJSON(faults, isListening: isListening)
    }

    /// The answer of the control interface, or nil when `path` is not one of its paths.
    func respondToControl(method: HTTPMethod, path: String, body: [UInt8]) async -> HTTPResponse? {
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
        do {
            return try await route.handle(self, body)
        } catch let error as ControlRequestError {
            var answer: [String: JSONValue] = ["error": .string(error.description)]
            if let key = error.key { answer["key"] = .string(key) }
            return HTTPResponse(.badRequest, json: .object(answer))
        } catch let error as EmulatorError {
            let status: HTTPResponseStatus =
                switch error.code {
                case .invalidArgument: .badRequest
                case .invalidState: .conflict
                case .transferFailed: .badGateway
                default: .internalServerError
                }
            return HTTPResponse(status, json: ["error": .string(error.description)])
        } catch {
            return HTTPResponse(.internalServerError, json: ["error": .string("\(error)")])
        }
    }
}

extension CastDeviceEmulator.ControlRoute {
    var json: JSONValue {
        ["method": .string(method.rawValue), "path": .string(path), "summary": .string(summary)]
    }
}

/// A bad control request: the key at fault, if any, and what is wrong with it.
struct ControlRequestError: Error, CustomStringConvertible {
    var key: String?
    var message: String

    init(key: String?, _ message: String) {
        self.key = key
        self.message = message
    }

    var description: String {
        key.map { "\"\($0)\" \(message)" } ?? message
    }
}

/// The JSON object a control route was sent, read strictly: keys the route does not take and
/// values of the wrong type are errors that name the key. `null` counts as absent.
struct ControlRequestBody {
    let fields: [String: JSONValue]

    /// An empty body is `{}`.
    init(_ body: [UInt8], keys: Set<String>) throws(ControlRequestError) {
        guard !body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
            fields = [:]
            return
        }
        let parsed: JSONValue
        do {
            parsed = try JSONValue.parse(Data(body))
        } catch {
            throw ControlRequestError(key: nil, "the body is not JSON: \(error)")
        }
        guard let object = parsed.objectValue else {
            throw ControlRequestError(key: nil, "the body must be a JSON object")
        }
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            let known = keys.isEmpty ? "this route takes none" : "known: " + keys.sorted().joined(separator: ", ")
            throw ControlRequestError(key: unknown, "is not a key of this route (\(known))")
        }
        fields = object
    }

    private func value(_ key: String) -> JSONValue? {
        fields[key].flatMap { $0.isNull ? nil : $0 }
    }

    func string(_ key: String) throws(ControlRequestError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let string) = value else { throw ControlRequestError(key: key, "must be a string") }
        return string
    }

    func bool(_ key: String) throws(ControlRequestError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let bool) = value else { throw ControlRequestError(key: key, "must be true or false") }
        return bool
    }

    func number(_ key: String, in range: ClosedRange<Double>, _ unit: String) throws(ControlRequestError) -> Double? {
        guard let value = value(key) else { return nil }
        guard case .number(let number) = value, number.isFinite, range.contains(number) else {
            let bounds = "\(Self.plain(range.lowerBound)) to \(Self.plain(range.upperBound))"
            throw ControlRequestError(key: key, "must be a number of \(unit) from \(bounds)")
        }
        return number
    }

    func integer(_ key: String, in range: ClosedRange<Int>) throws(ControlRequestError) -> Int? {
        guard let value = value(key) else { return nil }
        guard case .number(let number) = value, number.rounded() == number,
            range.contains(Int(exactly: number) ?? range.lowerBound - 1)
        else {
            throw ControlRequestError(key: key, "must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return Int(number)
    }

    func object(_ key: String) throws(ControlRequestError) -> JSONValue? {
        guard let value = value(key) else { return nil }
        guard case .object = value else { throw ControlRequestError(key: key, "must be a JSON object") }
        return value
    }

    private static func plain(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}
