import CastDevices
import CastProtocol
import CastdAPI
import Foundation
import FuzzSupport
import SwiftProtobuf

// The JSON payloads devices send on the receiver, media and multizone namespaces (and their
// eureka_info, over HTTP), read the way castd reads them (DeviceController, DeviceRegistry):
// the JSON parser, the envelope, eureka_info, RECEIVER_STATUS,
// MEDIA_STATUS, device errors and MULTIZONE_STATUS / DEVICE_* members, then the mapping to the
// castd.v1 messages clients get. Every input goes through every reader: castd picks the reader
// by namespace and `type`, both of which a device controls.
//
// Properties: JSON prints as text that parses back to itself; reading the printed form of what
// was read is stable (read → print → read → print → read gives the same value twice); what
// clients get has only finite numbers and enums within int32, and survives protobuf and proto3
// JSON encoding.

let receivedAt = Date(timeIntervalSince1970: 1_900_000_000)

func fuzzOne(_ bytes: [UInt8]) {
    guard let payload = try? JSONValue.parse(Data(bytes)) else { return }
    let text = payload.jsonString
    fuzzRequire((try? JSONValue.parse(text)) == payload, "JSON text \(text.prefix(200)) does not parse back to itself")
    _ = CastEnvelope(payload)
    _ = CastDeviceError(payload: payload)

    // eureka_info (what a device given by address says of itself over HTTP): text fields are
    // bounded, an id is mDNS's form or absent
    if let info = CastDeviceInfo(json: payload) {
        for field in [info.name, info.model, info.manufacturer, info.build] {
            fuzzRequire(
                field.map { !$0.isEmpty && $0.utf8.count <= CastDeviceInfo.maximumFieldLength } ?? true,
                "an eureka_info field empty or over the bound: \(String(describing: field).prefix(300))")
        }
        fuzzRequire(
            info.id.map { $0.utf8.count == 32 && CastDeviceInfo.deviceID(fromUDN: $0) == $0 } ?? true,
            "an eureka_info id not in mDNS's form: \(String(describing: info.id))")
    }

    // RECEIVER_STATUS
    let receiver = CastReceiverStatus(payload: payload)
    let receiver2 = CastReceiverStatus(payload: receiver.json)
    fuzzRequire(CastReceiverStatus(payload: receiver2.json) == receiver2, "RECEIVER_STATUS reading is not stable")
    let published = Castd_V1_ReceiverStatus(receiver)
    if published.hasVolume {
        fuzzRequire(
            published.volume.level.isFinite && published.volume.stepInterval.isFinite,
            "non-finite volume \(published.volume)")
    }
    roundTrip(published)

    // MEDIA_STATUS, as CastMediaStatus and as castd publishes it
    let entries = CastMediaStatus.entries(in: payload)
    let entries2 = CastMediaStatus.entries(in: ["status": .array(entries.map(\.json))])
    fuzzRequire(
        CastMediaStatus.entries(in: ["status": .array(entries2.map(\.json))]) == entries2,
        "MEDIA_STATUS reading is not stable")
    for entry in entries {
        var itemMedia: [Int64: CastMediaInformation] = [:]
        for item in entry.items ?? [] {
            if let id = item.itemID, let media = item.media { itemMedia[id] = media }
        }
        let status = CastdMediaStatus(
            deviceID: "fuzz", status: entry, media: entry.media, itemMedia: itemMedia, receivedAt: receivedAt)
        var doubles: [Double] = [
            status.currentTime, status.playbackRate, status.volume.level, status.volume.stepInterval,
            status.media.duration,
            status.breakStatus.currentBreakTime, status.breakStatus.currentBreakClipTime,
            status.breakStatus.secondsUntilSkippable, status.liveSeekableRange.start, status.liveSeekableRange.end,
        ]
        for item in status.items {
            doubles += [item.startTime, item.preloadTime, item.playbackDuration, item.media.duration]
        }
        fuzzRequire(doubles.allSatisfy(\.isFinite), "a published media status holds a non-finite number: \(doubles)")
        roundTrip(status)
    }

    // MULTIZONE_STATUS, DEVICE_ADDED / DEVICE_UPDATED
    var members: [Castd_V1_GroupMember] = []
    for type in ["MULTIZONE_STATUS", "DEVICE_UPDATED"] {
        switch MultizoneUpdate(type: type, payload: payload) {
        case .members(let all)?: members += all.map(Castd_V1_GroupMember.init)
        case .memberChanged(let member)?: members.append(Castd_V1_GroupMember(member))
        default: break
        }
    }
    for member in members {
        fuzzRequire(!member.deviceID.isEmpty, "a group member without an id")
        roundTrip(member)
    }
}

/// What clients get must encode, as protobuf and as proto3 JSON (castc --json), and decode back.
/// Every enum fits protobuf's int32 first: SwiftProtobuf would write past its buffer otherwise.
func roundTrip<M: SwiftProtobuf.Message & Equatable>(_ message: M) {
    let outOfRange = outOfRangeEnumFields(in: message)
    fuzzRequire(outOfRange.isEmpty, "\(M.protoMessageName) holds enums outside int32: \(outOfRange)")
    do {
        let bytes: [UInt8] = try message.serializedBytes()
        let decoded = try M(serializedBytes: bytes)
        fuzzRequire(decoded == message, "\(M.protoMessageName) changed through protobuf")
        _ = try message.jsonString()
    } catch {
        fuzzRequire(false, "\(M.protoMessageName) does not encode: \(error)")
    }
}

@main
enum Main {
    static func main() {
        fuzzOrReplay(name: "CastPayloadFuzzer", fuzzOne)
    }
}
