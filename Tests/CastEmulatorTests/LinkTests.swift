import CastEmulator
import CastProtocol
import CastTestSupport
import Testing

@Suite("The TLS link: framing, message validity, heartbeat")
struct LinkTests {
    /// Connects a bystander that must keep working while another link is closed.
    private func bystander(_ endpoints: EmulatorEndpoints) async throws -> RawCastSender {
        let sender = try await RawCastSender.connect(to: endpoints, sourceID: "sender-bystander")
        try await sender.connect()
        return sender
    }

    private func expectStillWorks(_ sender: RawCastSender, requestID: Int) async throws {
        try await sender.receiver(["type": "GET_STATUS", "requestId": .number(Double(requestID))])
        #expect(try await sender.reply(to: requestID)["type"] == "RECEIVER_STATUS")
    }

    @Test("A zero-length frame closes that link only")
    func zeroLengthFrame() async throws {
        try await withEmulator { _, endpoints in
            let other = try await bystander(endpoints)
            let offender = try await RawCastSender.connect(to: endpoints)
            try await offender.connect()
            try await offender.sendRaw([0, 0, 0, 0])
            try await offender.waitForClose()
            try await expectStillWorks(other, requestID: 1)
        }
    }

    @Test("A frame announcing 65537 bytes closes that link only")
    func oversizedFrame() async throws {
        try await withEmulator { _, endpoints in
            let other = try await bystander(endpoints)
            let offender = try await RawCastSender.connect(to: endpoints)
            try await offender.sendRaw([0x00, 0x01, 0x00, 0x01] + [UInt8](repeating: 0x41, count: 100))
            try await offender.waitForClose()
            try await expectStillWorks(other, requestID: 2)
        }
    }

    @Test("A frame of exactly 65536 bytes is accepted")
    func largestFrame() async throws {
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            try await sender.connect()
            func message(padding: Int) -> CastMessage {
                .json(
                    source: sender.sourceID, destination: "receiver-0", namespace: CastNamespace.receiver,
                    payload: [
                        "type": "GET_STATUS", "requestId": 3,
                        "padding": .string(String(repeating: "x", count: padding)),
                    ]
                )
            }
            // The body size grows one byte per padding byte (the length varint keeps its size here).
            let probe = 65_000
            let message = message(
                padding: probe + CastWire.maximumFrameLength - (try message(padding: probe).frameBodySize()))
            #expect(try message.frameBodySize() == CastWire.maximumFrameLength)
            try await sender.send(message)
            #expect(try await sender.reply(to: 3)["type"] == "RECEIVER_STATUS")
        }
    }

    @Test("A CastMessage that fails validation (empty namespace) closes the link")
    func invalidMessage() async throws {
        try await withEmulator { _, endpoints in
            let other = try await bystander(endpoints)
            let offender = try await RawCastSender.connect(to: endpoints)
            try await offender.connect()
            let invalid = CastMessage.json(
                source: offender.sourceID, destination: "receiver-0", namespace: "",
                payload: ["type": "GET_STATUS", "requestId": 1])
            #expect(throws: CastProtocolError.self) { try invalid.validate() }
            try await offender.send(invalid)
            try await offender.waitForClose()
            try await expectStillWorks(other, requestID: 4)
        }
    }

    @Test("A frame that is not a CastMessage at all closes the link")
    func garbageFrame() async throws {
        try await withEmulator { _, endpoints in
            let offender = try await RawCastSender.connect(to: endpoints)
            try await offender.sendRaw([0, 0, 0, 3, 0xFF, 0xFF, 0xFF])
            try await offender.waitForClose()
        }
    }

    @Test("PING is answered with PONG; a quiet sender is PINGed, then closed; an answering one stays")
    func heartbeat() async throws {
        var configuration = EmulatorConfiguration()
        // Short enough for a test, long enough for a loaded machine to answer PINGs in time
        // (stretched under a sanitizer: CI's ASan run once closed the answering sender at 8 s).
        let closeAfter = Duration.seconds(8).scaledForTests
        configuration.heartbeat = EmulatorHeartbeat(pingAfter: .seconds(1), closeAfter: closeAfter)
        try await withEmulator(configuration) { _, endpoints in
            let answering = try await RawCastSender.connect(to: endpoints, sourceID: "sender-alive")
            let quiet = try await RawCastSender.connect(to: endpoints, sourceID: "sender-quiet", heartbeats: .manual)

            // tp.* needs no virtual connection.
            try await quiet.send(to: "receiver-0", namespace: CastNamespace.heartbeat, ConnectionMessage.ping)
            // The PONG and the emulator's own PING (after 1 s idle) may come in either order on
            // a loaded machine: take both, in whatever order they arrive.
            var pong: CastMessage?
            var ping: CastMessage?
            for _ in 0..<4 where pong == nil || ping == nil {
                let message = try await quiet.next()
                #expect(message.namespace == CastNamespace.heartbeat)
                #expect(message.sourceID == "receiver-0")
                switch try JSONValue.parse(message.payloadUtf8)["type"]?.stringValue {
                case "PONG": pong = message
                case "PING": ping = message
                default: Issue.record("unexpected heartbeat \(message.payloadUtf8)")
                }
            }
            #expect(pong?.destinationID == "sender-quiet")
            #expect(ping != nil)
            // Closed closeAfter after its last message (waitForClose stretches its 20 s too).
            _ = try await quiet.waitForClose(timeout: .seconds(20))

            // The answering sender has been idle just as long, but answered its PINGs.
            #expect(answering.isActive)
            try await answering.connect()
            try await expectStillWorks(answering, requestID: 5)
        }
    }
}

extension CastMessage {
    func frameBodySize() throws -> Int {
        let bytes: [UInt8] = try serializedBytes()
        return bytes.count
    }
}
