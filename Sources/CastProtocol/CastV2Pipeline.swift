import LengthPrefixFraming
import NIOCore

/// The CastV2 wire in a NIO pipeline, the same on both sides of a connection: 4-byte length
/// framing (frames up to `CastWire.maximumFrameLength`) and the message decoder; the handlers
/// after them read `CastMessage`s. What they write is a frame body (`ByteBuffer`), or a
/// `CastMessage` when a `CastMessageEncoder` is added after.
public enum CastV2Pipeline {
    /// Adds the framing and the decoder to `pipeline`, after what is in it already (TLS).
    public static func addFraming(
        to pipeline: ChannelPipeline.SynchronousOperations, badMessages: CastMessageDecoder.BadMessages
    ) throws {
        try pipeline.addHandler(
            ByteToMessageHandler(LengthPrefixedFrameDecoder(maximumFrameLength: CastWire.maximumFrameLength)))
        try pipeline.addHandler(LengthPrefixedFrameEncoder())
        try pipeline.addHandler(CastMessageDecoder(badMessages))
    }
}

/// Turns frame bodies into validated `CastMessage`s (`CastMessage.decodeFrameBody`).
public final class CastMessageDecoder: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = CastMessage

    /// What a frame that is well delimited but holds no valid CastMessage (undecodable, a
    /// required field missing, an empty id or namespace, a payload that does not match its type)
    /// does to the connection.
    public enum BadMessages {
        /// It is a protocol violation: the error goes up the pipeline and the connection closes
        /// (the device's side, which holds its senders to the protocol).
        case close
        /// It is skipped and reported, and the connection goes on: the framing is intact (the
        /// sender's side, which must not lose a device to one bad message).
        case skip(any CastBadMessageReporter)
    }

    private let badMessages: BadMessages

    public init(_ badMessages: BadMessages) {
        self.badMessages = badMessages
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let body = Self.unwrapInboundIn(data)
        do {
            let message = try CastMessage.decodeFrameBody(Array(body.readableBytesView))
            context.fireChannelRead(Self.wrapInboundOut(message))
        } catch {
            switch badMessages {
            case .close:
                context.fireErrorCaught(error)
                context.close(promise: nil)
            case .skip(let reporter):
                reporter.skipped(error)
            }
        }
    }

    public func channelInactive(context: ChannelHandlerContext) {
        if case .skip(let reporter) = badMessages { reporter.connectionClosed() }
        context.fireChannelInactive()
    }
}

/// Told of the bad messages a `CastMessageDecoder` skips, on the connection's event loop.
public protocol CastBadMessageReporter: AnyObject {
    /// A frame that held no valid CastMessage was skipped.
    func skipped(_ error: any Error)
    /// The connection closed: a reporter that holds back reports says what it held.
    func connectionClosed()
}

/// Writes `CastMessage`s as frame bodies. A message that cannot be encoded (over the 64 KiB
/// limit) fails its own write only, and `unsendable` is told.
public final class CastMessageEncoder: ChannelOutboundHandler {
    public typealias OutboundIn = CastMessage
    public typealias OutboundOut = ByteBuffer

    private let unsendable: (CastMessage, any Error) -> Void

    public init(unsendable: @escaping (CastMessage, any Error) -> Void) {
        self.unsendable = unsendable
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let message = Self.unwrapOutboundIn(data)
        do {
            context.write(
                Self.wrapOutboundOut(try message.frameBuffer(allocator: context.channel.allocator)), promise: promise)
        } catch {
            unsendable(message, error)
            promise?.fail(error)
        }
    }
}

extension CastMessage {
    /// The message as a frame body (``frameBody()``: over the 64 KiB limit, it throws) in a
    /// buffer from `allocator`: what every writer of CastMessages hands its framing.
    public func frameBuffer(allocator: ByteBufferAllocator) throws -> ByteBuffer {
        let body = try frameBody()
        var buffer = allocator.buffer(capacity: body.count)
        buffer.writeBytes(body)
        return buffer
    }
}
