import CastClient
import CastdSupport
import Foundation
import LengthPrefixFraming
import NIOCore
import NIOPosix
import Synchronization

/// The soak's requests: a fixed mix, drawn from a seeded generator, so that a run can be
/// repeated. About half of them reach a device (the media and volume requests); the rest are
/// answered from castd's own state.
enum SoakRequestKind: CaseIterable, Sendable {
    case getStatus, listDevices, requestMediaStatus, pause, play, seek, setVolume

    /// Out of 100.
    var weight: Int {
        switch self {
        case .getStatus: 25
        case .listDevices: 25
        case .requestMediaStatus: 14
        case .pause: 8
        case .play: 8
        case .seek: 12
        case .setVolume: 8
        }
    }

    var method: CastdMethod {
        switch self {
        case .getStatus: .getStatus
        case .listDevices: .listDevices
        case .requestMediaStatus: .requestMediaStatus
        case .pause: .pause
        case .play: .play
        case .seek: .seek
        case .setVolume: .setVolume
        }
    }

    var reachesDevice: Bool { self != .getStatus && self != .listDevices }

    /// The soak's media is this long (seconds); seeks land before its end.
    static let mediaDuration = 3600.0
}

/// One client's stream of requests.
struct SoakRequestSource: Sendable {
    private var random: SplitMix64
    /// The devices, by the selector requests name them with.
    let devices: [String]

    init(seed: UInt64, devices: [String]) {
        precondition(!devices.isEmpty)
        random = SplitMix64(seed: seed)
        self.devices = devices
    }

    mutating func nextKind() -> SoakRequestKind {
        var roll = Int(random.next(upperBound: UInt64(100)))
        for kind in SoakRequestKind.allCases {
            if roll < kind.weight { return kind }
            roll -= kind.weight
        }
        return .getStatus
    }

    /// The next request: its method and its serialized request message.
    mutating func next() throws -> (CastdMethod, [UInt8]) {
        let kind = nextKind()
        let device = devices[Int(random.next(upperBound: UInt64(devices.count)))]
        switch kind {
        case .getStatus:
            return (kind.method, [])
        case .listDevices:
            return (kind.method, [])
        case .requestMediaStatus, .pause, .play:
            var request = Castd_V1_MediaRequest()
            request.device = device
            return (kind.method, try request.serializedBytes())
        case .seek:
            var request = Castd_V1_SeekRequest()
            request.device = device
            // Whole seconds, anywhere but the last ten minutes: the media never ends.
            request.position = Double(random.next(upperBound: UInt64(SoakRequestKind.mediaDuration - 600)))
            return (kind.method, try request.serializedBytes())
        case .setVolume:
            var request = Castd_V1_SetVolumeRequest()
            request.device = device
            request.level = Double(random.next(upperBound: UInt64(21))) / 20
            return (kind.method, try request.serializedBytes())
        }
    }
}

/// Calls ended across every client of a run, with a signal at each tenth of the total.
final class SoakProgress: Sendable {
    private let ended = Atomic<Int>(0)
    private let total: Int
    private let tenths: AsyncStream<Int>.Continuation
    /// 1, 2, … 10 as each tenth of the calls has ended.
    let marks: AsyncStream<Int>

    init(total: Int) {
        self.total = total
        (marks, tenths) = AsyncStream.makeStream(of: Int.self)
    }

    var count: Int { ended.load(ordering: .relaxed) }

    func add() {
        let now = ended.add(1, ordering: .relaxed).newValue
        // The first call past each tenth (integer arithmetic: exactly one call crosses each).
        if now * 10 / total != (now - 1) * 10 / total { tenths.yield(now * 10 / total) }
        if now == total { tenths.finish() }
    }

    func finish() { tenths.finish() }
}

/// What a soak client needs to know, given to the handler it makes on its event loop.
struct SoakClientPlan: Sendable {
    var seed: UInt64
    var requests: Int
    /// Calls open at once on the connection.
    var depth: Int
    var devices: [String]
    /// A call with no status after this long is lost.
    var deadline: Duration
}

/// Asks the handler (on its event loop) to count overdue calls lost.
struct SoakSweep: Sendable {}
/// Asks a watcher's handler to cancel its Watch.
struct SoakStopWatching: Sendable {}

