import CastTestSupport
import Testing

@testable import CastDiscovery

/// The pure part of the browser: service instances in, one device per TXT id out.
@Suite(.tags(.cpuBound)) struct DeviceAggregatorTests {
    static func key(_ name: String, interface: Int32 = 1, proto: Int32 = 0) -> ServiceKey {
        ServiceKey(interface: interface, protocol: proto, name: name, type: "_googlecast._tcp", domain: "local")
    }

    static func device(
        _ name: String, host: String = "192.0.2.10", port: Int = 8009, _ txt: [String: String]
    ) -> DiscoveredDevice {
        DiscoveredDevice(serviceName: name, host: host, port: port, txt: CastTXTRecord(values: txt))
    }

    @Test func addedOnceThenUpdatedOnlyWhenSomethingChanges() {
        var aggregator = DeviceAggregator()
        let tv = Self.device("TV", ["id": "a", "fn": "TV", "st": "0"])
        #expect(aggregator.resolved(Self.key("TV"), as: tv) == [.added(tv)])
        #expect(aggregator.resolved(Self.key("TV"), as: tv) == [], "a re-resolve without changes is silent")
        let busy = Self.device("TV", ["id": "a", "fn": "TV", "st": "1", "rs": "Casting"])
        #expect(aggregator.resolved(Self.key("TV"), as: busy) == [.updated(busy)])
        let moved = Self.device("TV", host: "192.0.2.11", ["id": "a", "fn": "TV", "st": "1", "rs": "Casting"])
        #expect(aggregator.resolved(Self.key("TV"), as: moved) == [.updated(moved)])
        #expect(aggregator.removed(Self.key("TV")) == [.removed(id: "a")])
        #expect(aggregator.removed(Self.key("TV")) == [], "removing twice is harmless")
        #expect(aggregator.devices.isEmpty)
    }

    @Test func oneDevicePerIDAcrossInterfacesAndProtocols() {
        var aggregator = DeviceAggregator()
        let v6 = Self.device("TV", host: "fe80::1%eth0", ["id": "a", "fn": "TV"])
        let v4 = Self.device("TV", host: "192.0.2.10", ["id": "a", "fn": "TV"])
        let v4OnWiFi = Self.device("TV", host: "198.51.100.10", ["id": "a", "fn": "TV"])
        #expect(aggregator.resolved(Self.key("TV", interface: 2, proto: 1), as: v6) == [.added(v6)])
        #expect(aggregator.resolved(Self.key("TV", interface: 2), as: v4) == [.updated(v4)], "IPv4 is preferred")
        #expect(aggregator.resolved(Self.key("TV", interface: 3), as: v4OnWiFi) == [], "the first IPv4 address stays")
        #expect(aggregator.devices == [v4])
        #expect(aggregator.removed(Self.key("TV", interface: 2)) == [.updated(v4OnWiFi)])
        #expect(aggregator.removed(Self.key("TV", interface: 3)) == [.updated(v6)])
        #expect(aggregator.removed(Self.key("TV", interface: 2, proto: 1)) == [.removed(id: "a")])
    }

    @Test func newestTXTWinsWhileTheAddressStays() {
        var aggregator = DeviceAggregator()
        let first = Self.device("TV", host: "192.0.2.10", ["id": "a", "fn": "Old"])
        let second = Self.device("TV", host: "198.51.100.10", ["id": "a", "fn": "Old"])
        _ = aggregator.resolved(Self.key("TV", interface: 2), as: first)
        _ = aggregator.resolved(Self.key("TV", interface: 3), as: second)
        let renamedOnSecond = Self.device("TV", host: "198.51.100.10", ["id": "a", "fn": "New"])
        let expected = Self.device("TV", host: "192.0.2.10", ["id": "a", "fn": "New"])
        #expect(aggregator.resolved(Self.key("TV", interface: 3), as: renamedOnSecond) == [.updated(expected)])
    }

    @Test func differentInstanceNamesWithTheSameIDAreOneDevice() {
        var aggregator = DeviceAggregator()
        let a = Self.device("Group", port: 32_001, ["id": "g", "fn": "Upstairs", "md": "Google Cast Group"])
        let b = Self.device(
            "Group-1", host: "192.0.2.20", port: 32_002, ["id": "g", "fn": "Upstairs", "md": "Google Cast Group"])
        #expect(aggregator.resolved(Self.key("Group"), as: a) == [.added(a)])
        #expect(aggregator.resolved(Self.key("Group-1"), as: b) == [])
        #expect(aggregator.removed(Self.key("Group")) == [.updated(b)])
        #expect(aggregator.removed(Self.key("Group-1")) == [.removed(id: "g")])
    }

    @Test func anInstanceChangingItsIDMovesBetweenDevices() {
        var aggregator = DeviceAggregator()
        let before = Self.device("TV", ["id": "a"])
        let after = Self.device("TV", ["id": "b"])
        _ = aggregator.resolved(Self.key("TV"), as: before)
        #expect(aggregator.resolved(Self.key("TV"), as: after) == [.removed(id: "a"), .added(after)])
    }

    @Test func devicesWithoutIDAreKeyedByInstanceName() {
        var aggregator = DeviceAggregator()
        let anonymous = Self.device("Kitchen speaker", ["md": "Speaker"])
        #expect(aggregator.resolved(Self.key("Kitchen speaker"), as: anonymous) == [.added(anonymous)])
        #expect(anonymous.id == "Kitchen speaker")
        #expect(aggregator.removed(Self.key("Kitchen speaker")) == [.removed(id: "Kitchen speaker")])
    }

    @Test func removeAllReportsEveryDevice() {
        var aggregator = DeviceAggregator()
        _ = aggregator.resolved(Self.key("B"), as: Self.device("B", ["id": "b"]))
        _ = aggregator.resolved(Self.key("A"), as: Self.device("A", ["id": "a"]))
        _ = aggregator.resolved(Self.key("A2", interface: 2), as: Self.device("A2", ["id": "a"]))
        #expect(aggregator.removeAll() == [.removed(id: "a"), .removed(id: "b")])
        #expect(aggregator.devices.isEmpty)
        #expect(aggregator.removed(Self.key("A")) == [])
    }
}
