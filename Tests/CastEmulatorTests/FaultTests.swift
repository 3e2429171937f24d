import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The control interface's answer to one request.
struct ControlAnswer {
    var status: Int
    var json: JSONValue
}

/// One request to an emulator's control interface (`--http-port`).
func control(
    _ path: String, _ body: String? = nil, method: String = "POST", port: Int, host: String = "127.0.0.1"
) async throws -> ControlAnswer {
    let response = try await HTTPFetch.request(
        method: method, host: host, port: port, path: path, body: body, tls: false)
    return ControlAnswer(status: response.status, json: (try? JSONValue.parse(response.body)) ?? .null)
}

/// A configuration with the control interface on a free port.
func controlledConfiguration(clock: ManualEmulatorClock? = nil) -> EmulatorConfiguration {
    var configuration = EmulatorConfiguration()
    configuration.httpPort = 0
    if let clock { configuration.clock = clock }
    return configuration
}

extension RawCastSender {
    /// Connects to receiver-0 and asks GET_STATUS: the running app, as a sender sees it.
    func runningApp(requestID: Int) async throws -> JSONValue? {
        try await connect()
        try await receiver(["type": "GET_STATUS", "requestId": .number(Double(requestID))])
        return try await reply(to: requestID).firstApplication
    }

    /// Reads messages until the reply to `requestID`; returns those before it and the reply.
    func messages(untilReplyTo requestID: Int) async throws -> (before: [CastMessage], reply: JSONValue) {
        var before: [CastMessage] = []
        while true {
            let message = try await next()
            let payload = (try? JSONValue.parse(message.payloadUtf8)) ?? .null
            if payload["requestId"]?.intValue == Int64(requestID) { return (before, payload) }
            before.append(message)
        }
    }
}

/// A running Default Media Receiver session with `sampleMedia` loaded and playing.
struct PlayingSession {
    var sender: RawCastSender
    var sessionID: String
    var transportID: String
    var mediaSessionID: Int64
}

func startPlaying(on endpoints: EmulatorEndpoints, sourceID: String = "sender-faults") async throws -> PlayingSession {
    let sender = try await RawCastSender.connect(to: endpoints, sourceID: sourceID)
    let transportID = try await sender.launchMediaReceiver()
    let loaded = try await sender.load(transportID, media: sampleMedia)
    let app = try #require(try await sender.runningApp(requestID: 901))
    return PlayingSession(
        sender: sender, sessionID: try #require(app["sessionId"]?.stringValue), transportID: transportID,
        mediaSessionID: try #require(loaded["mediaSessionId"]?.intValue)
    )
}

@Suite("Fault injection over real TLS: links, heartbeat, TLS, delays, restarts, ports")
struct FaultTests {
    // MARK: dropping links

    @Test("dropLinks() cuts every link; a new connection finds the same app and media session")
    func dropLinks() async throws {
        try await withEmulator { emulator, endpoints in
            let playing = try await startPlaying(on: endpoints)
            let bystander = try await RawCastSender.connect(to: endpoints, sourceID: "sender-bystander")
            try await bystander.roundTrip(connectingFirst: true)

            #expect(await emulator.dropLinks() == 2)
            try await playing.sender.waitForClose()
            try await bystander.waitForClose()
            #expect(await emulator.state().connections.isEmpty)

            let again = try await RawCastSender.connect(to: endpoints, sourceID: "sender-faults")
            let app = try #require(try await again.runningApp(requestID: 1))
            #expect(app["sessionId"]?.stringValue == playing.sessionID)
            #expect(app["transportId"]?.stringValue == playing.transportID)
            try await again.connect(to: playing.transportID)
            let status = try await again.mediaStatus(playing.transportID, requestID: 2)
            #expect(status.firstStatus?["mediaSessionId"]?.intValue == playing.mediaSessionID)
            #expect(status.firstStatus?["playerState"] == "PLAYING")
        }
    }