/// One soak client: its own connection, `depth` calls open at once, each ended call replaced by
/// the next until `requests` have been made; every frame from castd goes through its ledger.
/// It runs entirely on its channel's event loop.
final class SoakClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let plan: SoakClientPlan
    private var source: SoakRequestSource
    private var ledger = CallLedger()
    private var sent = 0
    private var ended = 0
    private var done = false
    private let progress: SoakProgress
    private let result: EventLoopPromise<SoakTally>
    private var sweep: RepeatedTask?

    init(plan: SoakClientPlan, progress: SoakProgress, result: EventLoopPromise<SoakTally>) {
        self.plan = plan
        source = SoakRequestSource(seed: plan.seed, devices: plan.devices)
        self.progress = progress
        self.result = result
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        sweep = context.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            channel.pipeline.fireUserInboundEventTriggered(SoakSweep())
        }
        sendMore(context: context, flush: true)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let body = unwrapInboundIn(data)
        let now = monotonicNanos()
        let frame: Castd_V1_Frame
        do {
            frame = try CastdRPC.decodeFrame(body)
        } catch {
            var malformed = SoakTally()
            malformed.malformed = 1
            malformed.note("a frame that does not decode: \(error)")
            ledgerExtra.merge(malformed)
            return
        }
        if ledger.receive(frame, at: now) != nil {
            callEnded(context: context)
        }
    }

    /// Anomalies outside any call's ledger entry (frames that did not decode).
    private var ledgerExtra = SoakTally()

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is SoakSweep, !done else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        let cutoff = monotonicNanos() &- plan.deadline.nanoseconds
        let overdue = ledger.expire(startedBefore: cutoff)
        for _ in overdue { callEnded(context: context) }
        context.flush()
    }

    private func callEnded(context: ChannelHandlerContext) {
        ended += 1
        progress.add()
        if ended == plan.requests {
            finish(context: context, connectionLost: false)
        } else {
            sendMore(context: context, flush: false)
        }
    }

    /// Opens calls until `depth` are open or every request has been made. Written now; flushed
    /// here with `flush`, else at the end of the read or sweep that called it.
    private func sendMore(context: ChannelHandlerContext, flush: Bool) {
        var wrote = false
        while sent < plan.requests && ledger.openCount < plan.depth {
            do {
                let (method, request) = try source.next()
                var start = Castd_V1_CallStart()
                start.method = method.path
                start.request = Data(request)
                var frame = Castd_V1_Frame()
                frame.callID = ledger.start(method, at: monotonicNanos())
                frame.start = start
                let bytes: [UInt8] = try frame.serializedBytes()
                var buffer = context.channel.allocator.buffer(capacity: bytes.count)
                buffer.writeBytes(bytes)
                context.write(wrapOutboundOut(buffer), promise: nil)
                sent += 1
                wrote = true
            } catch {
                result.fail(error)
                context.close(promise: nil)
                return
            }
        }
        if wrote && flush { context.flush() }
    }

    private func finish(context: ChannelHandlerContext, connectionLost: Bool) {
        guard !done else { return }
        done = true
        sweep?.cancel()
        ledger.close()
        var tally = ledger.tally
        tally.merge(ledgerExtra)
        if connectionLost {
            tally.connectionsLost += 1
            tally.note("a client's connection ended after \(ended) of \(plan.requests) calls")
        }
        result.succeed(tally)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(context: context, connectionLost: true)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        ledgerExtra.note("connection error: \(error)")
        context.close(promise: nil)
    }
}

/// How far a watcher has read, for the driver to wait on.
final class SoakWatcherProgress: Sendable {
    /// 0: no snapshot yet; else the last sequence read + 1.
    private let last = Atomic<UInt64>(0)
    private let done = Atomic<Bool>(false)
    private let drops = Atomic<Int>(0)
    private let relinks = Atomic<Int>(0)

    /// Link losses and reconnections castd has reported to this watcher so far, every device.
    var linkDrops: Int { drops.load(ordering: .relaxed) }
    var reconnections: Int { relinks.load(ordering: .relaxed) }
    func links(drops: Int, reconnections: Int) {
        self.drops.store(drops, ordering: .relaxed)
        relinks.store(reconnections, ordering: .relaxed)
    }

    /// The watcher's result is in (its Watch ended, or its connection).
    var ended: Bool { done.load(ordering: .acquiring) }
    func end() { done.store(true, ordering: .releasing) }

    var hasSnapshot: Bool { last.load(ordering: .relaxed) > 0 }
    /// The sequence of the last event read (the snapshot's if none after it).
    var sequence: UInt64? {
        let value = last.load(ordering: .relaxed)
        return value == 0 ? nil : value - 1
    }

    func read(through sequence: UInt64) { last.store(sequence + 1, ordering: .relaxed) }
}

/// What one watcher's connection yielded.
struct SoakWatcherResult: Sendable {
    var log: WatchLog
    var tally: SoakTally
    /// How its Watch ended: CANCELLED when the driver cancelled it, else a failure.
    var endCode: Int?
    /// Whether the driver had asked it to stop when it ended.
    var stopped: Bool
}

