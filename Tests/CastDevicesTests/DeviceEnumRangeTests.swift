import CastTestSupport
import CastDevices
import CastProtocol
import CastdAPI
import Foundation
import SwiftProtobuf
import Testing

/// Numbers a device sends that castd publishes as castd.v1 enums. Protobuf enums are int32;
/// SwiftProtobuf keeps any Int in `.UNRECOGNIZED(n)`, sizes the field as an int32 and writes the
/// whole varint, past the buffer it sized (SECURITY.md, H2). Every device-supplied enum must come
/// out within int32 and encode to exactly the bytes it was sized for.
/// Fuzz/Corpus/CastPayloadFuzzer/hostile-media-status-enums.json is the fuzzer's seed for it.
@Suite(.tags(.cpuBound)) struct DeviceEnumRangeTests {
    static let receivedAt = Date(timeIntervalSince1970: 1_900_000_000)

    /// Values around and far past int32's ends, as a device may write them.
    static let outOfRange: [String] = [
        "2147483648", "-2147483649", "1099511627776", "-1099511627776", "8999999999999999999", "4294967296",
    ]

    static func status(_ json: String) throws -> CastdMediaStatus {
        let entry = try #require(CastMediaStatus.entries(in: try JSONValue.parse(json)).first)
        var itemMedia: [Int64: CastMediaInformation] = [:]
        for item in entry.items ?? [] {
            if let id = item.itemID, let media = item.media { itemMedia[id] = media }
        }
        return CastdMediaStatus(
            deviceID: "d", status: entry, media: entry.media, itemMedia: itemMedia, receivedAt: receivedAt)
    }

    static func expectEncodes(_ status: CastdMediaStatus) throws {
        #expect(outOfRangeEnumFields(in: status).isEmpty, "\(outOfRangeEnumFields(in: status))")
        let bytes: [UInt8] = try status.serializedBytes()
        #expect(bytes.count == (try status.serializedBytes() as [UInt8]).count)
        #expect(try CastdMediaStatus(serializedBytes: bytes) == status)
    }

    @Test(arguments: outOfRange)
    func aMetadataTypeOutsideInt32ReadsAsGeneric(_ number: String) throws {
        let status = try Self.status(
            #"{"status":[{"mediaSessionId":1,"media":{"contentId":"x","metadata":{"metadataType":\#(number)}},"#
                + #""items":[{"itemId":2,"media":{"contentId":"y","metadata":{"metadataType":\#(number)}}}]}]}"#)
        #expect(status.media.metadata.metadataType == .generic)
        #expect(status.items.first?.media.metadata.metadataType == .generic)
        try Self.expectEncodes(status)
    }

    /// An unknown type within int32 is kept as it was sent (a client may know it), and goes back
    /// to the device as it came.
    @Test func anUnknownMetadataTypeWithinInt32IsKept() throws {
        let status = try Self.status(
            #"{"status":[{"mediaSessionId":1,"media":{"contentId":"x","metadata":{"metadataType":2147483647}}}]}"#)
        #expect(status.media.metadata.metadataType == .UNRECOGNIZED(2_147_483_647))
        #expect(try status.media.metadata.castValue().json["metadataType"]?.intValue == 2_147_483_647)
        try Self.expectEncodes(status)
    }

    @Test func theEnumCheckFindsAnOutOfRangeEnumAtAnyDepth() {
        var status = CastdMediaStatus()
        #expect(outOfRangeEnumFields(in: status).isEmpty)
        var item = Castd_V1_QueueItem()
        item.media.metadata.metadataType = .UNRECOGNIZED(1 << 40)
        status.items = [item]
        #expect(outOfRangeEnumFields(in: status).count == 1)
        #expect(Castd_V1_MetadataType(checkedRawValue: 1 << 40) == nil)
        #expect(Castd_V1_MetadataType(checkedRawValue: 3) == .musicTrack)
        #expect(Castd_V1_MetadataType(checkedRawValue: -5) == .UNRECOGNIZED(-5))
    }

    /// Every other enum castd publishes from a device's MEDIA_STATUS is read from a string: any
    /// number or unknown word in its place reads as a named value.
    @Test func enumsReadFromStringsTakeNoNumbers() throws {
        let status = try Self.status(
            #"{"status":[{"mediaSessionId":1,"playerState":1099511627776,"repeatMode":-1,"#
                + #""media":{"contentId":"x","streamType":4294967296,"tracks":[{"trackId":1,"type":99,"subtype":1e300}]}}]}"#
        )
        #expect(status.playerState == .unknown)
        #expect(status.repeatMode == .off)
        #expect(status.media.streamType == .buffered)
        #expect(status.media.tracks.first?.type == .unspecified)
        try Self.expectEncodes(status)
    }
}
