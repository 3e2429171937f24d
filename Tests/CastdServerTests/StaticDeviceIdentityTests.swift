import CastClient
import CastDevices
import CastEmulator
import CastSenderLink
import CastTestSupport
import CastdAPI
import CastdLogging
import Logging
import Testing

/// A device given by address (`castd --device HOST`) reads who it is from its eureka_info: it
/// is listed and selected by its own name, with its model, maker, build and mDNS's id.
struct StaticDeviceIdentityTests {
    /// The emulator's eureka_info over HTTPS on a port of its own (a real device: 8443).
    static func tv(_ name: String) -> EmulatorConfiguration {
        var configuration = EmulatorConfiguration()
        configuration.name = name
        configuration.model = "Chromecast Ultra"
        configuration.httpsPort = 0
        return configuration
    }

    static func reader(https: Int?, http: Int) -> DeviceInfoReader {
        var reader = DeviceInfoReader()
        reader.httpsPort = https ?? http
        reader.httpPort = http
        reader.timeout = Duration.seconds(5).scaledForTests
        return reader
    }

    @Test func aDeviceGivenByAddressIsListedAndSelectedByItsOwnName() async throws {
        try await withEmulator(Self.tv("Den TV")) { emulator, endpoints in
            try await withRefusingTCPPort { refused in
                let device = StaticDevice(endpoint: .init(host: endpoints.host, port: endpoints.port))
                let reader = Self.reader(https: endpoints.httpsPort, http: refused)
                try await withDaemon(devices: [device], deviceInfo: reader) { socket, store in
                    let realID = emulator.configuration.deviceID
                    try await eventually("castd to learn who \(device.id) is") { store.device(id: realID) != nil }
                    #expect(store.devices().count == 1, "one device, under its real id: \(store.devices().map(\.id))")
                    let listed = try #require(store.device(id: realID))
                    #expect(listed.friendlyName == "Den TV" && listed.model == "Chromecast Ultra")
                    #expect(listed.manufacturer == "Google Inc." && !listed.build.isEmpty, "\(listed)")
                    #expect(listed.source == .static && listed.host == endpoints.host)
                    #expect(listed.port == UInt32(endpoints.port))
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        #expect(try await client.device("den tv").id == realID)
                        let session = try await client.startSession(device: "Den TV")
                        #expect(session.deviceID == realID && session.deviceName == "Den TV")
                    }
                }
            }
        }
    }

    @Test func aNameTheUserGaveWinsOverTheDevicesOwn() async throws {
        try await withEmulator(Self.tv("Den TV")) { emulator, endpoints in
            try await withRefusingTCPPort { refused in
                let device = StaticDevice(name: "Telly", endpoint: .init(host: endpoints.host, port: endpoints.port))
                let reader = Self.reader(https: endpoints.httpsPort, http: refused)
                try await withDaemon(devices: [device], deviceInfo: reader) { socket, store in
                    let realID = emulator.configuration.deviceID
                    try await eventually("castd to learn who \(device.id) is") { store.device(id: realID) != nil }
                    let listed = try #require(store.device(id: realID))
                    #expect(listed.friendlyName == "Telly" && listed.model == "Chromecast Ultra", "\(listed)")
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        let session = try await client.startSession(device: "Telly")
                        #expect(session.deviceID == realID)
                    }
                }
            }
        }
    }

    /// Nothing answers on either port: the device keeps its address as its id and its name, it
    /// still works, and castd says why at info, not as an error.
    @Test func aDeviceThatCannotBeReadKeepsItsAddressAndWorks() async throws {
        let logs = CastdLogs(filter: LogFilter(minimum: .info), output: .discard)
        try await withEmulator { _, endpoints in
            try await withRefusingTCPPort { refused in
                let device = StaticDevice(endpoint: .init(host: endpoints.host, port: endpoints.port))
                try await withDaemon(devices: [device], deviceInfo: Self.reader(https: nil, http: refused), logs: logs)
                {
                    socket, store in
                    let said = "cannot read what the device says of itself; it stays known by its address"
                    try await eventually("castd to give up reading \(device.id)") {
                        logs.buffer.recent(1000).contains { $0.message == said }
                    }
                    let entry = try #require(logs.buffer.recent(1000).first { $0.message == said })
                    #expect(entry.level == .info)
                    #expect(store.devices().map(\.id) == [device.id])
                    #expect(store.device(id: device.id)?.friendlyName == device.id)
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        let session = try await client.startSession(device: device.id)
                        #expect(session.deviceID == device.id)
                    }
                }
            }
        }
    }
}
