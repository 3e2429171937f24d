import CastProtocol
import CastTestSupport
import NIOCore
import NIOEmbedded
import Testing

@testable import CastEmulator

/// The device's heartbeat on an embedded channel with a virtual clock: no waiting.
@Suite struct DeviceHeartbeatTests {
    func inbound(_ payload: JSONValue, namespace: String) -> CastMessage {
        .json(source: "sender-0", destination: "receiver-0", namespace: namespace, payload: payload)
    }

    @Test func aSenderQuietForCloseAfterIsClosed() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            DeviceHeartbeatHandler(EmulatorHeartbeat(pingAfter: .seconds(5), closeAfter: .seconds(10))))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(inbound(["type": "PING"], namespace: CastNamespace.heartbeat))
        channel.read()  // a channel reading automatically asks for more after each read; an embedded one does not
        #expect(
            try channel.readOutbound(as: CastMessage.self).map { try CastEnvelope($0.jsonPayload()).type } == "PONG")
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(9_900))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(!channel.isActive)
    }

    /// While the emulator has not taken what it read, it reads nothing more (NIOAsyncChannel's
    /// back-pressure, played by a ReadGate): that time is not the sender's silence. Once it reads
    /// again, a sender quiet for `closeAfter` is closed.
    @Test func timeNotReadingIsNotTheSendersSilence() throws {
        let gate = ReadGate()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            DeviceHeartbeatHandler(EmulatorHeartbeat(pingAfter: .seconds(5), closeAfter: .seconds(10))))
        try channel.pipeline.syncOperations.addHandler(gate)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        channel.read()
        try channel.writeInbound(inbound(["type": "GET_STATUS", "requestId": 1], namespace: CastNamespace.receiver))
        // That read has ended (writeInbound fires channelReadComplete). The emulator stops taking
        // messages, so the next read is held.
        gate.isOpen = false
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(channel.isActive)

        gate.open()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(9_900))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(!channel.isActive)
    }
}
