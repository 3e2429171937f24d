import CastdAPI
import Foundation
import LengthPrefixFraming
import NIOCore
import SwiftProtobuf
import Testing

@testable import CastClient

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

/// Runs `body` with a client whose connection is served over in-memory streams.
func withMemoryClient(
    maximumFrameLength: Int = CastdRPC.defaultMaximumFrameLength,
    _ body: (CastdClient, inout MemoryDaemon) async throws -> Void
) async throws {
    let connection = CastdConnection(maximumFrameLength: maximumFrameLength)
    let client = CastdClient(socketPath: "memory", connection: connection, channel: nil)
    let (inbound, toClient) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
    let (sent, sentContinuation) = AsyncStream<ByteBuffer>.makeStream()
    var daemon = MemoryDaemon(toClient: toClient, fromClient: sent.makeAsyncIterator())
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            await connection.serve(inbound: inbound, write: { sentContinuation.yield($0) })
            sentContinuation.finish()
        }
        do {
            try await body(client, &daemon)
        } catch {
            toClient.finish()
            await client.close()
            throw error
        }
        toClient.finish()
        await client.close()
        try await group.waitForAll()
    }
}

func device(_ id: String, _ name: String) -> CastdDevice {
    var device = CastdDevice()
    device.id = id
    device.friendlyName = name
    return device
}

@Suite(.timeLimit(.minutes(1))) struct ClientConnectionTests {
    @Test func unaryCallRoundTrip() async throws {
        try await withMemoryClient { client, daemon in
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

    @Test func requestsCarryTheirFieldsAndDeadline() async throws {
        try await withMemoryClient { client, daemon in
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

    @Test func daemonStatusBecomesCastdError() async throws {
        try await withMemoryClient { client, daemon in
            let result = Task { try await client.pause(device: "attic") }
            let call = try await daemon.nextCall(.pause, as: Castd_V1_MediaRequest.self)
            #expect(call.request.device == "attic")
            try daemon.status(call.callID, .notFound, "no device matches 'attic' (devices: Kitchen)")
            await #expect(throws: CastdError(.notFound, "no device matches 'attic' (devices: Kitchen)")) {
                try await result.value
            }
        }
    }

    @Test func concurrentCallsAreAnsweredOutOfOrder() async throws {
        try await withMemoryClient { client, daemon in
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

    @Test func leavingAWatchLoopCancelsTheCall() async throws {
        try await withMemoryClient { client, daemon in
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

    @Test func watchDeliversEventsInOrderAndEndsWithTheDaemonsError() async throws {
        try await withMemoryClient { client, daemon in
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

    @Test func cancellingTheTaskCancelsTheCall() async throws {
        try await withMemoryClient { client, daemon in
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

    @Test func deadlineFailsTheCallAndCancelsIt() async throws {
        try await withMemoryClient { client, daemon in
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

    @Test func lostConnectionFailsOpenAndLaterCallsWithUnavailable() async throws {
        try await withMemoryClient { client, daemon in
            let result = Task { try await client.status() }
            _ = try await daemon.nextCall(.getStatus, as: Castd_V1_GetStatusRequest.self)
            daemon.toClient.finish()
            await #expect(throws: CastdError(.unavailable, "connection to castd lost")) { try await result.value }
            await #expect(throws: CastdError(.unavailable, "connection to castd lost")) {
                try await client.listDevices()
            }
        }
    }

    @Test func connectionLevelStatusFailsEveryCall() async throws {
        try await withMemoryClient { client, daemon in
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

    @Test func oversizedFrameFromTheDaemonIsResourceExhausted() async throws {
        try await withMemoryClient { client, daemon in
            let result = Task { try await client.status() }
            _ = try await daemon.nextFrame()
            daemon.toClient.finish(throwing: LengthPrefixError.frameTooLarge(length: 5_000_000, limit: 4_194_304))
            let error = await #expect(throws: CastdError.self) { try await result.value }
            #expect(error?.code == .resourceExhausted)
            #expect(error?.message.contains("5000000 bytes") == true)
        }
    }

    @Test func malformedFrameFromTheDaemonEndsTheConnection() async throws {
        try await withMemoryClient { client, daemon in
            let result = Task { try await client.status() }
            _ = try await daemon.nextFrame()
            daemon.toClient.yield(ByteBuffer(bytes: [0xFF, 0xFF, 0xFF]))
            let error = await #expect(throws: CastdError.self) { try await result.value }
            #expect(error?.code == .internal)
        }
    }

    @Test func closeFailsOpenCallsAndRefusesNewOnes() async throws {
        try await withMemoryClient { client, daemon in
            let result = Task { try await client.status() }
            _ = try await daemon.nextFrame()
            await client.close()
            let error = await #expect(throws: CastdError.self) { try await result.value }
            #expect(error?.code == .cancelled)
            await #expect(throws: CastdError.self) { try await client.play() }
        }
    }

    @Test func invalidRequestsFailWithoutReachingTheDaemon() async throws {
        try await withMemoryClient(maximumFrameLength: 256) { client, daemon in
            await #expect(throws: CastdError(.invalidArgument, "setVolume needs a level, muted, or both")) {
                try await client.setVolume()
            }
            await #expect(throws: CastdError(.invalidArgument, "volume level 1.5 is outside 0…1")) {
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
