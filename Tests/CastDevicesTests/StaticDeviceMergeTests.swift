import CastDevices
import CastDiscovery
import CastEmulator
import CastProtocol
import CastSenderLink
import CastTestSupport
import CastdAPI
import Foundation
import Logging
import Testing

/// A device both given by address and announced over mDNS is one device, with one link and
/// one session, whichever comes first: the registry with the real Avahi daemon, on a service
/// type of its own (so that no other test's announcements reach it), and the device's
/// eureka_info from a server the test holds back to order the race.
struct StaticDeviceMergeTests {
    struct Setup {
        let registry: DeviceRegistry
        let store: CastdStateStore
        let emulator: CastDeviceEmulator
        let endpoints: EmulatorEndpoints
        let eureka: HTTPAnswerServer
        let serviceType: String
        var realID: String { emulator.configuration.deviceID }
        var staticID: String { DeviceEndpoint(host: endpoints.host, port: endpoints.port).description }

        /// Announces the emulator over mDNS, as a real device announces itself.
        func announce(_ flood: AvahiServiceFlood) async throws {
            let service = AvahiServiceFlood.Service(
                name: "Den TV \(realID.prefix(6))", port: endpoints.port,
                txt: ["id": realID, "fn": "Den TV", "md": "Chromecast Ultra", "ca": "4101", "st": "0"])
            try await flood.publish([service], timeout: .seconds(30).scaledForTests)
        }
    }

    /// The emulator's eureka_info as current firmware answers it, served by the test.
    static func eurekaAnswer(id: String, name: String = "Den TV") -> String {
        let hex = Array(id)
        let udn = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
        return
            #"{"name": "\#(name)", "device_info": {"ssdp_udn": "\#(udn)", "model_name": "Chromecast Ultra", "manufacturer": "Google Inc."}}"#
    }

    func withSetup<T>(eurekaHeld: Bool, _ body: (Setup) async throws -> T) async throws -> T {
        guard await avahiIsRunning() else {
            Issue.record(
                "avahi-daemon is not running: start it with `scripts/avahi-loopback.sh start /tmp/castd-avahi`")
            throw CancellationError()
        }
        return try await withEmulator { emulator, endpoints in
            let eureka = try await HTTPAnswerServer(
                body: Self.eurekaAnswer(id: emulator.configuration.deviceID), held: eurekaHeld)
            var reader = DeviceInfoReader()
            reader.httpsPort = eureka.port
            reader.httpPort = eureka.port
            reader.timeout = Duration.seconds(20).scaledForTests
            let serviceType = "_cm\(UUID().uuidString.prefix(8).lowercased())._tcp"
            let store = CastdStateStore()
            var logger = Logger(label: "castd.tests.static-merge")
            logger.logLevel = .error
            let registry = DeviceRegistry(
                store: store,
                staticDevices: [StaticDevice(endpoint: .init(host: endpoints.host, port: endpoints.port))],
                discovery: true, serviceType: serviceType, linkConfiguration: .trustingEmulators(),
                deviceInfo: reader, logger: logger)
            let running = Task { await registry.run() }
            defer { running.cancel() }
            let setup = Setup(
                registry: registry, store: store, emulator: emulator, endpoints: endpoints, eureka: eureka,
                serviceType: serviceType)
            do {
                let result = try await body(setup)
                await eureka.close()
                return result
            } catch {
                await eureka.close()
                throw error
            }
        }
    }

    @Test func configuredFirstThenAnnounced() async throws {
        try await withSetup(eurekaHeld: false) { setup in
            try await eventually("the device given by address to learn its id") {
                setup.store.device(id: setup.realID) != nil
            }
            let flood = AvahiServiceFlood(serviceType: setup.serviceType, logger: Logger(label: "flood"))
            defer { flood.withdrawAll() }
            try await setup.announce(flood)
            try await eventually("the announcement to reach the device") {
                setup.store.device(id: setup.realID)?.capabilities == 4101
            }
            #expect(setup.store.devices().map(\.id) == [setup.realID], "one device")
            #expect(setup.store.device(id: setup.realID)?.source == .static)
            #expect(await setup.registry.controllerCount == 1)
        }
    }

