import CastDevices
import CastProtocol
import CastdAPI
import CastdServer
import FuzzSupport
import LengthPrefixFraming
import NIOCore
import SwiftProtobuf

// What castd reads from a client on its socket, up to the point where a request would reach a
// device: castd.v1 frames (length-prefixed, 4 MiB limit; CastdRPC.decodeFrame), the method path,
// and each method's request message with the steps castd takes before anything is sent (the
// router's: decoding as the method's request type, `CastdValidation.check`; then the mapping to
// the device's request, MediaRequest). The first byte picks the mode: below 0x80, the rest is
// one request for method number byte % methods.count (CastdMethod.allCases); otherwise the rest
// is a stream of frames.
//
// Properties: a refused frame header is refused for the reason its length gives; a request castd
// accepts yields JSON that prints and parses back to itself, and a LOAD, QUEUE_LOAD or custom
// message castd accepts fits in one CastV2 frame with its envelope (else the device link would
// refuse it after castd said the request was fine).

let methods = CastdMethod.allCases

func fuzzOne(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    if first < 0x80 {
        check(methods[Int(first) % methods.count], request: Array(bytes.dropFirst()))
        return
    }
    var buffer = ByteBuffer(bytes: bytes.dropFirst())
    while true {
        let header = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self)
        let body: ByteBuffer?
        do {
            body = try LengthPrefixedFrameDecoder.nextFrame(
                from: &buffer, maximumFrameLength: CastdRPC.defaultMaximumFrameLength)
        } catch let error as LengthPrefixError {
            switch error {
            case .emptyFrame: fuzzRequire(header == 0, "emptyFrame for header \(String(describing: header))")
            case .frameTooLarge(let length, _):
                fuzzRequire(Int(length) > CastdRPC.defaultMaximumFrameLength, "frameTooLarge(\(length))")
            case .truncatedFrame: fuzzRequire(false, "nextFrame threw truncatedFrame")
            }
            return
        } catch {
            fuzzRequire(false, "nextFrame threw \(error)")
            return
        }
        guard let body else { return }
        guard let frame = try? CastdRPC.decodeFrame(body) else { continue }
        guard case .start(let start)? = frame.kind, frame.callID != 0, let method = CastdMethod(path: start.method)
        else {
            continue
        }
        fuzzRequire(method.path == start.method, "method \(method) from path \(start.method)")
        check(method, request: Array(start.request))
    }
}

/// What castd does with a request before it reaches a device: decode it as the method's request
/// type and check it against the method's rules (`CastdValidation.check`, as the router does for
/// every call); then what an accepted request must be, where castd makes a device's message of it
/// (it fits a frame; its JSON reads back to itself).
func check(_ method: CastdMethod, request bytes: [UInt8]) {
    let request: any SwiftProtobuf.Message
    do {
        request = try method.requestType.init(serializedBytes: bytes)
    } catch {
        return  // refused as malformed, before any rule
    }
    do {
        try CastdValidation.check(request, for: method)
        try checkAccepted(request, for: method)
    } catch let error as CastdError {
        // INVALID_ARGUMENT, or OUT_OF_RANGE for a position outside the media the request
        // describes (a load's start past its own duration: issue 36's one rule for positions).
        fuzzRequire(
            (error.code == .invalidArgument || error.code == .outOfRange) && !error.message.isEmpty,
            "refused with \(error)")
    } catch {
        fuzzRequire(false, "refused with a non-castd error \(error)")
    }
}

/// What castd makes of an accepted request, by its type.
func checkAccepted(_ request: any SwiftProtobuf.Message, for method: CastdMethod) throws {
    switch request {
    case let r as Castd_V1_LoadRequest:
        fits(try MediaRequest(load: r), "LOAD")
    case let r as Castd_V1_SeekRequest:
        fits(MediaRequest(seek: r), "SEEK")
    case let r as Castd_V1_SetPlaybackRateRequest:
        fuzzRequire(r.rate.isFinite, "accepted rate \(r.rate)")
    case let r as Castd_V1_EditTracksRequest:
        fits(try MediaRequest(editTracks: r), "EDIT_TRACKS_INFO")
    case let r as Castd_V1_SetVolumeRequest:
        fuzzRequire(!r.hasLevel || (0...1).contains(r.level), "accepted volume level \(r.level)")
    case let r as Castd_V1_QueueLoadRequest:
        let queueLoad = try MediaRequest(queueLoad: r)
        if case .queueLoad(let load) = queueLoad {
            fuzzRequire(
                load.startIndex >= 0 && load.startIndex < load.items.count, "accepted startIndex \(r.startIndex)")
        }
        fits(queueLoad, "QUEUE_LOAD")
    case let r as Castd_V1_QueueInsertRequest:
        fits(try MediaRequest(queueInsert: r), "QUEUE_INSERT")
    case let r as Castd_V1_QueueUpdateRequest:
        let update = try MediaRequest(queueUpdate: r)
        if case .queueUpdate(let fields) = update {
            fuzzRequire(
                fields.itemIDs == r.items.map(\.itemID), "items \(fields.itemIDs), sent \(r.items.map(\.itemID))")
        }
        fits(update, "QUEUE_UPDATE")
    case let r as Castd_V1_SendMessageRequest:
        let text = try r.castText()
        let message = CastMessage.string(
            source: "sender-0123456789", destination: "web-0123456789abcdef0123456789abcdef",
            namespace: r.namespace,
            text: text)
        fuzzRequire(
            (try? message.frameBody()) != nil,
            "an accepted message of \(text.utf8.count) bytes does not fit a frame")
    default:
        return  // no device message is made of it, or one without a body of its own
    }
}

/// A request castd accepted fits in one CastV2 frame from castd to the app.
func fits(_ request: MediaRequest, _ what: String) {
    let payload = request.payload(requestID: Int64(Int32.max), mediaSessionID: Int64(Int32.max))
    roundTrip(payload)
    let message = CastMessage.json(
        source: "sender-0123456789", destination: "web-0123456789abcdef0123456789abcdef",
        namespace: CastNamespace.media, payload: payload)
    fuzzRequire((try? message.frameBody()) != nil, "an accepted \(what) does not fit in a CastV2 frame")
}

func roundTrip(_ json: JSONValue) {
    fuzzRequire((try? JSONValue.parse(json.jsonString)) == json, "JSON does not parse back to itself")
}

@main
enum Main {
    static func main() {
        fuzzOrReplay(name: "CastdRequestFuzzer", fuzzOne)
    }
}
