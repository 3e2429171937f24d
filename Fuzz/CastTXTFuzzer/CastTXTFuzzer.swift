import CastDiscovery
import FuzzSupport

// mDNS TXT records of _googlecast._tcp services: the RDATA bytes as they travel (length-prefixed
// strings), split by avahi as avahi-client splits what it receives, then CastTXTRecord and the
// DiscoveredDevice castd derives from it.
//
// Properties: the strings serialize back to bytes that split into the same strings; a record
// rebuilt from its own key → value map is the same record; the device's id and name are never
// empty.

func fuzzOne(_ bytes: [UInt8]) {
    guard let entries = CastTXTRecord.entries(wireFormat: bytes) else { return }
    fuzzRequire(entries.allSatisfy { $0.count <= 255 }, "a TXT string over 255 bytes")
    var wire: [UInt8] = []
    for entry in entries {
        wire.append(UInt8(entry.count))
        wire += entry
    }
    fuzzRequire(CastTXTRecord.entries(wireFormat: wire) == entries, "TXT strings do not survive serializing")

    let record = CastTXTRecord(entries: entries)
    fuzzRequire(CastTXTRecord(values: record.values) == record, "a record rebuilt from its values differs")
    fuzzRequire(
        record.values.keys.allSatisfy { !$0.isEmpty && $0 == $0.lowercased() }, "a key is empty or not lowercased")
    let device = DiscoveredDevice(serviceName: "Chromecast-fuzz", host: "192.0.2.1", port: 8009, txt: record)
    fuzzRequire(!device.id.isEmpty && !device.friendlyName.isEmpty, "a device without an id or name")
}

@main
enum Main {
    static func main() {
        fuzzOrReplay(name: "CastTXTFuzzer", fuzzOne)
    }
}
