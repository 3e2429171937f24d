import NIOCore

/// Why a length-prefixed stream was rejected.
public enum LengthPrefixError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A frame announced a body of zero bytes, which neither CastV2 nor castd.v1 allows.
    case emptyFrame
    /// A frame announced a body larger than the limit; the stream cannot be trusted after it.
    case frameTooLarge(length: UInt32, limit: Int)
    /// The peer closed the stream in the middle of a frame.
    case truncatedFrame(received: Int, expected: Int)

    public var description: String {
        switch self {
        case .emptyFrame:
            return "frame of length 0"
        case .frameTooLarge(let length, let limit):
            return "frame of \(length) bytes is over the \(limit)-byte limit"
        case .truncatedFrame(let received, let expected):
            return "stream ended inside a frame (\(received) of \(expected) bytes)"
        }
    }
}

/// Splits a stream into frames of a 4-byte big-endian length followed by that many bytes.
///
/// The length is checked as soon as its four bytes arrive, so an oversized frame is refused
/// before any of its body is buffered. We do not use swift-nio-extras'
/// `LengthFieldBasedFrameDecoder` because it buffers frames of up to 2 GiB before a caller can
/// see the length.
public struct LengthPrefixedFrameDecoder: ByteToMessageDecoder, Sendable {
    public typealias InboundOut = ByteBuffer

    public let maximumFrameLength: Int

    public init(maximumFrameLength: Int) {
        precondition(maximumFrameLength > 0 && maximumFrameLength <= Int(UInt32.max))
        self.maximumFrameLength = maximumFrameLength
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = try Self.nextFrame(from: &buffer, maximumFrameLength: maximumFrameLength) else {
            return .needMoreData
        }
        context.fireChannelRead(Self.wrapInboundOut(frame))
        return .continue
    }

    public mutating func decodeLast(
        context: ChannelHandlerContext,
        buffer: inout ByteBuffer,
        seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0 {
            let expected: Int
            if buffer.readableBytes >= 4, let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) {
                expected = Int(length) + 4
            } else {
                expected = 4
            }
            let received = buffer.readableBytes
            buffer.moveReaderIndex(forwardBy: received)
            throw LengthPrefixError.truncatedFrame(received: received, expected: expected)
        }
        return .needMoreData
    }

    /// Takes one whole frame's body off the front of `buffer`, or returns nil (consuming nothing)
    /// if the frame is not complete yet. Usable without a channel, e.g. by fuzzers and tests.
    public static func nextFrame(from buffer: inout ByteBuffer, maximumFrameLength: Int) throws -> ByteBuffer? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else {
            return nil
        }
        if length == 0 { throw LengthPrefixError.emptyFrame }
        if Int(length) > maximumFrameLength {
            throw LengthPrefixError.frameTooLarge(length: length, limit: maximumFrameLength)
        }
        guard buffer.readableBytes >= 4 + Int(length) else { return nil }
        buffer.moveReaderIndex(forwardBy: 4)
        return buffer.readSlice(length: Int(length))
    }
}

/// Writes each outbound buffer as a 4-byte big-endian length followed by the buffer.
public final class LengthPrefixedFrameEncoder: ChannelOutboundHandler, Sendable {
    public typealias OutboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    public init() {}

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let body = Self.unwrapOutboundIn(data)
        var header = context.channel.allocator.buffer(capacity: 4)
        header.writeInteger(UInt32(body.readableBytes))
        // Two writes, one flush: no copy of the body.
        context.write(Self.wrapOutboundOut(header), promise: nil)
        context.write(Self.wrapOutboundOut(body), promise: promise)
    }
}

extension ByteBuffer {
    /// Appends one length-prefixed frame holding `body`.
    public mutating func writeLengthPrefixedFrame(_ body: some Collection<UInt8>) {
        writeInteger(UInt32(body.count))
        writeBytes(body)
    }
}