/// One watcher: a Watch call on its own connection, every event logged, until it is asked to
/// cancel (`SoakStopWatching`) and castd ends the call.
final class SoakWatchHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var ledger = CallLedger()
    private var log = WatchLog()
    private var callID: UInt64 = 0
    private var stopping = false
    private var done = false
    private let progress: SoakWatcherProgress
    private let result: EventLoopPromise<SoakWatcherResult>

    init(progress: SoakWatcherProgress, result: EventLoopPromise<SoakWatcherResult>) {
        self.progress = progress
        self.result = result
    }

    func channelActive(context: ChannelHandlerContext) {
        var start = Castd_V1_CallStart()
        start.method = CastdMethod.watch.path
        var frame = Castd_V1_Frame()
        callID = ledger.start(.watch, at: monotonicNanos())
        frame.callID = callID
        frame.start = start
        write(frame, context: context)
        context.fireChannelActive()
    }

    private func write(_ frame: Castd_V1_Frame, context: ChannelHandlerContext) {
        guard let bytes: [UInt8] = try? frame.serializedBytes() else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let body = unwrapInboundIn(data)
        guard let frame = try? CastdRPC.decodeFrame(body) else {
            var tally = SoakTally()
            tally.malformed = 1
            extra.merge(tally)
            return
        }
        if frame.callID == callID, case .message(let bytes)? = frame.kind, !done {
            log.record(Array(bytes))
            progress.links(
                drops: log.linkDrops.values.reduce(0, +), reconnections: log.reconnections.values.reduce(0, +))
            if let sequence = log.lastSequence { progress.read(through: sequence) }
        }
        if let ended = ledger.receive(frame, at: monotonicNanos()) {
            finish(context: context, code: ended.code)
        }
    }

    private var extra = SoakTally()

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is SoakStopWatching else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        guard !stopping, !done else { return }
        stopping = true
        var frame = Castd_V1_Frame()
        frame.callID = callID
        frame.cancel = Castd_V1_Cancel()
        write(frame, context: context)
    }

    private func finish(context: ChannelHandlerContext, code: Int?) {
        guard !done else { return }
        done = true
        ledger.close()
        var tally = ledger.tally
        tally.merge(extra)
        if code == nil {
            tally.connectionsLost += 1
            tally.note("a watcher's connection ended before its Watch did")
        }
        result.succeed(SoakWatcherResult(log: log, tally: tally, endCode: code, stopped: stopping))
        progress.end()
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(context: context, code: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        extra.note("watcher connection error: \(error)")
        context.close(promise: nil)
    }
}

/// Raw castd.v1 connections: the length-prefix framing of LengthPrefixFraming and a handler of
/// the soak's, on NIO's shared event loops.
enum SoakConnection {
    /// The watchers' own event loop: what they read is not held up behind the clients and the
    /// emulated devices, which share NIO's other loops in this process. A watcher that falls
    /// behind should be castd's doing, not the driver's.
    static let watcherLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    static func open(
        socket: String, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        _ makeHandler: @escaping @Sendable () -> any ChannelHandler
    ) async throws -> any Channel {
        try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(
                        ByteToMessageHandler(
                            LengthPrefixedFrameDecoder(maximumFrameLength: CastdRPC.defaultMaximumFrameLength)))
                    try sync.addHandler(LengthPrefixedFrameEncoder())
                    try sync.addHandler(makeHandler())
                }
            }
            .connect(unixDomainSocketPath: socket)
            .get()
    }

    /// A soak client's connection; its tally once it has made every request (or lost its
    /// connection).
    static func client(socket: String, plan: SoakClientPlan, progress: SoakProgress) async throws
        -> EventLoopFuture<SoakTally>
    {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let result = loop.makePromise(of: SoakTally.self)
        do {
            _ = try await open(socket: socket) {
                SoakClientHandler(plan: plan, progress: progress, result: result)
            }
        } catch {
            result.fail(error)
            throw error
        }
        return result.futureResult
    }

    /// A watcher's connection, and its result once stopped.
    static func watcher(socket: String, progress: SoakWatcherProgress) async throws
        -> (any Channel, EventLoopFuture<SoakWatcherResult>)
    {
        let loop = watcherLoops.next()
        let result = loop.makePromise(of: SoakWatcherResult.self)
        do {
            let channel = try await open(socket: socket, group: loop) {
                SoakWatchHandler(progress: progress, result: result)
            }
            return (channel, result.futureResult)
        } catch {
            result.fail(error)
            throw error
        }
    }
}

extension Duration {
    /// The whole duration in nanoseconds (negative durations as 0).
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}
