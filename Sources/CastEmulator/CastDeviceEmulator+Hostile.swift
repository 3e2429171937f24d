import CastProtocol
import Foundation
import NIOCore

/// Hostile-device faults: what a broken or malicious device writes on its senders' links, so
/// that a sender's parsers, its limits and its isolation of one bad device can be tested over
/// the real TLS links. Each is a one-off action, like ``dropLinks()``:
///
/// - ``sendHostile(_:)`` writes one ``EmulatorHostileFrame`` (a frame over 64 KiB or of length
///   0, garbage, an invalid CastMessage, a binary payload on a JSON namespace, JSON of the wrong
///   types, JSON nested 10,000 deep) on every open link;
/// - ``floodMediaStatus(perSecond:for:)`` broadcasts real MEDIA_STATUS messages (the media
///   session's status, its `currentTime` moving on with each) as fast as asked, by a deadline
///   per message, to every sender connected to the app, and says how many went out.
///
/// Both write below the emulator's encoder: the bytes go straight to TLS (through a
/// ``RawFrameWriter`` in each link's pipeline), whole frames at a time, between the messages the
/// link's writer sends. They are not in the message log (`--log`), and the faults that stay on
/// (a silent device, a reply delay) do not apply to them.
///
/// ```swift
/// try await emulator.sendHostile(.oversizedFrame(length: 0xFFFF_FFFF))   // a sender closes the link
/// try await emulator.sendHostile(.currentTimeObject)                       // a sender ignores the field
/// let flood = try await emulator.floodMediaStatus(perSecond: 10_000, for: .seconds(5))
/// print(flood.sent, flood.achievedPerSecond)
/// ```
extension CastDeviceEmulator {
    /// Writes `frame` on every open link now; returns on how many links it was written.
    /// Throws `invalidArgument` for a value out of range (``EmulatorHostileFrame``'s limits).
    @discardableResult
    public func sendHostile(_ frame: EmulatorHostileFrame) async throws -> Int {
        try frame.validate()
        let now = clock.now()
        let (bytes, channels) = core.withLock { core in
            (Self.hostileBytes(frame, device: core.device, now: now), core.links.values.map(\.channel))
        }
        logger.info("hostile frame (fault injection): \(frame), \(bytes.count) bytes on \(channels.count) link(s)")
        return await withTaskGroup(of: Bool.self) { group in
            for channel in channels {
                group.addTask {
                    do {
                        try await RawFrameWriter.write([channel.allocator.buffer(bytes: bytes)], on: channel)
                        return true
                    } catch {
                        return false  // the link closed meanwhile
                    }
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
    }

    /// Replaces every other item of the queue (the current one kept) with a new one, without a
    /// QUEUE_CHANGE, and broadcasts the media status: a sender that follows the whole queue
    /// asks for its order and finds a difference of many small runs. Returns the queue's ids in
    /// order after the churn. Throws `invalidState` when nothing is loaded.
    @discardableResult
    public func churnQueue() throws -> [Int] {
        let now = clock.now()
        var order: [Int]?
        let outcome = transition { device in
            let outcome = device.churnQueue(now: now)
            order = device.player?.items.map(\.itemID)
            return outcome
        }
        guard let order else { throw EmulatorError(.invalidState, "nothing is loaded: there is no queue to churn") }
        report(outcome, logger: logger)
        return order
    }

    /// Broadcasts `perSecond` MEDIA_STATUS messages a second for `duration` to every link with
    /// a virtual connection to the running app, like a device gone mad: each is the media
    /// session's status (without `media`, as broadcasts are) with `currentTime` moved on by
    /// 1/`perSecond` s. Message *n* is due `n`/`perSecond` after the start; those due are written
    /// in batches, each awaited until TLS has taken it, so a sender that reads slowly slows the
    /// flood down (TCP) rather than the emulator buffering it. What was not sent by the end of
    /// `duration` is not sent. Returns what was sent.
    ///
    /// Throws `invalidArgument` for a rate outside 1…1,000,000 or a duration outside 1 ms…10
    /// min, `invalidState` when nothing is loaded or no sender is connected to the app.
    public func floodMediaStatus(perSecond: Int = 10_000, for duration: Duration = .seconds(1)) async throws
        -> EmulatorFloodReport
    {
        guard (1...1_000_000).contains(perSecond) else {
            throw EmulatorError(.invalidArgument, "perSecond must be 1 to 1000000")
        }
        guard duration >= .milliseconds(1), duration <= .seconds(600) else {
            throw EmulatorError(.invalidArgument, "the duration must be 1 ms to 10 minutes")
        }
        let now = clock.now()
        let (template, channels) = try core.withLock { core in
            guard let running = core.device.running, let player = core.device.player else {
                throw EmulatorError(.invalidState, "nothing is loaded: the flood repeats the media session's status")
            }
            let channels = core.device.connections.filter { $0.value.contains { $0.endpoint == running.transportID } }
                .keys.sorted().compactMap { core.links[$0]?.channel }
            guard !channels.isEmpty else {
                throw EmulatorError(.invalidState, "no sender is connected to \(running.app.displayName)")
            }
            let template = try FloodTemplate(
                transportID: running.transportID, entry: player.statusEntry(at: now, includeMedia: false))
            return (template, channels)
        }
        let total = max(1, Int((Double(perSecond) * duration.seconds).rounded()))
        // At most a hundredth of a second's worth per batch, so that pacing stays fine-grained.
        let batchLimit = max(1, min(1024, perSecond / 100))
        logger.info(
            "flooding \(channels.count) link(s) with \(total) MEDIA_STATUS, \(perSecond)/s for \(duration) (fault injection)"
        )

        let clock = ContinuousClock()
        let start = clock.now
        let end = start + duration
        var open = channels
        var sent = 0
        while sent < total, !open.isEmpty, !Task.isCancelled {
            let now = clock.now
            if now >= end, sent > 0 { break }  // the first is due at the start: it always goes
            let due = min(total, Int(((now - start).seconds * Double(perSecond)).rounded(.down)) + 1)
            if due <= sent {
                // Ahead of schedule: wait for the next one's deadline.
                let next = start + .seconds(Double(sent) / Double(perSecond))
                do {
                    try await Task.sleep(until: min(next, end), clock: clock)
                } catch {
                    break
                }
                continue
            }
            let count = min(due - sent, batchLimit)
            let first = sent
            let written = await withTaskGroup(of: (Int, Bool).self) { group in
                for (index, channel) in open.enumerated() {
                    group.addTask {
                        let frames = (first..<(first + count)).map {
                            template.frame(
                                currentTimeOffset: Double($0) / Double(perSecond), allocator: channel.allocator)
                        }
                        do {
                            try await RawFrameWriter.write(frames, on: channel)
                            return (index, true)
                        } catch {
                            return (index, false)
                        }
                    }
                }
                var results: [(Int, Bool)] = []
                for await result in group { results.append(result) }
                return results
            }
            let failed = Set(written.filter { !$0.1 }.map(\.0))
            open = open.enumerated().filter { !failed.contains($0.offset) }.map(\.element)
            if !open.isEmpty { sent += count }
        }
        let report = EmulatorFloodReport(
            perSecond: perSecond, requested: total, sent: sent, links: channels.count, linksOpen: open.count,
            elapsed: clock.now - start)
        logger.info("flood done (fault injection): \(report)")
        return report
    }

    /// The bytes of `frame` (length prefix included), from what the device runs now.
    static func hostileBytes(_ frame: EmulatorHostileFrame, device: EmulatedDevice, now: Duration) -> [UInt8] {
        let receiverID = EmulatedDevice.receiverID
        let mediaSource = device.running?.transportID ?? receiverID
        let receiverStatus = device.receiverStatusPayload(requestID: 0)
        var entry =
            device.player?.statusEntry(at: now, includeMedia: false).objectValue
            ?? ["mediaSessionId": 1, "playerState": "IDLE", "currentTime": 0]

        func framed(_ body: [UInt8]) -> [UInt8] { lengthPrefix(UInt32(body.count)) + body }
        func framed(_ message: CastMessage) -> [UInt8] { framed((try? message.serializedBytes(partial: true)) ?? []) }
        func status(_ payload: JSONValue, namespace: String = CastNamespace.receiver) -> CastMessage {
            let source = namespace == CastNamespace.media ? mediaSource : receiverID
            return .json(source: source, destination: CastWire.broadcastID, namespace: namespace, payload: payload)
        }
        func mediaStatus(_ entry: [String: JSONValue]) -> CastMessage {
            status(EmulatedDevice.mediaStatus([.object(entry)], requestID: 0), namespace: CastNamespace.media)
        }
        func withReceiverStatus(_ change: (inout [String: JSONValue]) -> Void) -> CastMessage {
            var payload = receiverStatus.objectValue ?? [:]
            var object = payload["status"]?.objectValue ?? [:]
            change(&object)
            payload["status"] = .object(object)
            return status(.object(payload))
        }
        func text(_ text: String, namespace: String) -> CastMessage {
            let source = namespace == CastNamespace.media ? mediaSource : receiverID
            return .string(source: source, destination: CastWire.broadcastID, namespace: namespace, text: text)
        }

        switch frame {
        case .oversizedFrame(let length, let trailing):
            return lengthPrefix(length) + [UInt8](repeating: 0xAB, count: trailing)
        case .zeroLengthFrame:
            return lengthPrefix(0)
        case .garbageFrame(let length):
            // 0xFF…: a tag whose varint never ends, which no protobuf decoder accepts.
            return framed([UInt8](repeating: 0xFF, count: length))
        case .truncatedMessage:
            let message = status(receiverStatus)
            let bytes = (try? message.serializedBytes(partial: true)) ?? []
            // The payload is the last field: cut in the middle of it.
            let cut = bytes.count - max(1, message.payloadUtf8.utf8.count / 2)
            return framed(Array(bytes.prefix(cut)))
        case .emptySourceID:
            var message = status(receiverStatus)
            message.sourceID = ""
            return framed(message)
        case .emptyDestinationID:
            var message = status(receiverStatus)
            message.destinationID = ""
            return framed(message)
        case .emptyNamespace:
            var message = status(receiverStatus)
            message.namespace = ""
            return framed(message)
        case .stringTypeWithBinaryPayload:
            var message = status(receiverStatus)
            message.payloadBinary = Data(message.payloadUtf8.utf8)
            message.clearPayloadUtf8()
            return framed(message)
        case .binaryTypeWithUTF8Payload:
            var message = status(receiverStatus)
            message.payloadType = .binary
            return framed(message)
        case .binaryPayload(let namespace):
            let payload =
                namespace == CastNamespace.media
                ? EmulatedDevice.mediaStatus([.object(entry)], requestID: 0) : receiverStatus
            var message = status(payload, namespace: namespace)
            message.payloadType = .binary
            message.payloadBinary = Data(message.payloadUtf8.utf8)
            message.clearPayloadUtf8()
            return framed(message)
        case .mediaStatusString:
            return framed(
                status(["type": "MEDIA_STATUS", "requestId": 0, "status": "PLAYING"], namespace: CastNamespace.media))
        case .mediaSessionIDLetters:
            entry["mediaSessionId"] = "abc"
            return framed(mediaStatus(entry))
        case .currentTimeObject:
            entry["currentTime"] = ["seconds": 12, "nanos": 5]
            return framed(mediaStatus(entry))
        case .volumeLevelString:
            entry["volume"] = ["level": "loud", "muted": false]
            return framed(mediaStatus(entry))
        case .receiverVolumeLevelString:
            return framed(withReceiverStatus { $0["volume"] = ["level": "loud", "muted": false] })
        case .applicationsNotArray:
            return framed(
                withReceiverStatus { status in
                    status["applications"] = status["applications"]?.arrayValue?.first ?? "none"
                })
        case .outOfRangeNumbers:
            let huge: JSONValue = .number(1_099_511_627_776)  // 2^40
            let metadata: JSONValue = [
                "metadataType": huge, "title": "Out of range", "trackNumber": huge, "season": -1,
                "images": [["url": "https://example.com/a.png", "width": huge, "height": -1]],
            ]
            var media =
                device.player?.statusEntry(at: now, includeMedia: true).objectValue?["media"]?.objectValue ?? [:]
            media["metadata"] = metadata
            media["tracks"] = [["trackId": 1e20, "type": "TEXT", "trackContentId": "https://example.com/t.vtt"]]
            entry["media"] = .object(media)
            entry["supportedMediaCommands"] = .number(1_152_921_504_606_846_976)  // 2^60
            entry["activeTrackIds"] = [1e20, -1e20]
            entry["items"] = [
                ["itemId": 1e20, "media": ["contentId": "x", "metadata": ["metadataType": -1_099_511_627_776]]]
            ]
            entry["videoInfo"] = ["width": huge, "height": -1, "hdrType": huge]
            return framed(mediaStatus(entry))
        case .notJSON(let namespace):
            return framed(text(#"{"type": "RECEIVER_STATUS", this is not JSON"#, namespace: namespace))
        case .deeplyNested(let depth, let namespace):
            let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            return framed(text(#"{"requestId":0,"status":\#(nested),"type":"MEDIA_STATUS"}"#, namespace: namespace))
        }
    }

    static func lengthPrefix(_ length: UInt32) -> [UInt8] {
        withUnsafeBytes(of: length.bigEndian) { Array($0) }
    }
}

/// What ``CastDeviceEmulator/floodMediaStatus(perSecond:for:)`` did.
public struct EmulatorFloodReport: Sendable, Hashable, CustomStringConvertible {
    /// The rate asked for.
    public var perSecond: Int
    /// How many statuses were asked for: `perSecond` × the duration.
    public var requested: Int
    /// How many statuses were written, each on every link still open.
    public var sent: Int
    /// The links flooded (those with a virtual connection to the app).
    public var links: Int
    /// Of those, how many were still open at the end.
    public var linksOpen: Int
    /// From the first write to the last one's completion.
    public var elapsed: Duration

    /// Statuses per second actually written.
    public var achievedPerSecond: Double {
        elapsed > .zero ? Double(sent) / elapsed.seconds : 0
    }

    public var description: String {
        "\(sent) of \(requested) MEDIA_STATUS sent on \(links) link(s) (\(linksOpen) still open) in \(elapsed), "
            + "\(Int(achievedPerSecond.rounded()))/s of \(perSecond)/s asked"
    }

    /// The answer of `POST /emulator/faults/flood`.
    var json: JSONValue {
        [
            "perSecond": .number(Double(perSecond)), "requested": .number(Double(requested)),
            "sent": .number(Double(sent)), "links": .number(Double(links)), "linksOpen": .number(Double(linksOpen)),
            "elapsedMs": .number((elapsed.seconds * 1000).rounded()),
            "achievedPerSecond": .number(achievedPerSecond.rounded()),
        ]
    }
}

/// One flood status as bytes, with only `currentTime` changing: the CastMessage's fixed fields
/// are encoded once, and each message appends its payload (field 6, `payload_utf8`, the last).
private struct FloodTemplate: Sendable {
    /// Fields 1 to 5 of the CastMessage.
    let head: [UInt8]
    /// The payload's text before and after the `currentTime` value.
    let before: String
    let after: String
    let baseTime: Double

    init(transportID: String, entry: JSONValue) throws {
        var message = CastMessage.string(
            source: transportID, destination: CastWire.broadcastID, namespace: CastNamespace.media, text: "")
        message.clearPayloadUtf8()
        head = try message.serializedBytes()
        var fields = entry.objectValue ?? [:]
        baseTime = fields.removeValue(forKey: "currentTime")?.doubleValue ?? 0
        let rest = JSONValue.object(fields).jsonString.dropFirst()  // `"key":…}` or `}`
        before = #"{"requestId":0,"status":[{"currentTime":"#
        after = (rest == "}" ? "" : ",") + rest + #"],"type":"MEDIA_STATUS"}"#
        guard head.count + before.utf8.count + after.utf8.count + 40 <= CastWire.maximumFrameLength else {
            throw EmulatorError(.invalidState, "the media session's status does not fit in a frame")
        }
    }

    func frame(currentTimeOffset offset: Double, allocator: ByteBufferAllocator) -> ByteBuffer {
        // Microseconds: at up to a million a second, every status differs from the one before.
        let time = ((baseTime + offset) * 1_000_000).rounded() / 1_000_000
        let text = before + JSONValue.number(time).jsonString + after
        let length = text.utf8.count
        var varint: [UInt8] = []
        var rest = UInt32(length)
        repeat {
            let low = UInt8(rest & 0x7F)
            rest >>= 7
            varint.append(rest == 0 ? low : low | 0x80)
        } while rest != 0
        let body = head.count + 1 + varint.count + length
        var buffer = allocator.buffer(capacity: 4 + body)
        buffer.writeInteger(UInt32(body))
        buffer.writeBytes(head)
        buffer.writeInteger(UInt8(0x32))  // field 6, length-delimited
        buffer.writeBytes(varint)
        buffer.writeString(text)
        return buffer
    }
}

/// Sits right above TLS in every link's pipeline: the hostile faults write through it, so
/// their bytes reach TLS as they are, past the CastMessage codec and the framing encoder.
/// Writes from elsewhere pass through untouched.
final class RawFrameWriter: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Writes `buffers` in order, flushes, and returns once TLS has taken the last one. Each
    /// buffer is written whole, so it never splits a message the link's writer sends.
    static func write(_ buffers: [ByteBuffer], on channel: any Channel) async throws {
        guard !buffers.isEmpty else { return }
        try await channel.eventLoop.flatSubmit { () -> EventLoopFuture<Void> in
            do {
                let context = try channel.pipeline.syncOperations.context(handlerType: RawFrameWriter.self)
                let done = channel.eventLoop.makePromise(of: Void.self)
                for (index, buffer) in buffers.enumerated() {
                    context.write(NIOAny(buffer), promise: index == buffers.count - 1 ? done : nil)
                }
                context.flush()
                return done.futureResult
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }.get()
    }
}
