import CastdSupport
import CastProtocol
import Foundation
import NIOCore

/// The `--log` file: one JSON object per CastV2 message received or sent, written (and so
/// flushed) line by line.
///
/// ```json
/// {"connection":1,"destination":"receiver-0","direction":"in","namespace":"urn:x-cast:com.google.cast.receiver",
///  "payload":{"requestId":1,"type":"GET_STATUS"},"source":"sender-0","time":"2025-01-01T12:00:00.000Z"}
/// ```
/// `payload` is the parsed JSON, or `{"binary": base64}` for binary payloads, or the raw text
/// with `"payloadError"` when the text is not JSON.
///
/// A device that fetches its media (``EmulatorConfiguration/fetchMedia``) adds a line per request,
/// and per URL it leaves alone (``EmulatorFetchRecord``):
///
/// ```json
/// {"fetch":{"bytes":65536,"mediaSessionId":1,"purpose":"load","range":"bytes=0-65535","size":1048576,
///  "status":206,"url":"http://127.0.0.1:8000/a.mp4"},"time":"2025-01-01T12:00:00.000Z"}
/// {"fetch":{"bytes":0,"error":"cannot connect: …","mediaSessionId":2,"purpose":"load",…},"time":…}
/// {"fetch":{"mediaSessionId":3,"notFetched":"https:// is not fetched …","purpose":"load","url":…},"time":…}
/// ```
final class EmulatorMessageLog: Sendable {
    enum Direction: String, Sendable {
        case incoming = "in"
        case outgoing = "out"
    }

    private let handle: Locked<FileHandle?>

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw EmulatorError(.logFileUnavailable, "cannot create the message log \(path)")
        }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw EmulatorError(.logFileUnavailable, "cannot open the message log \(path)")
        }
        self.handle = Locked(handle)
    }

    static func line(_ direction: Direction, connection: Int, message: CastMessage, time: Date = Date()) -> String {
        var entry: [String: JSONValue] = [
            "time": .string(time.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))),
            "direction": .string(direction.rawValue),
            "connection": .number(Double(connection)),
            "source": .string(message.sourceID),
            "destination": .string(message.destinationID),
            "namespace": .string(message.namespace),
        ]
        if message.payloadType == .binary {
            entry["payload"] = ["binary": .string(message.payloadBinary.base64EncodedString())]
        } else {
            do {
                entry["payload"] = try JSONValue.parse(message.payloadUtf8)
            } catch {
                entry["payload"] = .string(message.payloadUtf8)
                entry["payloadError"] = .string("\(error)")
            }
        }
        return JSONValue.object(entry).jsonString + "\n"
    }

    func record(_ direction: Direction, connection: Int, message: CastMessage) {
        write(Data(Self.line(direction, connection: connection, message: message).utf8))
    }

    private func write(_ data: Data) {
        handle.withLock { handle in
            // A full disk must not take the device down; the log just stops.
            do {
                try handle?.write(contentsOf: data)
            } catch {
                handle = nil
            }
        }
    }

    static func line(fetch: EmulatorFetchRecord, time: Date = Date()) -> String {
        let entry: JSONValue = [
            "time": .string(time.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))),
            "fetch": fetch.json,
        ]
        return entry.jsonString + "\n"
    }

    func record(fetch: EmulatorFetchRecord) {
        write(Data(Self.line(fetch: fetch).utf8))
    }

    func close() {
        handle.withLock { handle in
            try? handle?.close()
            handle = nil
        }
    }
}

/// Records every CastMessage that passes, in both directions, in the message log.
final class CastMessageLogHandler: ChannelDuplexHandler {
    typealias InboundIn = CastMessage
    typealias InboundOut = CastMessage
    typealias OutboundIn = CastMessage
    typealias OutboundOut = CastMessage

    private let connection: Int
    private let log: EmulatorMessageLog

    init(connection: Int, log: EmulatorMessageLog) {
        self.connection = connection
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        log.record(.incoming, connection: connection, message: unwrapInboundIn(data))
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        log.record(.outgoing, connection: connection, message: unwrapOutboundIn(data))
        context.write(data, promise: promise)
    }
}

/// Hands every CastMessage that passes, in both directions, to ``EmulatorConfiguration/messageTap``.
final class CastMessageTapHandler: ChannelDuplexHandler {
    typealias InboundIn = CastMessage
    typealias InboundOut = CastMessage
    typealias OutboundIn = CastMessage
    typealias OutboundOut = CastMessage

    private let connection: Int
    private let tap: EmulatorMessageTap

    init(connection: Int, tap: @escaping EmulatorMessageTap) {
        self.connection = connection
        self.tap = tap
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        tap(.received, connection, unwrapInboundIn(data))
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        tap(.sent, connection, unwrapOutboundIn(data))
        context.write(data, promise: promise)
    }
}
