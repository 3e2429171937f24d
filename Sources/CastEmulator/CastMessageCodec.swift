import CastProtocol
import Logging
import NIOCore

/// Turns frame bodies into CastMessages and back.
///
/// Inbound: a body that is not a valid CastMessage (undecodable, a required field missing, an
/// empty id or namespace, a payload that does not match its type) is a protocol violation: the
/// error goes up the pipeline and the connection is closed. Outbound: a message over the 64 KiB
/// limit fails its own write only.
final class CastMessageCodec: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = CastMessage
    typealias OutboundIn = CastMessage
    typealias OutboundOut = ByteBuffer

    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let body = unwrapInboundIn(data)
        do {
            let message = try CastMessage.decodeFrameBody(Array(body.readableBytesView))
            context.fireChannelRead(wrapInboundOut(message))
        } catch {
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let message = unwrapOutboundIn(data)
        do {
            let body = try message.frameBody()
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.write(wrapOutboundOut(buffer), promise: promise)
        } catch {
            logger.warning("not sent: \(error)", metadata: ["cast.namespace": "\(message.namespace)"])
            promise?.fail(error)
        }
    }
}
