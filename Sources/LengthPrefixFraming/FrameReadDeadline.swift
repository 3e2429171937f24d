import NIOCore

/// Where a length-prefixed stream is between frames: how much of the current frame has arrived.
/// Pure: it only counts the bytes it is shown (the frame decoder does the real parsing).
public struct FrameProgress: Sendable, Equatable {
    private var header: UInt32 = 0
    private var headerBytes = 0
    /// Body bytes of the current frame still to come (once its header is whole).
    private var remaining = 0
    /// Bytes of the current frame seen so far, its header included.
    public private(set) var received = 0

    public init() {}

    /// Whether a frame has begun and not ended.
    public var inFrame: Bool { headerBytes > 0 }

    /// The current frame's whole size (header included), once its header has arrived.
    public var expected: Int? { headerBytes == 4 ? 4 + Int(header) : nil }

    /// Counts `bytes`; true if the frame in progress afterwards began among them (a frame that
    /// began in an earlier read and is still incomplete gives false).
    public mutating func consume(_ bytes: ByteBufferView) -> Bool {
        var startedHere = false
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if headerBytes < 4 {
                if headerBytes == 0 {
                    startedHere = true
                    received = 0
                }
                header = header << 8 | UInt32(bytes[index])
                headerBytes += 1
                received += 1
                index += 1
                if headerBytes == 4 {
                    remaining = Int(header)
                    if remaining == 0 { reset() }  // an empty frame: the decoder refuses it
                }
            } else {
                let taken = min(remaining, bytes.endIndex - index)
                remaining -= taken
                received += taken
                index += taken
                if remaining == 0 { reset() }
            }
        }
        return startedHere && inFrame
    }

    private mutating func reset() {
        header = 0
        headerBytes = 0
        remaining = 0
    }
}

/// Closes a connection whose frame does not arrive whole in time: once a frame's first byte is
/// in, the rest must follow within `deadline`. A peer that sends part of a frame and stops would
/// otherwise hold the decoder's buffer (up to the frame limit) for as long as it likes.
///
/// Only time spent waiting for the peer counts: while the channel is not reading (the peer is
/// not reading its answers, and the reader downstream has stopped asking for more), the clock
/// stops, since then the rest of the frame cannot arrive whatever the peer does. A frame that
/// arrives in one read never starts a timer.
///
/// Place it before the frame decoder. On expiry it writes what `farewell` gives (already framed:
/// nothing after this handler sees it), tells `expired`, and closes the channel.
public final class FrameReadDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = ByteBuffer
    public typealias OutboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    /// What had arrived of the frame when its time ran out.
    public struct Expiry: Sendable, Equatable, CustomStringConvertible {
        /// Bytes of the frame that arrived, its header included.
        public var received: Int
        /// The frame's whole size, if its length had arrived.
        public var expected: Int?
        public var deadline: TimeAmount

        public init(received: Int, expected: Int?, deadline: TimeAmount) {
            self.received = received
            self.expected = expected
            self.deadline = deadline
        }

        public var description: String {
            "\(received) of \(expected.map(String.init) ?? "at least 5") bytes of a frame within \(Self.seconds(deadline))"
        }

        static func seconds(_ amount: TimeAmount) -> String {
            let milliseconds = amount.nanoseconds / 1_000_000
            return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(Double(milliseconds) / 1000) s"
        }
    }

    private let deadline: TimeAmount
    private let farewell: (Expiry) -> ByteBuffer?
    private let expired: (Expiry) -> Void
    private var progress = FrameProgress()
    /// When the frame in progress began, and how long the channel has not been reading since.
    private var frameStarted: NIODeadline?
    private var pausedTotal = TimeAmount.zero
    private var pausedSince: NIODeadline?
    /// A read was asked for and nothing has come since: the channel waits for the peer.
    private var waiting = false
    private var timer: Scheduled<Void>?

    public init(
        deadline: TimeAmount, farewell: @escaping (Expiry) -> ByteBuffer? = { _ in nil },
        expired: @escaping (Expiry) -> Void = { _ in }
    ) {
        precondition(deadline > .zero)
        self.deadline = deadline
        self.farewell = farewell
        self.expired = expired
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        let now = context.eventLoop.now
        if progress.consume(bytes.readableBytesView) {
            // A new frame began in this read: its clock starts now.
            frameStarted = now
            pausedTotal = .zero
            pausedSince = nil
            timer?.cancel()
            timer = nil
        }
        if !progress.inFrame {
            stop()
        } else if timer == nil {
            arm(context)
        }
        context.fireChannelRead(data)
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        waiting = false
        if progress.inFrame, pausedSince == nil { pausedSince = context.eventLoop.now }
        context.fireChannelReadComplete()
    }

    public func read(context: ChannelHandlerContext) {
        waiting = true
        if let since = pausedSince {
            pausedTotal = pausedTotal + (context.eventLoop.now - since)
            pausedSince = nil
        }
        if progress.inFrame, timer == nil { arm(context) }
        context.read()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    private var due: NIODeadline? { frameStarted.map { $0 + deadline + pausedTotal } }

    private func arm(_ context: ChannelHandlerContext) {
        guard let due else { return }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: due) {
            let (handler, context) = loopBound.value
            handler.timerFired(context)
        }
    }

    private func timerFired(_ context: ChannelHandlerContext) {
        timer = nil
        guard progress.inFrame, let due else { return }
        // Not reading: the clock stands still until the channel asks for more (`read`).
        guard waiting, pausedSince == nil else { return }
        if context.eventLoop.now < due {
            arm(context)  // paused for a while earlier: not due yet
            return
        }
        let expiry = Expiry(received: progress.received, expected: progress.expected, deadline: deadline)
        stop()
        progress = FrameProgress()
        if let bytes = farewell(expiry) {
            context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
        }
        expired(expiry)
        context.close(promise: nil)
    }

    private func stop() {
        timer?.cancel()
        timer = nil
        frameStarted = nil
        pausedSince = nil
        pausedTotal = .zero
    }
}
