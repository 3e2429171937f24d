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
// and each method's request message with the checks castd applies before anything is sent
// (each handler of CastdService's areas: the decoding, CastdValidation, and the mapping to the
// device's request, MediaRequest). The first byte picks the mode: below 0x80,
// the rest is one request for method number byte % methods.count (CastdMethod.allCases); otherwise the rest is a stream of frames.
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

/// The checks each handler applies before it reaches a device, method by method, and what
/// each accepted request must then be (it fits a frame; its JSON reads back to itself).
func check(_ method: CastdMethod, request: [UInt8]) {
    do {
        switch method {
        case .listDevices:
            let r = try CastdService.decodeRequest(Castd_V1_ListDevicesRequest.self, request)
            try CastdValidation.appIDs(r.appIds)
        case .getStatus:
            _ = try CastdService.decodeRequest(Castd_V1_GetStatusRequest.self, request)
        case .getAppAvailability:
            let r = try CastdService.decodeRequest(Castd_V1_AppAvailabilityRequest.self, request)
            try CastdValidation.appIDs(r.appIds)
        case .startSession:
            let r = try CastdService.decodeRequest(Castd_V1_StartSessionRequest.self, request)
            try CastdValidation.startSession(r)
        case .endSession:
            _ = try CastdService.decodeRequest(Castd_V1_EndSessionRequest.self, request)
        case .load:
            let r = try CastdService.decodeRequest(Castd_V1_LoadRequest.self, request)
            try CastdValidation.load(r)
            fits(try MediaRequest(load: r), "LOAD")
        case .play, .pause, .stop, .skipAd, .requestMediaStatus:
            _ = try CastdService.decodeRequest(Castd_V1_MediaRequest.self, request)
        case .seek:
            let r = try CastdService.decodeRequest(Castd_V1_SeekRequest.self, request)
            try CastdValidation.seek(r)
            fits(MediaRequest(seek: r), "SEEK")
        case .setPlaybackRate:
            let r = try CastdService.decodeRequest(Castd_V1_SetPlaybackRateRequest.self, request)
            try CastdValidation.rate(r.rate)
            fuzzRequire(r.rate.isFinite, "accepted rate \(r.rate)")
        case .editTracks:
            let r = try CastdService.decodeRequest(Castd_V1_EditTracksRequest.self, request)
            try CastdValidation.editTracks(r)
            fits(try MediaRequest(editTracks: r), "EDIT_TRACKS_INFO")
        case .setStreamVolume, .setVolume:
            let r = try CastdService.decodeRequest(Castd_V1_SetVolumeRequest.self, request)
            try CastdValidation.volume(r, allowSteps: method == .setVolume)
            fuzzRequire(!r.hasLevel || (0...1).contains(r.level), "accepted volume level \(r.level)")
        case .queueLoad:
            let r = try CastdService.decodeRequest(Castd_V1_QueueLoadRequest.self, request)
            try CastdValidation.queueLoad(r)
            let queueLoad = try MediaRequest(queueLoad: r)
            if case .queueLoad(let load) = queueLoad {
                fuzzRequire(
                    load.startIndex >= 0 && load.startIndex < load.items.count, "accepted startIndex \(r.startIndex)")
            }
            fits(queueLoad, "QUEUE_LOAD")
        case .queueInsert:
            let r = try CastdService.decodeRequest(Castd_V1_QueueInsertRequest.self, request)
            try CastdValidation.newItems(r.items)
            fits(try MediaRequest(queueInsert: r), "QUEUE_INSERT")
        case .queueRemove:
            let r = try CastdService.decodeRequest(Castd_V1_QueueRemoveRequest.self, request)
            try CastdValidation.queueRemove(r)
        case .queueReorder:
            let r = try CastdService.decodeRequest(Castd_V1_QueueReorderRequest.self, request)
            try CastdValidation.queueReorder(r)
        case .queueUpdate:
            let r = try CastdService.decodeRequest(Castd_V1_QueueUpdateRequest.self, request)
            try CastdValidation.queueUpdate(r)
            let update = try MediaRequest(queueUpdate: r)
            if case .queueUpdate(let fields) = update {
                fuzzRequire(
                    fields.itemIDs == r.items.map(\.itemID), "items \(fields.itemIDs), sent \(r.items.map(\.itemID))")
            }
            fits(update, "QUEUE_UPDATE")
        case .sendMessage:
            let r = try CastdService.decodeRequest(Castd_V1_SendMessageRequest.self, request)
            try CastdValidation.sendMessage(r)
            let text = try r.castText()
            let message = CastMessage.string(
                source: "sender-0123456789", destination: "web-0123456789abcdef0123456789abcdef",
                namespace: r.namespace,
                text: text)
            fuzzRequire(
                (try? message.frameBody()) != nil,
                "an accepted message of \(text.utf8.count) bytes does not fit a frame")
        case .listen:
            let r = try CastdService.decodeRequest(Castd_V1_ListenRequest.self, request)
            try CastdValidation.namespace(r.namespace)
        case .watch:
            _ = try CastdService.decodeRequest(Castd_V1_WatchRequest.self, request)
        case .getLogFilter:
            _ = try CastdService.decodeRequest(Castd_V1_GetLogFilterRequest.self, request)
        case .setLogFilter:
            _ = try CastdService.decodeRequest(Castd_V1_SetLogFilterRequest.self, request)
        case .streamLogs:
            _ = try CastdService.decodeRequest(Castd_V1_StreamLogsRequest.self, request)
        case .forgetDevice:
            _ = try CastdService.decodeRequest(Castd_V1_ForgetDeviceRequest.self, request)
        case .getDevice:
            _ = try CastdService.decodeRequest(Castd_V1_GetDeviceRequest.self, request)
        }
    } catch let error as CastdError {
        fuzzRequire(error.code == .invalidArgument && !error.message.isEmpty, "refused with \(error)")
    } catch {
        fuzzRequire(false, "refused with a non-castd error \(error)")
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
