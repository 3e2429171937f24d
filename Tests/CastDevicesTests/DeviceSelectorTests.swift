import CastTestSupport
import CastDevices
import CastdAPI
import Testing

/// How castd finds the device a request names (DeviceSelector.device(matching:in:)).
@Suite(.tags(.cpuBound)) struct DeviceSelectorTests {
    func device(_ id: String, _ name: String, _ host: String, _ port: UInt32 = 8009) -> CastdDevice {
        var device = CastdDevice()
        device.id = id
        device.friendlyName = name
        device.host = host
        device.port = port
        return device
    }

    /// Devices as the state store keeps them: by id.
    func byID(_ devices: [CastdDevice]) -> [String: CastdDevice] {
        Dictionary(uniqueKeysWithValues: devices.map { ($0.id, $0) })
    }

    @Test func aSelectorNamesOneDeviceByIdNameEndpointOrHost() throws {
        let devices = byID([device("a1", "Kitchen", "192.0.2.10"), device("b2", "Den", "192.0.2.11")])
        for (selector, id) in [
            ("b2", "b2"), ("kitchen", "a1"), ("DEN", "b2"), ("192.0.2.11:8009", "b2"), ("192.0.2.10", "a1"),
        ] {
            #expect(try DeviceSelector.device(matching: selector, in: devices)?.id == id, "\(selector)")
        }
        #expect(try DeviceSelector.device(matching: "attic", in: devices) == nil)
        #expect(try DeviceSelector.device(matching: "192.0.2.10:8010", in: devices) == nil)
    }

    /// The start of an id, as `castc devices` shows it: six characters or more, one device.
    @Test func theStartOfAnIdNamesItsDevice() throws {
        let devices = byID([
            device("9940e1163a0e4d8b", "Kitchen", "192.0.2.10"), device("9940e1175f0a77d2", "Den", "192.0.2.11"),
        ])
        #expect(try DeviceSelector.device(matching: "9940e116", in: devices)?.friendlyName == "Kitchen")
        #expect(try DeviceSelector.device(matching: "9940E117", in: devices)?.friendlyName == "Den")
        #expect(try DeviceSelector.device(matching: "9940e", in: devices) == nil, "too short to be taken")
        #expect(throws: CastdError.self, "two ids start alike") {
            try DeviceSelector.device(matching: "9940e1", in: devices)
        }
    }

    /// Two devices with one name (a second "Living Room TV" once picked silently): the request
    /// fails, naming both, and either is still reachable by its id.
    @Test func aNameTwoDevicesShareIsRefusedListingThem() throws {
        let devices = byID([
            device("a1", "Living Room TV", "192.0.2.10"), device("b2", "living room tv", "192.0.2.11"),
            device("c3", "Kitchen", "192.0.2.12"),
        ])
        let error = #expect(throws: CastdError.self) {
            try DeviceSelector.device(matching: "Living Room TV", in: devices)
        }
        #expect(error?.code == .failedPrecondition)
        #expect(
            error?.message
                == "2 devices are named 'Living Room TV': a1 (\"Living Room TV\" at 192.0.2.10:8009), b2 (\"living room tv\" at 192.0.2.11:8009); choose one by its id"
        )
        #expect(try DeviceSelector.device(matching: "b2", in: devices)?.friendlyName == "living room tv")
        #expect(try DeviceSelector.device(matching: "kitchen", in: devices)?.id == "c3")
    }

    /// A group on its own port of a member's host: the host alone is ambiguous, host:port is not,
    /// and an id that is also another device's name goes to the id. (The devices are listed as
    /// castd lists them, by name.)
    @Test func aHostTwoDevicesShareNeedsItsPort() throws {
        let devices = byID([device("tv", "TV", "192.0.2.10"), device("grp", "Downstairs", "192.0.2.10", 32187)])
        let error = #expect(throws: CastdError.self) { try DeviceSelector.device(matching: "192.0.2.10", in: devices) }
        #expect(
            error?.message.hasPrefix("2 devices are on host 192.0.2.10: grp (\"Downstairs\" at 192.0.2.10:32187), tv (")
                == true, "\(String(describing: error))")
        #expect(try DeviceSelector.device(matching: "192.0.2.10:32187", in: devices)?.id == "grp")
        let named = byID([device("TV", "Den", "192.0.2.20"), device("x9", "TV", "192.0.2.21")])
        #expect(try DeviceSelector.device(matching: "TV", in: named)?.id == "TV")
    }
}
