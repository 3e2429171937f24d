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
// (CastdService.handle: decodeRequest and Validate). The first byte picks the mode: below 0x80,
// the rest is one request for method number byte % 28 (CastdMethod.allCases); otherwise the rest is a stream of frames.
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

/// The checks of CastdService.handle, method by method, without a device.
func check(_ method: CastdMethod, request: [UInt8]) {
    do {
        switch method {
        case .listDevices:
            let r = try CastdService.decodeRequest(Castd_V1_ListDevicesRequest.self, request)
            for appID in r.appIds { try Validate.appID(appID) }
        case .getStatus:
            _ = try CastdService.decodeRequest(Castd_V1_GetStatusRequest.self, request)
        case .getAppAvailability:
            let r = try CastdService.decodeRequest(Castd_V1_AppAvailabilityRequest.self, request)
            for appID in r.appIds { try Validate.appID(appID) }
        case .startSession:
            let r = try CastdService.decodeRequest(Castd_V1_StartSessionRequest.self, request)
            if !r.appID.isEmpty { try Validate.appID(r.appID) }
            try Validate.launchOptions(r.launch)
        case .endSession:
            _ = try CastdService.decodeRequest(Castd_V1_EndSessionRequest.self, request)
        case .load:
            let r = try CastdService.decodeRequest(Castd_V1_LoadRequest.self, request)
            var fields = try Validate.load(r)
            fields["type"] = "LOAD"
            fields["requestId"] = .number(Double(Int32.max))
            fits(.object(fields), "LOAD")
        case .play, .pause, .stop, .skipAd, .requestMediaStatus:
            _ = try CastdService.decodeRequest(Castd_V1_MediaRequest.self, request)
        case .seek:
            _ = try CastdService.decodeRequest(Castd_V1_SeekRequest.self, request)
        case .setPlaybackRate:
            let r = try CastdService.decodeRequest(Castd_V1_SetPlaybackRateRequest.self, request)
            try Validate.rate(r.rate)
            fuzzRequire(r.rate.isFinite, "accepted rate \(r.rate)")
        case .editTracks:
            let r = try CastdService.decodeRequest(Castd_V1_EditTracksRequest.self, request)
            if r.hasActiveTracks { try Validate.ids(r.activeTracks.trackIds, what: "track") }
            if r.hasTextTrackStyle { roundTrip(try Validate.style(r.textTrackStyle)) }
        case .setStreamVolume, .setVolume:
            let r = try CastdService.decodeRequest(Castd_V1_SetVolumeRequest.self, request)
            try Validate.volume(r, allowSteps: method == .setVolume)
            fuzzRequire(!r.hasLevel || (0...1).contains(r.level), "accepted volume level \(r.level)")
        case .queueLoad:
            let r = try CastdService.decodeRequest(Castd_V1_QueueLoadRequest.self, request)
            var fields = try Validate.queueLoad(r)
            fuzzRequire(fields["startIndex"]?.intValue.map { $0 >= 0 } ?? false, "accepted startIndex \(r.startIndex)")
            fields["type"] = "QUEUE_LOAD"
            fields["requestId"] = .number(Double(Int32.max))
            fits(.object(fields), "QUEUE_LOAD")
        case .queueInsert:
            let r = try CastdService.decodeRequest(Castd_V1_QueueInsertRequest.self, request)
            roundTrip(.array(try Validate.newItems(r.items)))
        case .queueRemove:
            let r = try CastdService.decodeRequest(Castd_V1_QueueRemoveRequest.self, request)
            try Validate.ids(r.itemIds, what: "item")
        case .queueReorder:
            let r = try CastdService.decodeRequest(Castd_V1_QueueReorderRequest.self, request)
            try Validate.ids(r.itemIds + (r.insertBeforeItemID != 0 ? [r.insertBeforeItemID] : []), what: "item")
        case .queueUpdate:
            let r = try CastdService.decodeRequest(Castd_V1_QueueUpdateRequest.self, request)
            let (items, ids) = try Validate.queueUpdate(r)
            fuzzRequire(items.count == ids.count, "\(items.count) items, \(ids.count) ids")
            roundTrip(.array(items))
        case .sendMessage:
            let r = try CastdService.decodeRequest(Castd_V1_SendMessageRequest.self, request)
            try Validate.namespace(r.namespace)
            let text = try Validate.messagePayload(r)
            let message = CastMessage.string(
                source: "sender-0123456789", destination: "web-0123456789abcdef0123456789abcdef",
                namespace: r.namespace,
                text: text)
            fuzzRequire(
                (try? message.frameBody()) != nil,
                "an accepted message of \(text.utf8.count) bytes does not fit a frame")
        case .listen:
            let r = try CastdService.decodeRequest(Castd_V1_ListenRequest.self, request)
            try Validate.namespace(r.namespace)
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
        }
    } catch let error as CastdError {
        fuzzRequire(error.code == .invalidArgument && !error.message.isEmpty, "refused with \(error)")
    } catch {
        fuzzRequire(false, "refused with a non-castd error \(error)")
    }
}

/// A request castd accepted fits in one CastV2 frame from castd to the app.
func fits(_ payload: JSONValue, _ what: String) {
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
