import CastClient
import CastTestSupport
import Foundation
import Testing

@testable import castc

/// `listen` and `send` end to end: CastdClient and castc's commands against a fake castd on a
/// real Unix socket.
@Suite(.timeLimit(.minutes(1))) struct ChannelEndToEndTests {
    static let namespace = "urn:x-cast:com.example.game"

    static func appMessage(_ payload: String, json: Bool = false) -> CastdChannelEvent {
        var message = CastdAppMessage()
        message.deviceID = "abc"
        message.namespace = namespace
        message.sourceID = "web-5"
        message.destinationID = "*"
        message.payload = payload
        message.isJson = json
        var event = CastdChannelEvent()
        event.message = message
        return event
    }

    static func attached() -> CastdChannelEvent {
        var gameSession = session("abc", "Living Room TV")
        gameSession.appID = "ABCD1234"
        gameSession.displayName = "Game"
        gameSession.namespaces = [namespace]
        var event = CastdChannelEvent()
        event.attached = gameSession
        return event
    }

    /// Answers Listen with: attached, three messages (one JSON), lagged; then waits for the
    /// client to cancel. Answers SendMessage with the session it went to.
    static let handler: FakeDaemon.Handler = { call in
        switch call.method {
        case .listen:
            let request = try call.decode(Castd_V1_ListenRequest.self)
            guard request.namespace == namespace else {
                call.finish(.failedPrecondition, "the app does not declare \(request.namespace)")
                return
            }
            try call.send(attached())
            try call.send(appMessage("hello\nthere"))
            var lagged = CastdChannelEvent()
            lagged.lagged.dropped = 2
            try call.send(lagged)
            try call.send(appMessage("{\n\"score\": 3\n}", json: true))
            try call.send(appMessage("third"))
            await call.waitForCancel()
        case .sendMessage:
            let request = try call.decode(Castd_V1_SendMessageRequest.self)
            if request.namespace == "urn:x-cast:com.example.refused" {
                var deviceError = CastdDeviceError()
                deviceError.type = "INVALID_REQUEST"
                deviceError.reason = "NOT_SUPPORTED"
                call.finish(
                    .failedPrecondition,
                    "Living Room TV refused the message on urn:x-cast:com.example.refused: the app does not support that (INVALID_REQUEST, NOT_SUPPORTED)",
                    reason: CastdError.Reason.deviceError,
                    deviceError: deviceError)
                return
            }
            var response = CastdSendMessageResponse()
            response.deviceID = "abc"
            response.sessionID = "session-1"
            try call.reply(response)
        default:
            call.finish(.unimplemented, "\(call.method.path) is not served by the fake daemon")
        }
    }

    @Test func listenPrintsMessagesOneLineEachAndStopsAfterCount() async throws {
        try await FakeDaemon.run(Self.handler) { daemon in
            let (lines, notices) = try await CastdClient.withConnection(socketPath: daemon.socketPath) { client in
                var lines: [String] = []
                var notices: [String] = []
                try await ListenCommand.follow(
                    client.listen(device: "Living Room TV", namespace: Self.namespace), json: false, count: 2,
                    output: {
                        lines.append($0); return true
                    },
                    notice: { notices.append($0) })
                // Leaving after --count cancels the call on the daemon.
                try await eventually("the Listen call to be cancelled") { daemon.cancelledCallIDs == [1] }
                return (lines, notices)
            }
            #expect(lines == [#"hello\nthere"#, #"{ "score": 3 }"#])
            #expect(
                notices == [
                    "castc: listening to Game (ABCD1234) on Living Room TV",
                    "castc: fell behind; 2 messages dropped",
                ])
            let requests = try daemon.requests(.listen, as: Castd_V1_ListenRequest.self)
            #expect(requests.map(\.device) == ["Living Room TV"])
            #expect(requests.map(\.namespace) == [Self.namespace])
        }
    }

    @Test func listenJSONPrintsEveryChannelEvent() async throws {
        try await FakeDaemon.run(Self.handler) { daemon in
            let lines = try await CastdClient.withConnection(socketPath: daemon.socketPath) { client in
                var lines: [String] = []
                try await ListenCommand.follow(
                    client.listen(namespace: Self.namespace), json: true, count: 3,
                    output: {
                        lines.append($0); return true
                    },
                    notice: { Issue.record("a notice with --json: \($0)") })
                return lines
            }
            let events = try lines.map { try CastdChannelEvent(jsonString: $0) }
            #expect(
                events == [
                    Self.attached(), Self.appMessage("hello\nthere"),
                    {
                        var lagged = CastdChannelEvent()
                        lagged.lagged.dropped = 2
                        return lagged
                    }(), Self.appMessage("{\n\"score\": 3\n}", json: true), Self.appMessage("third"),
                ])
            #expect(lines.allSatisfy { !$0.contains("\n") })
        }
    }

    @Test func listenEndsWithTheDaemonsError() async throws {
        try await FakeDaemon.run(Self.handler) { daemon in
            let error = await #expect(throws: CastdError.self) {
                try await CastdClient.withConnection(socketPath: daemon.socketPath) { client in
                    for try await _ in client.listen(namespace: "urn:x-cast:com.example.other") {}
                }
            }
            #expect(error == CastdError(.failedPrecondition, "the app does not declare urn:x-cast:com.example.other"))
        }
    }

    @Test func listenCommandRunsUntilCount() async throws {
        try await FakeDaemon.run(Self.handler) { daemon in
            let command = try parse(
                ["listen", Self.namespace, "--count", "3", "--socket", daemon.socketPath], as: ListenCommand.self)
            try await command.run()
            // What runs is asked first, to say why the listener would wait.
            #expect(daemon.methods == [.getStatus, .listen])
        }
    }

    /// A listener that would wait silently is told why on stderr, as for a session that ends.
    @Test func aListenerThatWillWaitIsToldWhy() {
        var status = CastdStatusResponse()
        #expect(
            ListenCommand.waitingNotice(status, device: "", namespace: Self.namespace)
                == "castc: no session declares \(Self.namespace) yet; waiting for an app that does (castc launch APP_ID starts one)"
        )
        var session = CastdSession()
        session.deviceID = "tv"
        session.deviceName = "Living Room TV"
        session.displayName = "Default Media Receiver"
        session.state = .started
        session.namespaces = ["urn:x-cast:com.google.cast.media"]
        status.sessions = [session]
        let notice = ListenCommand.waitingNotice(status, device: "", namespace: Self.namespace)
        #expect(
            notice?.contains("does not declare \(Self.namespace) (it declares urn:x-cast:com.google.cast.media)")
                == true, "\(String(describing: notice))")
        status.sessions[0].namespaces.append(Self.namespace)
        #expect(ListenCommand.waitingNotice(status, device: "", namespace: Self.namespace) == nil)
    }

    @Test func badNamespacesNeverReachTheDaemon() async throws {
        try await FakeDaemon.run(Self.handler) { daemon in
            try await CastdClient.withConnection(socketPath: daemon.socketPath) { client in
                await #expect(throws: CastdError.self) {
                    for try await _ in client.listen(namespace: "com.example.game") {}
                }
                let error = await #expect(throws: CastdError.self) {
                    try await client.sendMessage(namespace: "game", text: "hi")
                }
                #expect(error?.code == .invalidArgument)
                #expect(error?.message.contains("urn:x-cast:") == true)
                await #expect(throws: CastdError.self) {
                    try await client.sendMessage(namespace: Self.namespace, json: "{oops")
                }
            }
            #expect(daemon.methods.isEmpty)
        }
    }

    @Test func sendMessageAsTextAndAsJSON() async throws {
        try await FakeDaemon.run(Self.handler) { daemon in
            try await CastdClient.withConnection(socketPath: daemon.socketPath) { client in
                let text = try await client.sendMessage(namespace: Self.namespace, text: "hello", device: "TV")
                #expect(text.deviceID == "abc" && text.sessionID == "session-1")
                _ = try await client.sendMessage(namespace: Self.namespace, json: #"{"type":"MOVE"}"#)
            }
            let requests = try daemon.requests(.sendMessage, as: Castd_V1_SendMessageRequest.self)
            #expect(requests.map(\.device) == ["TV", ""])
            #expect(requests.map(\.namespace) == [Self.namespace, Self.namespace])
            #expect(requests.map(\.payload) == [.text("hello"), .json(#"{"type":"MOVE"}"#)])
        }
    }

    @Test func sendCommandSendsJSON() async throws {
        try await FakeDaemon.run(Self.handler) { daemon in
            let command = try parse(
                [
                    "send", Self.namespace, #"{"type":"PING"}"#, "--json", "--device", "TV", "--socket",
                    daemon.socketPath,
                ],
                as: SendCommand.self)
            try await command.run()
            let requests = try daemon.requests(.sendMessage, as: Castd_V1_SendMessageRequest.self)
            #expect(requests.count == 1)
            #expect(requests.first?.device == "TV")
            #expect(requests.first?.payload == .json(#"{"type":"PING"}"#))
        }
    }

    @Test func aDeviceRefusalReachesTheUserWithTheDevicesError() async throws {
        try await FakeDaemon.run(Self.handler) { daemon in
            let error = await #expect(throws: CastdError.self) {
                try await CastdClient.withConnection(socketPath: daemon.socketPath) { client in
                    try await client.sendMessage(namespace: "urn:x-cast:com.example.refused", text: "x")
                }
            }
            let refusal = try #require(error)
            #expect(refusal.reason == CastdError.Reason.deviceError)
            #expect(refusal.deviceError?.type == "INVALID_REQUEST")
            #expect(
                CastcFailure(refusal).line
                    == "castc: Living Room TV refused the message on urn:x-cast:com.example.refused: the app does not support that (INVALID_REQUEST, NOT_SUPPORTED)\n"
            )
            // From a castd that gives no sentence: what the device said.
            var bare = refusal
            bare.message = ""
            #expect(
                CastcFailure(bare).line == "castc: the device refused the request: INVALID_REQUEST (NOT_SUPPORTED)\n")
            #expect(CastcFailure(refusal).exitCode == 9)
        }
    }
}
