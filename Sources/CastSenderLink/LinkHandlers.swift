import CastdSupport
import CastProtocol
import Logging
import NIOCore
import NIOSSL
import NIOTLS

/// The sender's report of the bad messages its `CastMessageDecoder` skips. A device, or any host
/// before it has authenticated, can send such frames as fast as it likes: a few are logged a
/// minute (``LogThrottle``), and how many more there were is said with the next one logged and
/// when the link closes.
final class BadMessageLog: CastBadMessageReporter {
    private let logger: Logger
    private let throttle: LogThrottle

    init(logger: Logger, throttle: LogThrottle = LogThrottle()) {
        self.logger = logger
        self.throttle = throttle
    }

    func skipped(_ error: any Error) {
        guard let metadata = throttle.metadata(["error": "\(error)"]) else { return }
        logger.warning("skipped a bad message from the device", metadata: metadata)
    }

    func connectionClosed() {
        let unlogged = throttle.takeUnlogged()
        if unlogged > 0 {
            logger.warning("skipped \(unlogged) more bad messages from the device than were logged")
        }
    }
}

/// Answers the device's PINGs, sends a PING after `pingInterval` without any message from the
/// device, and closes the link after `deadAfter` without one (Chromium's numbers: 5 s and 10 s).
/// Heartbeat messages are consumed here and never reach the application.
///
/// `deadAfter` counts only the time the link was reading (``PeerSilence``): while castd has not
/// taken what the link read, the link reads nothing more, and a device sending all along would
/// otherwise be declared silent. PINGs go out by the clock all the same.
final class SenderHeartbeatHandler: ChannelDuplexHandler {
    typealias InboundIn = CastMessage
    typealias InboundOut = CastMessage
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let senderID: String
    private let pingInterval: TimeAmount
    private let deadAfter: TimeAmount
    private let logger: Logger
    private var lastReceived: NIODeadline = .now()
    private var silence = PeerSilence(now: .now())
    private var timer: Scheduled<Void>?
    /// PINGs left unanswered because the device did not read (see `channelRead`).
    private(set) var unansweredPings = 0
    private let unansweredPingLog = LogThrottle(burst: 1, interval: .seconds(60))

    init(senderID: String, pingInterval: TimeAmount, deadAfter: TimeAmount, logger: Logger) {
        self.senderID = senderID
        self.pingInterval = pingInterval
        self.deadAfter = deadAfter
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    private func start(context: ChannelHandlerContext) {
        guard timer == nil else { return }
        lastReceived = context.eventLoop.now
        silence = PeerSilence(now: lastReceived)
        schedule(context: context, in: pingInterval)
    }

    private func schedule(context: ChannelHandlerContext, in delay: TimeAmount) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: delay) {
            let (handler, context) = loopBound.value
            handler.tick(context: context)
        }
    }

    private func tick(context: ChannelHandlerContext) {
        let now = context.eventLoop.now
        let quiet = now - lastReceived
        let silent = silence.length(at: now)
        if silent >= deadAfter {
            logger.warning("device silent; closing link", metadata: ["silent.ms": "\(silent.nanoseconds / 1_000_000)"])
            context.fireErrorCaught(
                CastLinkError(.closed, "no message from the device for \(silent.nanoseconds / 1_000_000_000) s"))
            context.close(promise: nil)
            return
        }
        if quiet >= pingInterval {
            logger.trace("sent PING", metadata: ["silent.ms": "\(quiet.nanoseconds / 1_000_000)"])
            send(ConnectionMessage.ping, destination: CastWire.platformReceiverID, context: context)
            // Next check when the link would be declared dead, or at the next ping.
            schedule(context: context, in: min(pingInterval, deadAfter - silent))
        } else {
            schedule(context: context, in: min(pingInterval - quiet, deadAfter - silent))
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        silence.readCompleted(at: context.eventLoop.now)
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        silence.readRequested(at: context.eventLoop.now)
        context.read()
    }

    private func send(_ payload: JSONValue, destination: String, context: ChannelHandlerContext) {
        let message = CastMessage.json(
            source: senderID, destination: destination, namespace: CastNamespace.heartbeat, payload: payload)
        guard let buffer = try? message.frameBuffer(allocator: context.channel.allocator) else { return }
        context.writeAndFlush(Self.wrapOutboundOut(buffer), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastReceived = context.eventLoop.now
        silence.heard(at: lastReceived)
        let message = Self.unwrapInboundIn(data)
        guard message.namespace == CastNamespace.heartbeat else {
            context.fireChannelRead(data)
            return
        }
        if let type = try? CastEnvelope(message.jsonPayload()).type, type == CastMessageType.ping {
            // A device that PINGs and does not read would grow castd's outbound buffer by a
            // PONG each time: while what was written is still waiting (the channel is not
            // writable), PINGs go unanswered. A device that reads gets its PONGs; one that
            // does not has no use for them.
            guard context.channel.isWritable else {
                unansweredPings += 1
                if let metadata = unansweredPingLog.metadata(["unanswered": "\(unansweredPings)"]) {
                    logger.debug(
                        "not answering PINGs while the device does not read what castd sent", metadata: metadata)
                }
                return
            }
            logger.trace("answered PING", metadata: ["cast.source": "\(message.sourceID)"])
            send(ConnectionMessage.pong, destination: message.sourceID, context: context)
        }
    }
}

/// Completes when TLS is up, fails if the handshake fails or the channel closes first.
final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let promise: EventLoopPromise<Void>
    private var done = false

    init(promise: EventLoopPromise<Void>) {
        self.promise = promise
    }

    private func finish(_ result: Result<Void, any Error>) {
        guard !done else { return }
        done = true
        promise.completeWith(result)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            finish(.success(()))
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(CastLinkError(.connectFailed, "connection closed during the TLS handshake")))
        context.fireChannelInactive()
    }
}