    @Test("POST /emulator/faults/drop-links cuts every link and says how many")
    func dropLinksOverHTTP() async throws {
        try await withEmulator(controlledConfiguration()) { _, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            let playing = try await startPlaying(on: endpoints)
            let answer = try await control("/emulator/faults/drop-links", port: httpPort)
            #expect(answer.status == 200)
            #expect(answer.json["dropped"] == 1)
            try await playing.sender.waitForClose()
            let again = try await RawCastSender.connect(to: endpoints)
            #expect(try await again.runningApp(requestID: 1)?["sessionId"]?.stringValue == playing.sessionID)

            let bad = try await control("/emulator/faults/drop-links", #"{"all": true}"#, port: httpPort)
            #expect(bad.status == 400)
            #expect(bad.json["key"] == "all")
        }
    }

    // MARK: heartbeat

    @Test("heartbeat stopped: no PONG and no PING of its own, while GET_STATUS is still answered; reversible")
    func stoppedHeartbeat() async throws {
        var configuration = EmulatorConfiguration()
        configuration.heartbeat = EmulatorHeartbeat(pingAfter: .milliseconds(200), closeAfter: .seconds(60))
        try await withEmulator(configuration) { emulator, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints, heartbeats: .manual)
            try await sender.connect()
            // Healthy first: the device PINGs a quiet sender.
            let ping = try await sender.next(timeout: .seconds(10), "the device's PING") { message, payload in
                message.namespace == CastNamespace.heartbeat && payload["type"] == "PING"
            }
            #expect(ping.message.sourceID == "receiver-0")

            emulator.updateFaults { $0.heartbeat = .stopped }
            #expect(emulator.faults.heartbeat == .stopped)
            // A PONG is written as soon as the PING is read, before anything sent after the PING
            // is answered: none may come before the GET_STATUS reply.
            try await sender.send(
                to: "receiver-0", namespace: CastNamespace.heartbeat, ConnectionMessage.ping)
            try await sender.receiver(["type": "GET_STATUS", "requestId": 1])
            let (before, reply) = try await sender.messages(untilReplyTo: 1)
            #expect(reply["type"] == "RECEIVER_STATUS")
            #expect(!before.contains { $0.payloadUtf8.contains("PONG") }, "\(before.map(\.summary))")
            // Quiet for many ping intervals: no PING either.
            await #expect(throws: TestTimeout.self) {
                _ = try await sender.next(timeout: .seconds(1), "any message") { _, _ in true }
            }

            emulator.updateFaults { $0.heartbeat = .normal }
            try await sender.send(
                to: "receiver-0", namespace: CastNamespace.heartbeat, ConnectionMessage.ping)
            let pong = try await sender.next(timeout: .seconds(5), "a PONG") { message, payload in
                message.namespace == CastNamespace.heartbeat && payload["type"] == "PONG"
            }
            #expect(pong.message.destinationID == sender.sourceID)
        }
    }

    @Test("heartbeat silent: open links hear nothing and what they send goes unhandled; reversible over HTTP")
    func silentDevice() async throws {
        try await withEmulator(controlledConfiguration()) { emulator, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            let open = try await RawCastSender.connect(to: endpoints)
            try await open.roundTrip(connectingFirst: true)

            let set = try await control("/emulator/faults", #"{"heartbeat": "silent"}"#, port: httpPort)
            #expect(set.json["heartbeat"] == "silent")
            #expect(emulator.faults.heartbeat == .silent)
            try await open.receiver(["type": "GET_STATUS", "requestId": 2])
            await #expect(throws: TestTimeout.self) {
                _ = try await open.next(timeout: .seconds(1), "any message") { _, _ in true }
            }
            #expect(open.isActive)

            let back = try await control("/emulator/faults", #"{"heartbeat": "normal"}"#, port: httpPort)
            #expect(back.json["heartbeat"] == "normal")
            // Its CONNECT still holds; the request sent while the device was away was never
            // handled: the next reply is the one to the next request.
            try await open.receiver(["type": "GET_STATUS", "requestId": 3])
            let (before, reply) = try await open.messages(untilReplyTo: 3)
            #expect(reply["type"] == "RECEIVER_STATUS")
            #expect(before.isEmpty, "\(before.map(\.summary))")
        }
    }

    @Test("heartbeat silent: a link opened meanwhile completes TLS, then gets no PONG, no PING, no reply, and no close")
    func silentDeviceKeepsQuietLinksOpen() async throws {
        var configuration = EmulatorConfiguration()
        configuration.heartbeat = EmulatorHeartbeat(pingAfter: .milliseconds(300), closeAfter: .milliseconds(600))
        try await withEmulator(configuration) { emulator, endpoints in
            // Silent before the link exists: its timers only ever run while the device is silent.
            emulator.updateFaults { $0.heartbeat = .silent }
            let newcomer = try await RawCastSender.connect(to: endpoints, heartbeats: .manual)
            try await newcomer.connect()
            try await newcomer.send(
                to: "receiver-0", namespace: CastNamespace.heartbeat, ConnectionMessage.ping)
            try await newcomer.receiver(["type": "GET_STATUS", "requestId": 1])
            // Several times the device's ping-after and close-after.
            await #expect(throws: TestTimeout.self) {
                _ = try await newcomer.next(timeout: .seconds(2), "any message") { _, _ in true }
            }
            #expect(newcomer.isActive)
            #expect(try await !newcomer.peerCertificateDER().isEmpty)
            #expect(await emulator.state().connections.count == 1)
        }
    }

    // MARK: TLS

    @Test("refuseTLS: new connections fail at the TLS handshake, open links go on; reversible")
    func refuseTLS() async throws {
        try await withEmulator { emulator, endpoints in
            let open = try await RawCastSender.connect(to: endpoints)
            try await open.roundTrip(connectingFirst: true)

            emulator.updateFaults { $0.refuseTLS = true }
            let refused = try await RawCastSender.connect(to: endpoints)  // TCP is accepted
            await #expect(throws: (any Error).self) { try await refused.roundTrip(connectingFirst: true) }
            await #expect(throws: (any Error).self) { _ = try await refused.peerCertificateDER() }
            try await open.roundTrip()

            emulator.updateFaults { $0.refuseTLS = false }
            let accepted = try await RawCastSender.connect(to: endpoints)
            try await accepted.roundTrip(connectingFirst: true)
            #expect(try await !accepted.peerCertificateDER().isEmpty)
        }
    }

    @Test("POST /emulator/faults refuseTLS: the handshake fails until it is turned off")
    func refuseTLSOverHTTP() async throws {
        try await withEmulator(controlledConfiguration()) { _, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            let set = try await control("/emulator/faults", #"{"refuseTLS": true}"#, port: httpPort)
            #expect(set.status == 200)
            #expect(set.json["refuseTLS"] == true)
            await #expect(throws: (any Error).self) {
                let refused = try await RawCastSender.connect(to: endpoints)
                try await refused.roundTrip(connectingFirst: true)
            }
            let faults = try await control("/emulator/state", method: "GET", port: httpPort).json["faults"]
            #expect(faults?["refuseTLS"] == true)
            #expect(try await control("/emulator/faults", #"{"refuseTLS": false}"#, port: httpPort).status == 200)
            try await RawCastSender.connect(to: endpoints).roundTrip(connectingFirst: true)
        }
    }

    // MARK: reply delay

    @Test("A reply delay set at run time delays every reply by at least that much")
    func replyDelay() async throws {
        try await withEmulator(controlledConfiguration()) { emulator, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()

            emulator.updateFaults { $0.replyDelay = .milliseconds(300) }
            var sent = ContinuousClock.now
            try await sender.receiver(["type": "GET_STATUS", "requestId": 1])
            _ = try await sender.reply(to: 1)
            #expect(ContinuousClock.now - sent >= .milliseconds(300))

            let set = try await control("/emulator/faults", #"{"replyDelayMs": 450}"#, port: httpPort)
            #expect(set.json["replyDelayMs"] == 450)
            #expect(emulator.faults.replyDelay == .milliseconds(450))
            sent = ContinuousClock.now
            try await sender.receiver(["type": "GET_STATUS", "requestId": 2])
            _ = try await sender.reply(to: 2)
            #expect(ContinuousClock.now - sent >= .milliseconds(450))
        }
    }

    // MARK: restart

    @Test("restart(downtime:) keeps the session, its ids and the media clock; it is down meanwhile")
    func restart() async throws {
        let (configuration, clock) = manualClockConfiguration()
        try await withEmulator(configuration) { emulator, endpoints in
            let playing = try await startPlaying(on: endpoints)
            clock.advance(by: .seconds(20))

            let downtime = Duration.milliseconds(800)
            let started = ContinuousClock.now
            try await withThrowingTaskGroup(of: EmulatorEndpoints.self) { group in
                group.addTask { try await emulator.restart(downtime: downtime) }
                await emulator.waitUntil(listening: false)
                #expect(!emulator.isListening)
                #expect(await emulator.state().json["faults"]?["listening"] == false)
                try await playing.sender.waitForClose()
                clock.advance(by: .seconds(30))  // the media plays on while the network is down
                let back = try #require(try await group.next())
                #expect(back.port == endpoints.port)
            }
            #expect(ContinuousClock.now - started >= downtime)
            #expect(emulator.isListening)

            let again = try await RawCastSender.connect(to: endpoints, sourceID: "sender-faults")
            let app = try #require(try await again.runningApp(requestID: 1))
            #expect(app["sessionId"]?.stringValue == playing.sessionID)
            #expect(app["transportId"]?.stringValue == playing.transportID)
            try await again.connect(to: playing.transportID)
            let status = try #require(try await again.mediaStatus(playing.transportID, requestID: 2).firstStatus)
            #expect(status["mediaSessionId"]?.intValue == playing.mediaSessionID)
            #expect(status["playerState"] == "PLAYING")
            #expect(status["currentTime"] == 50)
        }
    }

    @Test("stopListening() refuses connections until resumeListening(), on the same port with the same session")
    func stopAndResumeListening() async throws {
        try await withEmulator { emulator, endpoints in
            let playing = try await startPlaying(on: endpoints)
            try await emulator.stopListening()
            try await playing.sender.waitForClose()
            await #expect(throws: (any Error).self) {
                try await RawCastSender.connect(to: endpoints).roundTrip(connectingFirst: true)
            }
            await #expect(throws: EmulatorError.self) { try await emulator.stopListening() }
            await #expect(throws: EmulatorError.self) { try await emulator.movePort(to: 0) }

            #expect(try await emulator.resumeListening() == endpoints)
            await #expect(throws: EmulatorError.self) { try await emulator.resumeListening() }
            let again = try await RawCastSender.connect(to: endpoints)
            #expect(try await again.runningApp(requestID: 1)?["sessionId"]?.stringValue == playing.sessionID)
        }
    }

    @Test("POST /emulator/faults/restart answers once back; with wait false at once (202)")
    func restartOverHTTP() async throws {
        try await withEmulator(controlledConfiguration()) { emulator, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            let playing = try await startPlaying(on: endpoints)

            let started = ContinuousClock.now
            let answer = try await control("/emulator/faults/restart", #"{"downtimeMs": 500}"#, port: httpPort)
            #expect(answer.status == 200)
            #expect(answer.json["listening"] == true)
            #expect(answer.json["endpoints"]?["port"]?.intValue == Int64(endpoints.port))
            #expect(ContinuousClock.now - started >= .milliseconds(500))
            try await playing.sender.waitForClose()
            let again = try await RawCastSender.connect(to: endpoints)
            #expect(try await again.runningApp(requestID: 1)?["sessionId"]?.stringValue == playing.sessionID)

            let early = try await control(
                "/emulator/faults/restart", #"{"downtimeMs": 300, "wait": false}"#, port: httpPort)
            #expect(early.status == 202)
            #expect(early.json["listening"] == false)
            await emulator.waitUntil(listening: true)
            #expect(try await control("/emulator/faults", method: "GET", port: httpPort).json["listening"] == true)
            try await RawCastSender.connect(to: endpoints).roundTrip(connectingFirst: true)

            let stopped = try await control("/emulator/faults/stop-listening", port: httpPort)
            #expect(stopped.json["listening"] == false)
            #expect(try await control("/emulator/faults/restart", port: httpPort).status == 409)
            let resumed = try await control("/emulator/faults/resume-listening", port: httpPort)
            #expect(resumed.json["listening"] == true)

            let bad = try await control("/emulator/faults/restart", #"{"downtimeMs": "soon"}"#, port: httpPort)
            #expect(bad.status == 400)
            #expect(bad.json["key"] == "downtimeMs")
        }
    }

    // MARK: moving port

    @Test("movePort(to: 0): the old port is refused, the new one serves the same session; endpoints follow")
    func movePort() async throws {
        try await withEmulator(controlledConfiguration()) { emulator, endpoints in
            let playing = try await startPlaying(on: endpoints)
            var changes = emulator.endpointChanges().makeAsyncIterator()
            #expect(await changes.next() == endpoints)

            let moved = try await emulator.movePort(to: 0)
            #expect(moved.port != endpoints.port)
            #expect(moved.httpPort == endpoints.httpPort)
            #expect(emulator.endpoints == moved)
            #expect(await changes.next() == moved)
            try await playing.sender.waitForClose()
            await #expect(throws: (any Error).self) {
                try await RawCastSender.connect(to: endpoints).roundTrip(connectingFirst: true)
            }

            let again = try await RawCastSender.connect(to: moved)
            #expect(try await again.runningApp(requestID: 1)?["sessionId"]?.stringValue == playing.sessionID)
            let state = await emulator.state()
            #expect(state.endpoints == moved)
            #expect(state.json["endpoints"]?["port"]?.intValue == Int64(moved.port))
            #expect(state.json["device"]?["txt"]?["st"] == "1")
        }
    }

    @Test("POST /emulator/faults/move-port moves to the port given; bad ports are 400 naming the key")
    func movePortOverHTTP() async throws {
        try await withEmulator(controlledConfiguration()) { emulator, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            let wanted = try freePort()
            let answer = try await control("/emulator/faults/move-port", #"{"port": \#(wanted)}"#, port: httpPort)
            #expect(answer.status == 200, "\(answer.json)")
            #expect(answer.json["endpoints"]?["port"]?.intValue == Int64(wanted))
            #expect(emulator.endpoints?.port == wanted)
            try await RawCastSender.connect(host: endpoints.host, port: wanted).roundTrip(connectingFirst: true)

            for body in [#"{"port": "x"}"#, #"{"port": 70000}"#, #"{"port": 1.5}"#, #"{"port": \#(wanted)}"#] {
                let bad = try await control("/emulator/faults/move-port", body, port: httpPort)
                #expect(bad.status == 400, "\(body)")
                #expect(bad.json["key"] == "port", "\(body)")
            }
        }
    }

    // MARK: the control interface

    @Test("POST /emulator/faults refuses unknown keys and bad values, naming the key; GET lists the routes")
    func controlValidation() async throws {
        try await withEmulator(controlledConfiguration()) { emulator, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            for (body, key) in [
                (#"{"heartbeat": "sometimes"}"#, "heartbeat"), (#"{"heartbeat": 1}"#, "heartbeat"),
                (#"{"refuseTLS": "yes"}"#, "refuseTLS"), (#"{"replyDelayMs": -1}"#, "replyDelayMs"),
                (#"{"replyDelayMs": "100"}"#, "replyDelayMs"), (#"{"replyDelay": 100}"#, "replyDelay"),
            ] {
                let answer = try await control("/emulator/faults", body, port: httpPort)
                #expect(answer.status == 400, "\(body)")
                #expect(answer.json["key"] == .string(key), "\(body): \(answer.json)")
                #expect(answer.json["error"]?.stringValue?.contains(key) == true, "\(body)")
            }
            #expect(try await control("/emulator/faults", "not json", port: httpPort).status == 400)
            #expect(try await control("/emulator/faults", "[1]", port: httpPort).status == 400)
            #expect(emulator.faults == .none)

            let partial = try await control(
                "/emulator/faults", #"{"heartbeat": "stopped", "replyDelayMs": 20}"#, port: httpPort)
            #expect(
                partial.json == ["heartbeat": "stopped", "refuseTLS": false, "replyDelayMs": 20, "listening": true])
            #expect(
                try await control("/emulator/faults", #"{"refuseTLS": true}"#, port: httpPort).json["heartbeat"]
                    == "stopped")
            #expect(
                emulator.faults == EmulatorFaults(heartbeat: .stopped, refuseTLS: true, replyDelay: .milliseconds(20)))
            #expect(
                try await control("/emulator/state", method: "GET", port: httpPort).json["faults"]?["replyDelayMs"]
                    == 20)

            let routes = try await control("/emulator", method: "GET", port: httpPort).json["routes"]?.arrayValue ?? []
            for path in [
                "/emulator/faults", "/emulator/faults/clear", "/emulator/faults/drop-links", "/emulator/faults/restart",
                "/emulator/faults/stop-listening", "/emulator/faults/resume-listening", "/emulator/faults/move-port",
                "/emulator/transfer", "/emulator/resume-session", "/emulator/tv",
            ] {
                #expect(routes.contains { $0["path"] == .string(path) && $0["method"] == "POST" }, "\(path)")
            }
            #expect(try await control("/emulator/faults", "{}", method: "PUT", port: httpPort).status == 405)
        }
    }
}

extension RawCastSender {
    /// ``roundTrip()``, CONNECTing to receiver-0 first when asked.
    func roundTrip(connectingFirst: Bool) async throws {
        if connectingFirst { try await connect() }
        try await roundTrip()
    }
}
