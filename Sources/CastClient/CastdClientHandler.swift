import CastdAPI
import NIOCore

/// Reads castd's frames on a client connection's event loop and hands each to its call
/// (`CastdConnection.received`): a unary caller is resumed from here, with no reader task or
/// stream between the socket and the call.
final class CastdClientHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let connection: CastdConnection

    init(connection: CastdConnection) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let error = connection.received(unwrapInboundIn(data)) {
            connection.shutdown(error)
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.shutdown(CastdConnection.readError(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.shutdown(CastdConnection.connectionLost)
        context.fireChannelInactive()
    }
}
