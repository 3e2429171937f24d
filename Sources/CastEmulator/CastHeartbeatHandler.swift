import CastProtocol
import NIOCore

/// The device's side of `tp.heartbeat`: answers PING with PONG, sends PING when the sender has
/// been quiet for `pingAfter`, and closes the connection when it has been quiet for `closeAfter`.
/// Any message received resets both timers.
///
/// Heartbeat messages stop here; everything else goes on up the pipeline.
final class CastHeartbeatHandler: ChannelDuplexHandler {
    typealias InboundIn = CastMessage
    typealias InboundOut = CastMessage
    typealias OutboundIn = CastMessage
    typealias OutboundOut = CastMessage

    private let pingAfter: TimeAmount
    private let closeAfter: TimeAmount
    private var pingTimer: Scheduled<Void>?
    private var closeTimer: Scheduled<Void>?
    /// Whom to PING: the last sender heard on this connection.
    private var peer = "sender-0"

    init(_ heartbeat: EmulatorHeartbeat) {
        pingAfter = TimeAmount(heartbeat.pingAfter)
        closeAfter = TimeAmount(heartbeat.closeAfter)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let message = unwrapInboundIn(data)
        if message.sourceID != CastWire.broadcastID { peer = message.sourceID }
        arm(context: context)
        guard message.namespace == CastNamespace.heartbeat else {
            context.fireChannelRead(data)
            return
        }
        if message.payloadType == .string, let payload = try? JSONValue.parse(message.payloadUtf8),
            CastEnvelope(payload).type == "PING"
        {
            let pong = CastMessage.json(
                source: message.destinationID, destination: message.sourceID, namespace: CastNamespace.heartbeat,
                payload: ConnectionMessage.pong
            )
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        }
    }

    private func arm(context: ChannelHandlerContext) {
        disarm()
        let loop = context.eventLoop.assumeIsolated()
        pingTimer = loop.scheduleTask(in: pingAfter) { [self] in
            let ping = CastMessage.json(
                source: CastWire.platformReceiverID, destination: peer, namespace: CastNamespace.heartbeat,
                payload: ConnectionMessage.ping
            )
            context.writeAndFlush(wrapOutboundOut(ping), promise: nil)
        }
        let closeAfter = closeAfter
        closeTimer = loop.scheduleTask(in: closeAfter) {
            context.fireErrorCaught(
                EmulatorError(.heartbeatTimeout, "nothing received for \(Duration(closeAfter)), closing")
            )
            context.close(promise: nil)
        }
    }

    private func disarm() {
        pingTimer?.cancel()
        closeTimer?.cancel()
        pingTimer = nil
        closeTimer = nil
    }
}
