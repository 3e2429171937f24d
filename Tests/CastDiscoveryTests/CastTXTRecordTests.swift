import CastTestSupport
import Foundation
import Testing

@testable import CastDiscovery

/// TXT parsing against every record captured from real devices, and the edge cases around them.
@Suite(.tags(.cpuBound)) struct CastTXTRecordTests {
    struct Fixture: Sendable, CustomTestStringConvertible {
        var line: Int
        var device: String
        /// The TXT map as captured; a null value is a key sent without '='.
        var payload: [String: String?]
        var instance: String?
        var port: Int?
        /// The raw strings, for the records that were captured as such.
        var rawStrings: [String]?

        var testDescription: String { "line \(line): \(device)" }

        /// The record as TXT strings on the wire: "key=value", or "key" for a null value.
        var entries: [[UInt8]] {
            payload.sorted { $0.key < $1.key }.map { key, value in Array((value.map { "\(key)=\($0)" } ?? key).utf8) }
        }

        /// The instance label ("Chromecast-b380…") without "._googlecast._tcp.local.".
        var serviceName: String {
            let instance = instance ?? device
            guard let range = instance.range(of: "._google") else { return instance }
            return String(instance[..<range.lowerBound])
        }
    }

    static let fixtureURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .appendingPathComponent("../CastProtocolTests/Fixtures/real-messages/txt_records.jsonl")
        .standardizedFileURL

    static func loadFixtures() throws -> [Fixture] {
        let text = try String(contentsOf: fixtureURL, encoding: .utf8)
        var fixtures: [Fixture] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                "line \(index + 1) is not an object")
            let payload = try #require(object["payload"] as? [String: Any], "line \(index + 1) has no payload")
            var values: [String: String?] = [:]
            for (key, value) in payload {
                if value is NSNull {
                    values[key] = .some(nil)
                } else {
                    values[key] = try #require(value as? String, "line \(index + 1): \(key) is not a string")
                }
            }
            var raw = object["raw_txt_strings"] as? [String]
            if raw == nil, let joined = object["raw_txt"] as? String, joined.contains("|") {
                raw = joined.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            }
            fixtures.append(
                Fixture(
                    line: index + 1, device: object["device"] as? String ?? "?", payload: values,
                    instance: object["instance"] as? String, port: object["port"] as? Int, rawStrings: raw))
        }
        return fixtures
    }

    static let fixtures: [Fixture] = (try? loadFixtures()) ?? []

    @Test func fixtureFileLoads() throws {
        let fixtures = try Self.loadFixtures()
        #expect(fixtures.count == 16, "expected every line of \(Self.fixtureURL.path)")
    }

    @Test(arguments: fixtures)
    func everyCapturedRecordParses(_ fixture: Fixture) throws {
        let txt = CastTXTRecord(entries: fixture.entries)
        func value(_ key: String) -> String? { fixture.payload[key].map { $0 ?? "" } }

        // Every key is kept, lowercased, a bare key with "".
        #expect(txt.values.count == fixture.payload.count)
        for (key, captured) in fixture.payload {
            #expect(txt.values[key.lowercased()] == (captured ?? ""), "key \(key)")
        }
        #expect(txt.id == value("id"))
        #expect(txt.friendlyName == value("fn"))
        #expect(txt.model == value("md"))
        #expect(txt.statusText == value("rs"))
        #expect(txt.iconPath == value("ic"))
        #expect(txt.status == value("st").flatMap { Int($0) })
        #expect(txt.capabilities.rawValue == value("ca").flatMap { UInt32($0) } ?? 0)

        // The same through the map initializer.
        #expect(CastTXTRecord(values: fixture.payload.mapValues { $0 ?? "" }) == txt)

        // Captured raw strings (wire order) parse to the same record.
        if let raw = fixture.rawStrings {
            #expect(CastTXTRecord(entries: raw.map { Array($0.utf8) }) == txt)
        }

        let port = fixture.port ?? 8009
        let device = DiscoveredDevice(serviceName: fixture.serviceName, host: "192.0.2.1", port: port, txt: txt)
        #expect(device.id == (value("id") ?? fixture.serviceName))
        #expect(device.friendlyName == (value("fn") ?? fixture.serviceName))
        #expect(device.model == (value("md") ?? ""))
        #expect(device.port == port)
        #expect(device.isBusy == (value("st") == "1"))
        #expect(device.statusText == (value("rs") ?? ""))
        #expect(device.isGroup == (value("md") == "Google Cast Group"))
    }

    @Test func groupsAdvertiseTheirOwnPort() throws {
        let groups = Self.fixtures.filter { $0.payload["md"] == "Google Cast Group" }
        #expect(groups.count == 3)
        let onOtherPorts = groups.filter { ($0.port ?? 8009) != 8009 }
        #expect(!onOtherPorts.isEmpty, "the fixtures have a group on a port other than 8009")
        for fixture in onOtherPorts {
            let device = DiscoveredDevice(
                serviceName: fixture.serviceName, host: "192.0.2.7", port: try #require(fixture.port),
                txt: CastTXTRecord(entries: fixture.entries))
            #expect(device.isGroup)
            #expect(device.capabilities.contains(.multizoneGroup))
            #expect(device.port == fixture.port)
        }
    }

    @Test func knownCapabilityValues() {
        let group = CastTXTRecord(values: ["ca": "198692"]).capabilities
        #expect(group.contains(.multizoneGroup) && group.contains(.audioOut) && !group.contains(.videoOut))
        let speaker = CastTXTRecord(values: ["ca": "198660"]).capabilities
        #expect(speaker.contains(.audioOut) && !speaker.contains(.multizoneGroup))
        #expect(speaker.rawValue == 198_660, "unknown bits are kept")
        let chromecast = CastTXTRecord(values: ["ca": "4101"]).capabilities
        #expect(chromecast.contains([.videoOut, .audioOut]) && !chromecast.contains(.videoIn))
        #expect(CastTXTRecord(values: ["ca": " 5 "]).capabilities == [.videoOut, .audioOut])
        #expect(CastTXTRecord(values: ["ca": "lots"]).capabilities == [])
        #expect(CastTXTRecord(values: ["ca": "99999999999"]).capabilities == [])
        #expect(CastCapabilities([.videoOut, .audioOut]).description == "[videoOut, audioOut]")
    }

    @Test func entriesWithoutEqualsSignAndEmptyValues() {
        let txt = CastTXTRecord(entries: [
            Array("CGS".utf8), Array("rs=".utf8), Array("id=abc".utf8), Array("fn=".utf8),
        ])
        #expect(txt.values == ["cgs": "", "rs": "", "id": "abc", "fn": ""])
        #expect(txt.statusText == "")
        #expect(txt.friendlyName == nil, "an empty fn counts as missing")
        let device = DiscoveredDevice(serviceName: "Living Room TV", host: "192.0.2.1", port: 8009, txt: txt)
        #expect(device.friendlyName == "Living Room TV")
        #expect(device.id == "abc")
    }

    @Test func valuesKeepEverythingAfterTheFirstEqualsSign() {
        let txt = CastTXTRecord(entries: [Array("rs=Casting: a=b=c".utf8), Array("=orphan".utf8), []])
        #expect(txt.values == ["rs": "Casting: a=b=c"], "empty strings and empty keys are ignored")
    }

    @Test func keysAreCaseInsensitiveAndTheFirstOccurrenceWins() {
        let txt = CastTXTRecord(entries: [Array("ID=first".utf8), Array("id=second".utf8), Array("Fn=TV".utf8)])
        #expect(txt.id == "first")
        #expect(txt.friendlyName == "TV")
        #expect(txt.values == ["id": "first", "fn": "TV"])
        #expect(CastTXTRecord(values: ["ID": "upper", "id": "lower"]).id == "lower")
        #expect(CastTXTRecord(values: ["Id": "b", "ID": "a"]).id == "a")
    }

    @Test func nonASCIINames() {
        let name = "Wohnzimmer – Küche 📺 客厅"
        let txt = CastTXTRecord(entries: [Array("fn=\(name)".utf8), Array("md=Téléviseur".utf8), Array("ïd=x".utf8)])
        #expect(txt.friendlyName == name)
        #expect(txt.model == "Téléviseur")
        #expect(txt.values["ïd"] == "x")
        let device = DiscoveredDevice(
            serviceName: "客厅电视", host: "192.0.2.1", port: 8009, txt: CastTXTRecord(entries: []))
        #expect(device.friendlyName == "客厅电视")
        #expect(device.id == "客厅电视")
    }

    @Test func invalidUTF8IsDecodedLossily() {
        let txt = CastTXTRecord(entries: [Array("fn=Caf".utf8) + [0xE9] + Array(" TV".utf8), [0xFF, 0x3D, 0x31]])
        #expect(txt.friendlyName == "Caf\u{FFFD} TV")
        #expect(txt.values["\u{FFFD}"] == "1")
    }

    @Test func missingKeys() {
        let txt = CastTXTRecord(entries: [])
        #expect(txt.id == nil && txt.friendlyName == nil && txt.model == nil)
        #expect(txt.capabilities == [] && txt.status == nil && txt.statusText == nil && txt.iconPath == nil)
        let device = DiscoveredDevice(serviceName: "Chromecast-1234", host: "fe80::1%lo", port: 8009, txt: txt)
        #expect(device.id == "Chromecast-1234")
        #expect(device.friendlyName == "Chromecast-1234")
        #expect(device.model == "" && device.statusText == "")
        #expect(!device.isBusy && !device.isGroup)
    }

    @Test func statusAndGroups() {
        #expect(DiscoveredDevice(serviceName: "a", host: "h", port: 1, txt: CastTXTRecord(values: ["st": "1"])).isBusy)
        #expect(!DiscoveredDevice(serviceName: "a", host: "h", port: 1, txt: CastTXTRecord(values: ["st": "0"])).isBusy)
        #expect(!DiscoveredDevice(serviceName: "a", host: "h", port: 1, txt: CastTXTRecord(values: ["st": "x"])).isBusy)
        let byModel = CastTXTRecord(values: ["md": "Google Cast Group", "ca": "2052"])
        #expect(DiscoveredDevice(serviceName: "g", host: "h", port: 32_901, txt: byModel).isGroup)
        let byCapability = CastTXTRecord(values: ["md": "Some speaker set", "ca": "36"])
        #expect(DiscoveredDevice(serviceName: "g", host: "h", port: 42_000, txt: byCapability).isGroup)
    }
}
