import CastTestSupport
import CastdAPI
import Foundation
import LengthPrefixFraming
import NIOCore
import SwiftProtobuf
import Testing

@testable import CastClient

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's side of a `CastdConnection` that runs over in-memory streams instead of a
/// socket: the test reads the client's frames and answers them one by one.
struct MemoryDaemon {
    let toClient: AsyncThrowingStream<ByteBuffer, any Error>.Continuation
    var fromClient: AsyncStream<ByteBuffer>.AsyncIterator

    /// The client's next frame (a `start` or a `cancel`).
    mutating func nextFrame() async throws -> Castd_V1_Frame {
        let body = try #require(await fromClient.next(), "the client closed its side without another frame")
        return try Castd_V1_Frame(serializedBytes: Array(body.readableBytesView))
    }

    /// The client's next frame, which must start `method`; returns its call id and request.
    mutating func nextCall<Request: SwiftProtobuf.Message>(
        _ method: CastdMethod,
        as: Request.Type
    ) async throws -> (callID: UInt64, request: Request, timeoutMs: UInt64) {
        let frame = try await nextFrame()
        guard case .start(let start) = frame.kind else {
            Issue.record("expected a start frame, got \(frame)")
            throw CastdError(.internal, "unexpected frame")
        }
        #expect(start.method == method.path)
        return (frame.callID, try Request(serializedBytes: start.request), start.timeoutMs)
    }

    func send(_ frame: Castd_V1_Frame) throws {
        toClient.yield(ByteBuffer(bytes: try frame.serializedBytes() as [UInt8]))
    }

    func message(_ callID: UInt64, _ message: some SwiftProtobuf.Message) throws {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        frame.message = try message.serializedData()
        try send(frame)
    }

    func status(_ callID: UInt64, _ code: CastdCode, _ text: String = "") throws {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        frame.status = CastdError(code, text).status
        try send(frame)
    }

    /// A unary reply: the response, then OK.
    func reply(_ callID: UInt64, _ response: some SwiftProtobuf.Message) throws {
        try message(callID, response)
        try status(callID, .ok)
    }
}

/// How a test's client reaches the test's daemon.
enum Transport: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// `CastdConnection.serve(inbound:write:)` over in-memory streams.
    case memory
    /// A real Unix socket: `CastdClient.connect`, its channel handler and its writes; the test
    /// side reads and writes the socket itself.
    case socket

    var testDescription: String { rawValue }
}

/// Runs `body` with a client whose connection is served over in-memory streams.
func withMemoryClient(
    maximumFrameLength: Int = CastdRPC.defaultMaximumFrameLength,
    _ body: (CastdClient, inout MemoryDaemon) async throws -> Void
) async throws {
    try await withClient(.memory, maximumFrameLength: maximumFrameLength, body)
}

/// Runs `body` with a client connected to the test's daemon by `transport`.
func withClient(
    _ transport: Transport,
    maximumFrameLength: Int = CastdRPC.defaultMaximumFrameLength,
    _ body: (CastdClient, inout MemoryDaemon) async throws -> Void
) async throws {
    if transport == .socket {
        try await withSocketClient(maximumFrameLength: maximumFrameLength, body)
        return
    }
    let connection = CastdConnection(maximumFrameLength: maximumFrameLength)
    let client = CastdClient(socketPath: "memory", connection: connection, channel: nil)
    let (inbound, toClient) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
    let (sent, sentContinuation) = AsyncStream<ByteBuffer>.makeStream()
    var daemon = MemoryDaemon(toClient: toClient, fromClient: sent.makeAsyncIterator())
    try await run(client, &daemon, body) {
        await connection.serve(inbound: inbound, write: { sentContinuation.yield($0) })
        sentContinuation.finish()
    }
}

/// Runs `body` with `client` and the daemon side while `serving` (a child task) carries the
/// daemon's frames to the client; then ends the daemon's stream, closes the client and waits
/// for `serving` to end.
private func run(
    _ client: CastdClient,
    _ daemon: inout MemoryDaemon,
    _ body: (CastdClient, inout MemoryDaemon) async throws -> Void,
    serving: @escaping @Sendable () async -> Void
) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await serving() }
        do {
            try await body(client, &daemon)
        } catch {
            daemon.toClient.finish()
            await client.close()
            throw error
        }
        daemon.toClient.finish()
        await client.close()
        try await group.waitForAll()
    }
}