    @Test func announcedFirstThenConfigured() async throws {
        try await withSetup(eurekaHeld: true) { setup in
            let flood = AvahiServiceFlood(serviceType: setup.serviceType, logger: Logger(label: "flood"))
            defer { flood.withdrawAll() }
            try await setup.announce(flood)
            try await eventually("mDNS to list the device") { setup.store.device(id: setup.realID)?.source == .mdns }
            #expect(Set(setup.store.devices().map(\.id)) == [setup.realID, setup.staticID], "two, until castd knows")
            setup.eureka.release()
            try await eventually("the two to become one") { setup.store.devices().count == 1 }
            #expect(setup.store.devices().map(\.id) == [setup.realID])
            #expect(setup.store.device(id: setup.realID)?.source == .static, "given by address: never forgotten")
            #expect(await setup.registry.controllerCount == 1)
            // mDNS withdrawing it does not forget a device the user configured.
            flood.withdrawAll()
            let controller = try await setup.registry.controller(for: "Den TV")
            #expect(controller.id == setup.realID)
            _ = try await controller.startSession(SessionRequest(appID: CastAppID.defaultMediaReceiver))
            #expect(await setup.emulator.state().connections.count == 1)
        }
    }

    @Test func announcedWhileASessionRuns() async throws {
        try await withSetup(eurekaHeld: false) { setup in
            try await eventually("the device given by address to learn its id") {
                setup.store.device(id: setup.realID) != nil
            }
            let controller = try await setup.registry.controller(for: "Den TV")
            let session = try await controller.startSession(SessionRequest(appID: CastAppID.defaultMediaReceiver))
            let flood = AvahiServiceFlood(serviceType: setup.serviceType, logger: Logger(label: "flood"))
            defer { flood.withdrawAll() }
            try await setup.announce(flood)
            try await eventually("the announcement to reach the device") {
                setup.store.device(id: setup.realID)?.capabilities == 4101
            }
            #expect(setup.store.devices().map(\.id) == [setup.realID])
            #expect(await setup.registry.controllerCount == 1)
            #expect(setup.store.session(deviceID: setup.realID)?.sessionID == session.sessionID)
            let again = try await setup.registry.controller(for: setup.realID)
            #expect(again === controller, "one controller: one link, one session")
            #expect(await setup.emulator.state().connections.count == 1)
        }
    }

    /// castd learns who the device is while it holds a session there under its address: the
    /// device keeps that id for now, and mDNS's announcement of the real one updates it rather
    /// than listing it twice.
    @Test func learnedWhileASessionRunsThenAnnounced() async throws {
        try await withSetup(eurekaHeld: true) { setup in
            try await eventually("the registry to list the device") { setup.store.device(id: setup.staticID) != nil }
            let controller = try await setup.registry.controller(for: setup.staticID)
            let session = try await controller.startSession(SessionRequest(appID: CastAppID.defaultMediaReceiver))
            setup.eureka.release()
            try await eventually("castd to read the device's name") {
                setup.store.device(id: setup.staticID)?.friendlyName == "Den TV"
            }
            let flood = AvahiServiceFlood(serviceType: setup.serviceType, logger: Logger(label: "flood"))
            defer { flood.withdrawAll() }
            try await setup.announce(flood)
            try await eventually("the announcement to reach the device") {
                setup.store.device(id: setup.staticID)?.capabilities == 4101
            }
            #expect(setup.store.devices().map(\.id) == [setup.staticID], "one device")
            #expect(await setup.registry.controllerCount == 1)
            #expect(setup.store.session(deviceID: setup.staticID)?.sessionID == session.sessionID)
            #expect(try await setup.registry.controller(for: "Den TV") === controller)
            #expect(await setup.emulator.state().connections.count == 1)
        }
    }

    /// castd reads the device anew each time its link comes back: a device renamed meanwhile
    /// is listed, and selected, by its new name.
    @Test func aDeviceRenamedWhileAwayIsSeenByItsNewName() async throws {
        try await withSetup(eurekaHeld: false) { setup in
            try await eventually("the device given by address to learn its id") {
                setup.store.device(id: setup.realID)?.friendlyName == "Den TV"
            }
            let controller = try await setup.registry.controller(for: "Den TV")
            _ = try await controller.startSession(SessionRequest(appID: CastAppID.defaultMediaReceiver))
            setup.eureka.answer(Self.eurekaAnswer(id: setup.realID, name: "Living Room TV"))
            #expect(await setup.emulator.dropLinks() == 1)
            try await eventually("castd to reconnect and read the new name") {
                setup.store.device(id: setup.realID)?.friendlyName == "Living Room TV"
            }
            #expect(try await setup.registry.controller(for: "living room tv") === controller)
            #expect(setup.store.devices().count == 1)
        }
    }
}
