import CastProtocol
import NIOCore

/// The device's side of `tp.heartbeat`: answers PING with PONG, sends PING when the sender has
/// been quiet for `pingAfter`, and closes the connection when it has been quiet for `closeAfter`.
/// Any message received resets both timers. `closeAfter` counts only the time the device was
/// reading (``PeerSilence``): while the emulator has not taken what it read, it reads nothing
/// more, and that is not the sender's silence.
///
/// Fault injection can stop the heartbeat (no PONG, no PING) or make the device silent (no PONG,
/// no PING, and quiet links are not closed either: a device that vanished): `mode` is asked at
/// each PING received and each timer.
///
/// Heartbeat messages stop here; everything else goes on up the pipeline.
final class DeviceHeartbeatHandler: ChannelDuplexHandler {
    typealias InboundIn = CastMessage
    typealias InboundOut = CastMessage
    typealias OutboundIn = CastMessage
    typealias OutboundOut = CastMessage

    private let pingAfter: TimeAmount
    private let closeAfter: TimeAmount
    private var pingTimer: Scheduled<Void>?
    private var closeTimer: Scheduled<Void>?
    private var silence = PeerSilence(now: .now())
    /// Whom to PING: the last sender heard on this connection.
    private var peer = "sender-0"
    private let mode: @Sendable () -> EmulatorFaults.Heartbeat

    init(_ heartbeat: EmulatorHeartbeat, mode: @escaping @Sendable () -> EmulatorFaults.Heartbeat = { .normal }) {
        pingAfter = TimeAmount(heartbeat.pingAfter)
        closeAfter = TimeAmount(heartbeat.closeAfter)
        self.mode = mode
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

    /// Sent down every link when the device stops being silent: it has been away, so the link's
    /// quiet time starts again from now.
    struct SilenceEnded: Sendable {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is SilenceEnded else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if context.channel.isActive { arm(context: context) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        silence.readCompleted(at: context.eventLoop.now)
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        silence.readRequested(at: context.eventLoop.now)
        context.read()
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
            CastEnvelope(payload).type == CastMessageType.ping, mode() == .normal
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
        silence.heard(at: context.eventLoop.now)
        let loop = context.eventLoop.assumeIsolated()
        pingTimer = loop.scheduleTask(in: pingAfter) { [self] in
            guard mode() == .normal else { return }
            let ping = CastMessage.json(
                source: CastWire.platformReceiverID, destination: peer, namespace: CastNamespace.heartbeat,
                payload: ConnectionMessage.ping
            )
            context.writeAndFlush(wrapOutboundOut(ping), promise: nil)
        }
        armCloseTimer(context: context)
    }

    private func armCloseTimer(context: ChannelHandlerContext, in delay: TimeAmount? = nil) {
        let closeAfter = closeAfter
        closeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: delay ?? closeAfter) { [self] in
            guard mode() != .silent else {
                armCloseTimer(context: context)  // a vanished device closes nothing
                return
            }
            let silent = silence.length(at: context.eventLoop.now)
            guard silent >= closeAfter else {
                armCloseTimer(context: context, in: closeAfter - silent)  // the emulator was not reading
                return
            }
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