/// The same daemon side over a real Unix socket: what the test yields to `toClient` is written
/// to the socket as frames (ending the stream closes it; ending it with
/// `LengthPrefixError.frameTooLarge` first writes a header announcing that many bytes), and
/// every frame the client writes comes out of `fromClient`.
private func withSocketClient(
    maximumFrameLength: Int,
    _ body: (CastdClient, inout MemoryDaemon) async throws -> Void
) async throws {
    try await withTemporaryDirectory { directory in
        let path = directory + "/castd.sock"
        let listener = try unixSocket(Int32(SOCK_STREAM.rawValue), path: path, bindInstead: true)
        defer { close(listener) }
        guard listen(listener, 1) == 0 else { throw POSIXError(.EADDRINUSE) }
        let client = try await CastdClient.connect(socketPath: path, maximumFrameLength: maximumFrameLength)
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { throw POSIXError(.ECONNABORTED) }
        let peer = RawSocket(fd: fd)
        let (inbound, toClient) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
        let (sent, sentContinuation) = AsyncStream<ByteBuffer>.makeStream()
        var daemon = MemoryDaemon(toClient: toClient, fromClient: sent.makeAsyncIterator())
        // The client's frames, read on a thread of their own: reads block (and Dispatch's global
        // queues add threads for blocked work only slowly, a second at a time here).
        let readerDone = AsyncStream<Void>.makeStream()
        Thread {
            while let body = try? peer.receiveBodyBlocking() { sentContinuation.yield(ByteBuffer(bytes: body)) }
            sentContinuation.finish()
            readerDone.continuation.finish()
        }.start()
        try await run(client, &daemon, body) {
            do {
                for try await body in inbound { try peer.write(frameBody: Array(body.readableBytesView)) }
            } catch LengthPrefixError.frameTooLarge(let length, _) {
                try? peer.write(RawSocket.header(length: Int(length)))
            } catch {}
            shutdown(peer.fd, Int32(SHUT_RDWR))
        }
        shutdown(peer.fd, Int32(SHUT_RDWR))
        for await _ in readerDone.stream {}
    }
}

func device(_ id: String, _ name: String) -> CastdDevice {
    var device = CastdDevice()
    device.id = id
    device.friendlyName = name
    return device
}

