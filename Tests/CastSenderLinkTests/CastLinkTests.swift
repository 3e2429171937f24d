import CastEmulator
import CastProtocol
import CastTestSupport
import CastdSupport
import Foundation
import Logging
import Testing

@testable import CastSenderLink

#if canImport(Glibc)
    import Glibc
#endif

/// The device link against cast-emulator over real loopback TLS.
struct CastLinkTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func statusRequestIsAnsweredByItsRequestID() async throws {
        try await withEmulator { _, endpoints in
            try await CastLink.withConnection(
                host: endpoints.host, port: endpoints.port, configuration: .trustingEmulators(), logger: logger
            ) { link in
                try await link.connect(to: CastWire.platformReceiverID)
                let first = try await link.request(
                    namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
                ) {
                    ReceiverRequest.getStatus(requestID: $0)
                }
                let second = try await link.request(
                    namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
                ) {
                    ReceiverRequest.getStatus(requestID: $0)
                }
                #expect(CastEnvelope(first).type == "RECEIVER_STATUS")
                #expect(CastEnvelope(second).requestID == CastEnvelope(first).requestID + 1)
                let status = CastReceiverStatus(payload: first)
                #expect(status.applications.first?.isIdleScreen == true)
            }
        }
    }

    /// Runs `body` with a link to a new emulator, connected to its platform receiver.
    func withReceiverLink(_ body: (CastDeviceEmulator, CastLink) async throws -> Void) async throws {
        try await withEmulator { emulator, endpoints in
            try await CastLink.withConnection(
                host: endpoints.host, port: endpoints.port, configuration: .trustingEmulators(), logger: logger
            ) { link in
                try await link.connect(to: CastWire.platformReceiverID)
                try await body(emulator, link)
            }
        }
    }

    /// Launches `appID`; the transport id of its session.
    func launch(_ appID: String, on link: CastLink) async throws -> String {
        let reply = try await link.request(namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID)
        {
            ReceiverRequest.launch(appID: appID, requestID: $0)
        }
        return try #require(CastReceiverStatus(payload: reply).application(id: appID)?.transportID)
    }

    @Test func aReplyGoesToItsRequestAndABroadcastToTheMessageStream() async throws {
        try await withReceiverLink { emulator, link in
            _ = try await launch(CastAppID.defaultMediaReceiver, on: link)
            // A change on the device after the reply: its broadcast is the last message read.
            try emulator.changeVolumeOnDevice(level: 0.35)
            // The broadcasts (requestId 0) reach the stream, each in its place in the link's
            // order; the reply went to its request and does not come again.
            var lastArrival: UInt64 = 0
            var requestIDs: Set<Int64> = []
            for await received in link.messages where received.message.namespace == CastNamespace.receiver {
                #expect(received.arrival > lastArrival)
                lastArrival = received.arrival
                let payload = try received.message.jsonPayload()
                requestIDs.insert(CastEnvelope(payload).requestID)
                let level = payload["status"]?["volume"]?["level"]?.doubleValue
                if level.map({ abs($0 - 0.35) < 0.001 }) == true { break }
            }
            #expect(requestIDs == [0], "request ids seen on the stream: \(requestIDs)")
        }
    }

    @Test func aMessageOnAnotherNamespaceDoesNotAnswerARequest() async throws {
        // An app that echoes what it is sent (EmulatorApp.echo) sends back a message carrying the
        // request id of a request castd's link waits for on another namespace: it is the app's
        // message, for the stream, not the request's reply.
        try await withReceiverLink { _, link in
            let transport = try await launch(EmulatorApp.echo.appID, on: link)
            try await link.connect(to: transport)
            // A request on a namespace the app does not answer; it waits until cancelled (its
            // timeout is far beyond anything this test waits for).
            let sentID = Locked<Int64?>(nil)
            let waiting = Task {
                try await link.request(
                    namespace: "urn:x-cast:com.castd.unanswered", destination: transport, timeout: .seconds(3600)
                ) { requestID in
                    sentID.withLock { $0 = requestID }
                    return ["type": "PING_APP", "requestId": .number(Double(requestID))]
                }
            }
            try await eventually("the request to be sent") { sentID.withLock { $0 } != nil }
            let id = try #require(sentID.withLock { $0 })
            try await link.send(
                namespace: EmulatorApp.echoNamespace, destination: transport,
                payload: ["type": "ECHO", "requestId": .number(Double(id))])
            var echoed = false
            for await received in link.messages where received.message.namespace == EmulatorApp.echoNamespace {
                echoed = CastEnvelope(try received.message.jsonPayload()).requestID == id
                break
            }
            #expect(echoed)
            // The request still waited: cancelled now, it ends cancelled, not with the echo.
            waiting.cancel()
            await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        }
    }

    @Test func deviceErrorsComeBackTyped() async throws {
        try await withEmulator { _, endpoints in
            try await CastLink.withConnection(
                host: endpoints.host, port: endpoints.port, configuration: .trustingEmulators(), logger: logger
            ) { link in
                try await link.connect(to: CastWire.platformReceiverID)
                let error = await #expect(throws: CastLinkError.self) {
                    _ = try await link.request(
                        namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
                    ) {
                        ReceiverRequest.launch(appID: "NOSUCHAP", requestID: $0)
                    }
                }
                #expect(error?.code == .deviceError)
                #expect(error?.deviceError?.type == "LAUNCH_ERROR")
            }
        }
    }

    @Test func unansweredRequestTimesOutAndTheLinkGoesOn() async throws {
        try await withEmulator { _, endpoints in
            try await CastLink.withConnection(
                host: endpoints.host, port: endpoints.port, configuration: .trustingEmulators(), logger: logger
            ) { link in
                try await link.connect(to: CastWire.platformReceiverID)
                let error = await #expect(throws: CastLinkError.self) {
                    _ = try await link.request(
                        namespace: "urn:x-cast:com.example.nobody", destination: CastWire.platformReceiverID,
                        timeout: .milliseconds(200)
                    ) { ["type": "HELLO", "requestId": .number(Double($0))] }
                }
                #expect(error?.code == .timedOut)
                let status = try await link.request(
                    namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
                ) {
                    ReceiverRequest.getStatus(requestID: $0)
                }
                #expect(CastEnvelope(status).type == "RECEIVER_STATUS")
            }
        }
    }

    @Test func oversizedOutgoingMessageFailsOnlyThatRequest() async throws {
        try await withEmulator { _, endpoints in
            try await CastLink.withConnection(
                host: endpoints.host, port: endpoints.port, configuration: .trustingEmulators(), logger: logger
            ) { link in
                try await link.connect(to: CastWire.platformReceiverID)
                let big = String(repeating: "x", count: 70_000)
                let error = await #expect(throws: CastLinkError.self) {
                    _ = try await link.request(
                        namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
                    ) {
                        ["type": "GET_STATUS", "requestId": .number(Double($0)), "pad": .string(big)]
                    }
                }
                #expect(error?.code == .invalidRequest)
                let status = try await link.request(
                    namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
                ) {
                    ReceiverRequest.getStatus(requestID: $0)
                }
                #expect(CastEnvelope(status).type == "RECEIVER_STATUS")
            }
        }
    }

    @Test func connectionRefusedFailsFast() async throws {
        try await withRefusingTCPPort { port in
            // A refusal must end the attempt at once, not at the deadline: with a deadline this long,
            // waiting for it would fail with "timed out" (and hold the test for a minute).
            var configuration = CastLinkConfiguration()
            configuration.connectTimeout = .seconds(60)
            let error = await #expect(throws: CastLinkError.self) {
                try await CastLink.withConnection(
                    host: "127.0.0.1", port: port, configuration: configuration, logger: logger
                ) { _ in }
            }
            #expect(error?.code == .connectFailed)
            #expect(error?.message.contains("127.0.0.1:\(port)") == true)
            #expect(error?.message.contains("timed out") == false, "\(String(describing: error))")
        }
    }

    @Test func silentTLSPeerHitsTheConnectDeadline() async throws {
        // A listener that never speaks TLS: TCP connects, the handshake never finishes.
        let (fd, port) = try silentTCPListener()
        defer { close(fd) }
        var configuration = CastLinkConfiguration()
        configuration.connectTimeout = .milliseconds(300)
        let error = await #expect(throws: CastLinkError.self) {
            try await CastLink.withConnection(
                host: "127.0.0.1", port: port, configuration: configuration, logger: logger
            ) { _ in }
        }
        #expect(error?.code == .connectFailed)
        #expect(error?.message.contains("timed out") == true, "\(String(describing: error))")
    }

    @Test func requestsFailWithTheReasonWhenTheDeviceGoesAway() async throws {
        var configuration = EmulatorConfiguration()
        configuration.name = "Going Away"
        try await withEmulator(configuration) { emulator, endpoints in
            try await CastLink.withConnection(
                host: endpoints.host, port: endpoints.port, configuration: .trustingEmulators(), logger: logger
            ) { link in
                try await link.connect(to: CastWire.platformReceiverID)
                _ = try await link.request(namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID)
                {
                    ReceiverRequest.getStatus(requestID: $0)
                }
                await emulator.shutdown()
                for await _ in link.messages {}  // ends when the link closes
                #expect(link.closedReason?.code == .closed)
                let error = await #expect(throws: CastLinkError.self) {
                    _ = try await link.request(
                        namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
                    ) {
                        ReceiverRequest.getStatus(requestID: $0)
                    }
                }
                #expect(error?.code == .closed)
            }
        }
    }

    /// A device that sends faster than the link's messages are taken (a MEDIA_STATUS flood
    /// while nothing reads `messages`): the link holds at most `messageBufferLimit` of them and
    /// reads no further, so the rest waits in TCP and slows the device down; once read, every
    /// status arrives, in order. (The link used to buffer all of them.)
    @Test func aDeviceFasterThanItsReaderIsSlowedDownNotBuffered() async throws {
        try await withEmulator { emulator, endpoints in
            try await CastLink.withConnection(
                host: endpoints.host, port: endpoints.port, configuration: .trustingEmulators(), logger: logger
            ) { link in
                try await link.connect(to: CastWire.platformReceiverID)
                let launched = try await link.request(
                    namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
                ) { ReceiverRequest.launch(appID: CastAppID.defaultMediaReceiver, requestID: $0) }
                let transportID = try #require(
                    CastReceiverStatus(payload: launched).application(id: CastAppID.defaultMediaReceiver)?.transportID)
                try await link.connect(to: transportID)
                _ = try await link.request(namespace: CastNamespace.media, destination: transportID) {
                    [
                        "type": "LOAD", "requestId": .number(Double($0)), "autoplay": true,
                        "media": [
                            "contentId": "https://example.com/a.mp4", "contentType": "video/mp4",
                            "streamType": "BUFFERED",
                        ],
                    ]
                }

                // Floods until more than the link may hold have been sent, however slow this machine.
                var sent = 0
                var floods: [EmulatorFloodReport] = []
                while sent <= 2 * CastLink.messageBufferLimit {
                    let flood = try await emulator.floodMediaStatus(perSecond: 2_000, for: .milliseconds(200))
                    floods.append(flood)
                    sent += flood.sent
                }
                // The link reads until its buffer is full, and no further.
                try await eventually(timeout: .seconds(60), "the link's buffer to fill") {
                    link.bufferedMessages.now == CastLink.messageBufferLimit
                }
                print("while nothing read: \(sent) sent (\(floods)); the link held \(link.bufferedMessages)")
                #expect(link.bufferedMessages.highest == CastLink.messageBufferLimit)

                // Read now, up to a change made after the flood: every status, in order.
                try emulator.changeVolumeOnDevice(level: 0.35)
                var times: [Double] = []
                for await received in link.messages where received.message.namespace != CastNamespace.connection {
                    let payload = try received.message.jsonPayload()
                    let level = payload["status"]?["volume"]?["level"]?.doubleValue
                    if CastEnvelope(payload).type == "RECEIVER_STATUS", level.map({ abs($0 - 0.35) < 0.001 }) == true {
                        break
                    }
                    if CastEnvelope(payload).type == "MEDIA_STATUS", CastEnvelope(payload).requestID == 0,
                        let time = payload["status"]?.arrayValue?.first?["currentTime"]?.doubleValue
                    {
                        times.append(time)
                    }
                }
                let flooded = Array(times.suffix(sent))
                #expect(times.count >= sent && times.count <= sent + 3, "\(times.count) of \(sent)")
                #expect(zip(flooded, flooded.dropFirst()).allSatisfy { $0 < $1 }, "in order")
            }
        }
    }
}
