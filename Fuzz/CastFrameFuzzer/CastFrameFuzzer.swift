import CastProtocol
import FuzzSupport
import LengthPrefixFraming
import NIOCore

// The CastV2 byte stream as castd reads it from a device: length-prefixed frames (64 KiB limit),
// each a CastMessage that must pass the validity checks (CastMessageDecoder), then what CastLink
// does with every message (JSON payload, envelope, summary for logs).
//
// Properties: a refused header is refused for the reason its length gives; an incomplete frame
// consumes nothing; every accepted message obeys the validity rules, re-encodes within the frame
// limit and decodes back to itself; a JSON payload prints as text that parses back to itself.

func fuzzOne(_ bytes: [UInt8]) {
    var buffer = ByteBuffer(bytes: bytes)
    while true {
        let before = buffer.readerIndex
        let header = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self)
        let frame: ByteBuffer?
        do {
            frame = try LengthPrefixedFrameDecoder.nextFrame(
                from: &buffer, maximumFrameLength: CastWire.maximumFrameLength)
        } catch let error as LengthPrefixError {
            switch error {
            case .emptyFrame: fuzzRequire(header == 0, "emptyFrame for header \(String(describing: header))")
            case .frameTooLarge(let length, _):
                fuzzRequire(length == header && Int(length) > CastWire.maximumFrameLength, "frameTooLarge(\(length))")
            case .truncatedFrame: fuzzRequire(false, "nextFrame threw truncatedFrame")
            }
            return
        } catch {
            fuzzRequire(false, "nextFrame threw \(error)")
            return
        }
        guard let frame else {
            fuzzRequire(buffer.readerIndex == before, "an incomplete frame consumed bytes")
            fuzzRequire(
                header.map { buffer.readableBytes < 4 + Int($0) } ?? (buffer.readableBytes < 4),
                "a complete frame was not returned")
            return
        }
        fuzzRequire(
            frame.readableBytes == Int(header ?? 0) && frame.readableBytes <= CastWire.maximumFrameLength,
            "frame of \(frame.readableBytes) bytes for header \(String(describing: header))")
        check(body: Array(frame.readableBytesView))
    }
}

func check(body: [UInt8]) {
    guard let message = try? CastMessage.decodeFrameBody(body) else { return }
    fuzzRequire(
        !message.sourceID.isEmpty && !message.destinationID.isEmpty && !message.namespace.isEmpty,
        "accepted a message with an empty id or namespace")
    switch message.payloadType {
    case .string:
        fuzzRequire(message.hasPayloadUtf8 && !message.hasPayloadBinary, "STRING message without (only) payload_utf8")
    case .binary:
        fuzzRequire(message.hasPayloadBinary && !message.hasPayloadUtf8, "BINARY message without (only) payload_binary")
    }
    let again: [UInt8]
    do {
        again = try message.frameBody()
    } catch {
        fuzzRequire(false, "an accepted message does not re-encode: \(error)")
        return
    }
    let decodedAgain = try? CastMessage.decodeFrameBody(again)
    fuzzRequire(decodedAgain == message, "decode → encode → decode changed the message")
    _ = message.summary
    if message.payloadType == .string, let payload = try? message.jsonPayload() {
        _ = CastEnvelope(payload)
        let text = payload.jsonString
        let reparsed = try? JSONValue.parse(text)
        fuzzRequire(reparsed == payload, "JSON text \(text.prefix(200)) does not parse back to itself")
    }
}

@main
enum Main {
    static func main() {
        fuzzOrReplay(name: "CastFrameFuzzer", fuzzOne)
    }
}
