import CastTestSupport
import LengthPrefixFraming
import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing

@Suite(.tags(.cpuBound)) struct FramingTests {
    private func frame(_ body: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeLengthPrefixedFrame(body)
        return buffer
    }

    @Test func dripFedBytesYieldTheSameFrames() throws {
        // NIO's verifier feeds the input whole, byte by byte, and in random chunks.
        let bodies: [[UInt8]] = [[1], Array(repeating: 7, count: 300), [0, 0, 0, 0], Array(0...255)]
        var input = ByteBuffer()
        for body in bodies { input.writeLengthPrefixedFrame(body) }
        let expected = bodies.map { ByteBuffer(bytes: $0) }
        try ByteToMessageDecoderVerifier.verifyDecoder(
            inputOutputPairs: [(input, expected)],
            decoderFactory: { LengthPrefixedFrameDecoder(maximumFrameLength: 65_536) })
    }

    @Test(arguments: [UInt32(0), 65_537, 0xFFFF_FFFF])
    func badLengthsAreRefusedBeforeBuffering(_ length: UInt32) throws {
        var buffer = ByteBuffer()
        buffer.writeInteger(length)
        #expect(throws: LengthPrefixError.self) {
            _ = try LengthPrefixedFrameDecoder.nextFrame(from: &buffer, maximumFrameLength: 65_536)
        }
    }

    @Test func exactlyTheLimitIsAccepted() throws {
        var buffer = frame(Array(repeating: 1, count: 65_536))
        let body = try #require(try LengthPrefixedFrameDecoder.nextFrame(from: &buffer, maximumFrameLength: 65_536))
        #expect(body.readableBytes == 65_536)
    }

    @Test func partialFramesWaitAndConsumeNothing() throws {
        var buffer = ByteBuffer(bytes: [0, 0, 0])
        #expect(try LengthPrefixedFrameDecoder.nextFrame(from: &buffer, maximumFrameLength: 10) == nil)
        #expect(buffer.readableBytes == 3)
        buffer.writeBytes([5, 1, 2])
        #expect(try LengthPrefixedFrameDecoder.nextFrame(from: &buffer, maximumFrameLength: 10) == nil)
        #expect(buffer.readableBytes == 6)
    }

    @Test func oversizedFrameClosesTheChannel() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LengthPrefixedFrameDecoder(maximumFrameLength: 16)))
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt32(17))
        #expect(throws: LengthPrefixError.frameTooLarge(length: 17, limit: 16)) { try channel.writeInbound(buffer) }
    }

    @Test func truncatedStreamIsReported() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LengthPrefixedFrameDecoder(maximumFrameLength: 16)))
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt32(8))
        buffer.writeBytes([1, 2, 3])
        try channel.writeInbound(buffer)
        #expect(throws: LengthPrefixError.truncatedFrame(received: 7, expected: 12)) { _ = try channel.finish() }
    }

    @Test func encoderPrefixesTheLength() throws {
        let channel = EmbeddedChannel(handler: LengthPrefixedFrameEncoder())
        try channel.writeOutbound(ByteBuffer(bytes: [9, 9, 9]))
        var out = ByteBuffer()
        while var part = try channel.readOutbound(as: ByteBuffer.self) { out.writeBuffer(&part) }
        #expect(Array(out.readableBytesView) == [0, 0, 0, 3, 9, 9, 9])
    }
}
