import NIOCore

/// A refused connection's reads, dropped unread: castd reads only so that the client's writes do
/// not fail before it reads why it was refused (`CastdServer.linger`).
final class DropReadsHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ClientFrame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
