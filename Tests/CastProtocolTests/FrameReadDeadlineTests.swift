import CastTestSupport
import LengthPrefixFraming
import NIOCore
import NIOEmbedded
import Testing

/// A frame must arrive whole within the deadline of its first byte (castd.v1's per-frame read
/// deadline, SECURITY.md): on the embedded event loop's clock, so the times are exact.
@Suite(.tags(.cpuBound)) struct FrameReadDeadlineTests {
    static let deadline = TimeAmount.seconds(30)

    /// A channel with the handler at its head, and what it reported.
    final class Harness {
        let channel = EmbeddedChannel()
        var expiries: [FrameReadDeadlineHandler.Expiry] = []

        init() throws {
            let handler = FrameReadDeadlineHandler(
                deadline: FrameReadDeadlineTests.deadline,
                farewell: { _ in ByteBuffer(string: "bye") },
                expired: { [unowned self] in self.expiries.append($0) })
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(unixDomainSocketPath: "/castd-test")).wait()
        }

        /// Bytes arrive while the channel reads (it asks for more at once, as autoRead does).
        func arrive(_ bytes: [UInt8]) throws {
            channel.read()
            try channel.writeInbound(ByteBuffer(bytes: bytes))
            channel.read()
        }

        /// Bytes arrive, and then the channel stops reading (its reader has no room).
        func arriveThenPause(_ bytes: [UInt8]) throws {
            channel.read()
            try channel.writeInbound(ByteBuffer(bytes: bytes))
        }

        func advance(_ amount: TimeAmount) { channel.embeddedEventLoop.advanceTime(by: amount) }

        var isOpen: Bool { channel.isActive }

        func farewell() throws -> String? {
            try channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) }
        }
    }

    static func header(_ length: Int) -> [UInt8] {
        [UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
    }

    @Test func progressFollowsFramesAcrossReads() {
        var progress = FrameProgress()
        func consume(_ bytes: [UInt8]) -> Bool { progress.consume(ByteBuffer(bytes: bytes).readableBytesView) }
        let began = consume(Self.header(3) + [1, 2, 3] + Self.header(2))
        #expect(began, "the second frame began in this read")
        #expect(progress.inFrame && progress.received == 4 && progress.expected == 6)
        let again = consume([9])
        #expect(!again && progress.received == 5, "still the same frame")
        let last = consume([9])
        #expect(!last && !progress.inFrame, "complete")
        // A header split over reads.
        let half = consume([0, 0])
        #expect(half && progress.expected == nil)
        let rest = consume([0, 1])
        #expect(!rest && progress.expected == 5)
        let body = consume([7])
        #expect(!body && !progress.inFrame)
    }

    @Test func aFrameThatArrivesWholeStartsNoClock() throws {
        let harness = try Harness()
        try harness.arrive(Self.header(3) + [1, 2, 3])
        harness.advance(.hours(1))
        #expect(harness.isOpen && harness.expiries.isEmpty)
    }

    @Test func aStalledFrameIsClosedAtItsDeadlineAndNotBefore() throws {
        let harness = try Harness()
        try harness.arrive(Self.header(1 << 20) + [1, 2, 3])
        harness.advance(Self.deadline - .milliseconds(1))
        #expect(harness.isOpen)
        harness.advance(.milliseconds(1))
        #expect(!harness.isOpen)
        #expect(harness.expiries == [.init(received: 7, expected: 4 + (1 << 20), deadline: Self.deadline)])
        #expect(try harness.farewell() == "bye")
    }

    @Test func bytesTricklingInDoNotMoveTheDeadline() throws {
        let harness = try Harness()
        try harness.arrive([0])  // the first byte of the header: the clock starts
        for _ in 0..<3 {
            harness.advance(.seconds(10) - .milliseconds(1))
            try harness.arrive([1])
            #expect(harness.isOpen)
        }
        harness.advance(.milliseconds(3))
        #expect(!harness.isOpen, "30 s after the first byte, though a byte came 1 ms ago")
        #expect(harness.expiries.first?.received == 4 && harness.expiries.first?.expected == 4 + 0x0001_0101)
    }

    @Test func eachFrameHasAClockOfItsOwn() throws {
        let harness = try Harness()
        try harness.arrive(Self.header(2) + [1])
        harness.advance(.seconds(20))
        // The first frame ends and the second begins in one read, 20 s in.
        try harness.arrive([2] + Self.header(2))
        harness.advance(.seconds(29))
        #expect(harness.isOpen, "the second frame's 30 s started with it")
        harness.advance(.seconds(1))
        #expect(!harness.isOpen)
    }

    @Test func timeTheChannelSpendsNotReadingDoesNotCount() throws {
        let harness = try Harness()
        // 10 s of waiting for the client, then the channel stops reading (the client does not
        // read its answers) for an hour: the rest of the frame cannot arrive meanwhile.
        try harness.arrive(Self.header(100) + [1])
        harness.advance(.seconds(10))
        try harness.arriveThenPause([2])
        harness.advance(.hours(1))
        #expect(harness.isOpen && harness.expiries.isEmpty)
        // Reading again: 20 s of the deadline are left.
        harness.channel.read()
        harness.advance(.seconds(20) - .milliseconds(1))
        #expect(harness.isOpen)
        harness.advance(.milliseconds(1))
        #expect(!harness.isOpen && harness.expiries.count == 1)
    }
}
