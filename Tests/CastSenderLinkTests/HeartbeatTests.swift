import CastTestSupport
import CastProtocol
import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import CastSenderLink

/// The heartbeat on an embedded channel with a virtual clock: no waiting.
@Suite(.tags(.cpuBound)) struct HeartbeatTests {
    func makeChannel(readGate: ReadGate? = nil) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            SenderHeartbeatHandler(
                senderID: "sender-test", pingInterval: .seconds(5), deadAfter: .seconds(10),
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })))
        if let readGate { try channel.pipeline.syncOperations.addHandler(readGate) }
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    func sent(_ channel: EmbeddedChannel) throws -> [JSONValue] {
        var out: [JSONValue] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            out.append(try CastMessage.decodeFrameBody(Array(buffer.readableBytesView)).jsonPayload())
        }
        return out
    }

    func inbound(_ payload: JSONValue, namespace: String = CastNamespace.heartbeat) -> CastMessage {
        .json(source: "receiver-0", destination: "sender-test", namespace: namespace, payload: payload)
    }

    @Test func pingsAfterFiveIdleSecondsAndDiesAfterTen() throws {
        let channel = try makeChannel()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(4_900))
        #expect(try sent(channel).isEmpty)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(try sent(channel).map { CastEnvelope($0).type } == ["PING"])
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(!channel.isActive)
    }

    @Test func anyMessageResetsTheClock() throws {
        let channel = try makeChannel()
        for _ in 0..<4 {
            channel.embeddedEventLoop.advanceTime(by: .seconds(4))
            try channel.writeInbound(inbound(["type": "RECEIVER_STATUS"], namespace: CastNamespace.receiver))
        }
        #expect(try sent(channel).isEmpty)
        #expect(channel.isActive)
        // Application messages pass through; heartbeats do not.
        #expect(try channel.readInbound(as: CastMessage.self)?.namespace == CastNamespace.receiver)
    }

    /// While castd has not taken what the link read, the link reads nothing more (NIOAsyncChannel's
    /// back-pressure, played by a ReadGate): what the device sends meanwhile waits in TCP, and
    /// that time is not the device's silence. PINGs still go out by the clock; once the link
    /// reads again, a device that says nothing for 10 s is dead. (Counted as silence, a consumer
    /// held up for 10 s closed links to devices that were sending: seen under AddressSanitizer.)
    @Test func timeNotReadingIsNotTheDevicesSilence() throws {
        let gate = ReadGate()
        let channel = try makeChannel(readGate: gate)
        channel.read()
        try channel.writeInbound(inbound(["type": "RECEIVER_STATUS"], namespace: CastNamespace.receiver))
        // That read has ended (writeInbound fires channelReadComplete). castd stops taking
        // messages, so the next read is held.
        gate.isOpen = false
        channel.read()
        for _ in 0..<12 { channel.embeddedEventLoop.advanceTime(by: .seconds(5)) }
        #expect(channel.isActive)
        #expect(try sent(channel).map { CastEnvelope($0).type } == Array(repeating: "PING", count: 12))

        gate.open()  // castd takes them again: the link reads, and the device is silent from now
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(9_900))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(!channel.isActive)
    }

    /// A device that PINGs and does not read what castd writes (the channel stays unwritable)
    /// gets no PONGs, so castd's outbound buffer does not grow by one per PING; once it reads
    /// again, PINGs are answered (SECURITY.md, G1.2).
    @Test func pingsAreNotAnsweredWhileTheDeviceDoesNotRead() throws {
        let channel = try makeChannel()
        channel.isWritable = false
        for _ in 0..<1000 {
            try channel.writeInbound(inbound(["type": "PING"]))
        }
        #expect(try sent(channel).isEmpty)
        #expect(channel.isActive)
        channel.isWritable = true
        try channel.writeInbound(inbound(["type": "PING"]))
        #expect(try sent(channel).map { CastEnvelope($0).type } == ["PONG"])
    }

    @Test func answersPingWithPongAndSwallowsHeartbeats() throws {
        let channel = try makeChannel()
        try channel.writeInbound(inbound(["type": "PING"]))
        try channel.writeInbound(inbound(["type": "PONG"]))
        #expect(try sent(channel).map { CastEnvelope($0).type } == ["PONG"])
        #expect(try channel.readInbound(as: CastMessage.self) == nil)
    }
}