@Suite(.timeLimit(.minutes(1))) struct ClientConnectionTests {
    @Test(arguments: Transport.allCases) func unaryCallRoundTrip(over transport: Transport) async throws {
        try await withClient(transport) { client, daemon in
            let devices = Task { try await client.listDevices() }
            let call = try await daemon.nextCall(.listDevices, as: Castd_V1_ListDevicesRequest.self)
            #expect(call.callID == 1)
            #expect(call.timeoutMs == 0)
            var response = Castd_V1_ListDevicesResponse()
            response.devices = [device("a", "Kitchen"), device("b", "Living Room TV")]
            try daemon.reply(call.callID, response)
            #expect(try await devices.value.map(\.friendlyName) == ["Kitchen", "Living Room TV"])
        }
    }

    @Test(arguments: Transport.allCases) func requestsCarryTheirFieldsAndDeadline(over transport: Transport)
        async throws
    {
        try await withClient(transport) { client, daemon in
            let media = CastdMediaInformation(
                url: "https://example.com/a.mp4", contentType: "video/mp4", streamType: .buffered, title: "A"
            )
            let loaded = Task { try await client.load(media, device: "kitchen", autoplay: false, startTime: 90) }
            let load = try await daemon.nextCall(.load, as: Castd_V1_LoadRequest.self)
            #expect(load.request.device == "kitchen")
            #expect(load.request.hasAutoplay && load.request.autoplay == false)
            #expect(load.request.startTime == 90)
            #expect(load.request.media.contentID == "https://example.com/a.mp4")
            #expect(load.request.media.metadata.title == "A")
            #expect(load.request.media.streamType == .buffered)
            var status = CastdMediaStatus()
            status.playerState = .paused
            try daemon.reply(load.callID, status)
            #expect(try await loaded.value.playerState == .paused)

            let played = Task {
                try await client.unary(
                    .play, Castd_V1_MediaRequest(), as: CastdMediaStatus.self, timeout: .seconds(90)
                )
            }
            let play = try await daemon.nextCall(.play, as: Castd_V1_MediaRequest.self)
            #expect(play.callID == 2)
            #expect(play.timeoutMs == 90_000)
            status.playerState = .playing
            try daemon.reply(play.callID, status)
            #expect(try await played.value.playerState == .playing)
        }
    }

    @Test(arguments: Transport.allCases) func daemonStatusBecomesCastdError(over transport: Transport) async throws {
        try await withClient(transport) { client, daemon in
            let result = Task { try await client.pause(device: "attic") }
            let call = try await daemon.nextCall(.pause, as: Castd_V1_MediaRequest.self)
            #expect(call.request.device == "attic")
            try daemon.status(call.callID, .notFound, "no device matches 'attic' (devices: Kitchen)")
            await #expect(throws: CastdError(.notFound, "no device matches 'attic' (devices: Kitchen)")) {
                try await result.value
            }
        }
    }

    @Test(arguments: Transport.allCases) func concurrentCallsAreAnsweredOutOfOrder(over transport: Transport)
        async throws
    {
        try await withClient(transport) { client, daemon in
            let first = Task { try await client.setVolume(level: 0.25) }
            let one = try await daemon.nextCall(.setVolume, as: Castd_V1_SetVolumeRequest.self)
            let second = Task { try await client.setVolume(muted: true) }
            let two = try await daemon.nextCall(.setVolume, as: Castd_V1_SetVolumeRequest.self)
            #expect(one.request.hasLevel && !one.request.hasMuted)
            #expect(two.request.hasMuted && !two.request.hasLevel)
            var volume = CastdVolume()
            volume.muted = true
            try daemon.reply(two.callID, volume)
            volume.muted = false
            volume.level = 0.25
            try daemon.reply(one.callID, volume)
            #expect(try await first.value.level == 0.25)
            #expect(try await second.value.muted == true)
        }
    }

    @Test(arguments: Transport.allCases) func leavingAWatchLoopCancelsTheCall(over transport: Transport) async throws {
        try await withClient(transport) { client, daemon in
            let firstSequence = Task { () async throws -> UInt64? in
                for try await event in client.watch() { return event.sequence }
                return nil
            }
            let watch = try await daemon.nextCall(.watch, as: Castd_V1_WatchRequest.self)
            var event = CastdEvent()
            event.sequence = 41
            event.snapshot = CastdSnapshot()
            try daemon.message(watch.callID, event)
            #expect(try await firstSequence.value == 41)
            let cancel = try await daemon.nextFrame()
            #expect(cancel.callID == watch.callID)
            #expect(cancel.kind == .cancel(Castd_V1_Cancel()))
        }
    }

    @Test(arguments: Transport.allCases) func watchDeliversEventsInOrderAndEndsWithTheDaemonsError(
        over transport: Transport
    ) async throws {
        try await withClient(transport) { client, daemon in
            let sequences = Task { () async throws -> ([UInt64], CastdError?) in
                var seen: [UInt64] = []
                do {
                    for try await event in client.watch() { seen.append(event.sequence) }
                    return (seen, nil)
                } catch let error as CastdError {
                    return (seen, error)
                }
            }
            let watch = try await daemon.nextCall(.watch, as: Castd_V1_WatchRequest.self)
            for sequence in [UInt64(1), 2, 3] {
                var event = CastdEvent()
                event.sequence = sequence
                try daemon.message(watch.callID, event)
            }
            try daemon.status(watch.callID, .unavailable, "castd is shutting down")
            let (seen, error) = try await sequences.value
            #expect(seen == [1, 2, 3])
            #expect(error == CastdError(.unavailable, "castd is shutting down"))
        }
    }

    @Test(arguments: Transport.allCases) func cancellingTheTaskCancelsTheCall(over transport: Transport) async throws {
        try await withClient(transport) { client, daemon in
            let task = Task { try await client.play() }
            let call = try await daemon.nextCall(.play, as: Castd_V1_MediaRequest.self)
            task.cancel()
            let cancel = try await daemon.nextFrame()
            #expect(cancel.callID == call.callID)
            #expect(cancel.kind == .cancel(Castd_V1_Cancel()))
            await #expect(throws: CastdError(.cancelled, "/castd.v1.Cast/Play was cancelled")) {
                try await task.value
            }
        }
    }

    @Test(arguments: Transport.allCases) func deadlineFailsTheCallAndCancelsIt(over transport: Transport) async throws {
        try await withClient(transport) { client, daemon in
            let result = Task {
                try await client.unary(
                    .stop, Castd_V1_MediaRequest(), as: CastdMediaStatus.self, timeout: .milliseconds(50)
                )
            }
            let call = try await daemon.nextCall(.stop, as: Castd_V1_MediaRequest.self)
            #expect(call.timeoutMs == 50)
            let error = await #expect(throws: CastdError.self) { try await result.value }
            #expect(error?.code == .deadlineExceeded)
            let cancel = try await daemon.nextFrame()
            #expect(cancel.callID == call.callID)
            #expect(cancel.kind == .cancel(Castd_V1_Cancel()))
        }
    }

    @Test(arguments: Transport.allCases) func lostConnectionFailsOpenAndLaterCallsWithUnavailable(
        over transport: Transport
    ) async throws {
        try await withClient(transport) { client, daemon in
            let result = Task { try await client.status() }
            _ = try await daemon.nextCall(.getStatus, as: Castd_V1_GetStatusRequest.self)
            daemon.toClient.finish()
            await #expect(throws: CastdError(.unavailable, "connection to castd lost")) { try await result.value }
            await #expect(throws: CastdError(.unavailable, "connection to castd lost")) {
                try await client.listDevices()
            }
        }
    }

    @Test(arguments: Transport.allCases) func connectionLevelStatusFailsEveryCall(over transport: Transport)
        async throws
    {
        try await withClient(transport) { client, daemon in
            let status = Task { try await client.status() }
            let devices = Task { try await client.listDevices() }
            _ = try await daemon.nextFrame()
            _ = try await daemon.nextFrame()
            try daemon.status(0, .permissionDenied, "uid 1000 may not control castd")
            daemon.toClient.finish()
            let expected = CastdError(.permissionDenied, "uid 1000 may not control castd")
            await #expect(throws: expected) { try await status.value }
            await #expect(throws: expected) { try await devices.value }
        }
    }

    @Test(arguments: Transport.allCases) func oversizedFrameFromTheDaemonIsResourceExhausted(over transport: Transport)
        async throws
    {
        try await withClient(transport) { client, daemon in
            let result = Task { try await client.status() }
            _ = try await daemon.nextFrame()
            daemon.toClient.finish(throwing: LengthPrefixError.frameTooLarge(length: 5_000_000, limit: 4_194_304))
            let error = await #expect(throws: CastdError.self) { try await result.value }
            #expect(error?.code == .resourceExhausted)
            #expect(error?.message.contains("5000000 bytes") == true)
        }
    }

    @Test(arguments: Transport.allCases) func malformedFrameFromTheDaemonEndsTheConnection(over transport: Transport)
        async throws
    {
        try await withClient(transport) { client, daemon in
            let result = Task { try await client.status() }
            _ = try await daemon.nextFrame()
            daemon.toClient.yield(ByteBuffer(bytes: [0xFF, 0xFF, 0xFF]))
            let error = await #expect(throws: CastdError.self) { try await result.value }
            #expect(error?.code == .internal)
        }
    }

    @Test(arguments: Transport.allCases) func closeFailsOpenCallsAndRefusesNewOnes(over transport: Transport)
        async throws
    {
        try await withClient(transport) { client, daemon in
            let result = Task { try await client.status() }
            _ = try await daemon.nextFrame()
            await client.close()
            let error = await #expect(throws: CastdError.self) { try await result.value }
            #expect(error?.code == .cancelled)
            await #expect(throws: CastdError.self) { try await client.play() }
        }
    }

    @Test(arguments: Transport.allCases) func invalidRequestsFailWithoutReachingTheDaemon(over transport: Transport)
        async throws
    {
        try await withClient(transport, maximumFrameLength: 256) { client, daemon in
            // The client checks with castd's own rules (CastdValidation), in castd's words.
            await #expect(throws: CastdError(.invalidArgument, "set a volume level (0.0–1.0), muted, or steps")) {
                try await client.setVolume()
            }
            await #expect(throws: CastdError(.invalidArgument, "volume level must be between 0.0 and 1.0, not 1.5")) {
                try await client.setVolume(level: 1.5)
            }
            await #expect(
                throws: CastdError(.invalidArgument, "/castd.v1.Cast/Watch is a streaming method; use watch()")
            ) {
                try await client.unary(.watch, Castd_V1_WatchRequest(), as: CastdEvent.self)
            }
            let error = await #expect(throws: CastdError.self) {
                try await client.startSession(device: String(repeating: "x", count: 300))
            }
            #expect(error?.code == .resourceExhausted)
            // Nothing above reached the daemon: the first frame it sees is this call's.
            let devices = Task { try await client.listDevices() }
            let call = try await daemon.nextCall(.listDevices, as: Castd_V1_ListDevicesRequest.self)
            #expect(call.callID == 1)
            try daemon.reply(call.callID, Castd_V1_ListDevicesResponse())
            #expect(try await devices.value.isEmpty)
        }
    }

    @Test func deadlineInMilliseconds() {
        #expect(CastdConnection.milliseconds(.seconds(2)) == 2000)
        #expect(CastdConnection.milliseconds(.milliseconds(1500)) == 1500)
        #expect(CastdConnection.milliseconds(.microseconds(1)) == 1)  // rounded up: 0 would mean none
        #expect(CastdConnection.milliseconds(.microseconds(2500)) == 3)
    }
}
