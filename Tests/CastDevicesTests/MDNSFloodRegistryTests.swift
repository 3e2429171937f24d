import CastSenderLink
import CastDevices
import CastDiscovery
import CastTestSupport
import Foundation
import Logging
import Testing

/// castd's device registry under an mDNS flood through the real Avahi daemon (security issue
/// M1): what a flood adds is given back when it leaves, controllers included. The registry
/// browses a service type of its own (see MDNSFloodBrowserTests for why, and why
/// scripts/test.sh runs these suites alone).
@Suite(.serialized) struct MDNSFloodRegistryTests {
    /// Waves of ids, half of them announcing speaker groups (castd connects to a group as soon
    /// as it appears, to learn its members; nothing answers at these addresses, so each attempt
    /// fails): every id is listed with a controller, and once the wave is withdrawn the
    /// registry holds no controller and lists nothing. Before the fix a controller (and its
    /// channel router) stayed for every id that ever appeared.
    @Test(.timeLimit(.minutes(5))) func devicesThatLeaveMDNSAreForgottenControllerAndAll() async throws {
        let type = "_cf\(UUID().uuidString.prefix(8).lowercased())._tcp"
        let store = CastdStateStore(watcherQueueLimit: 100_000)
        var logger = Logger(label: "castd.tests.registry-flood")
        logger.logLevel = .error
        let registry = DeviceRegistry(
            store: store, discovery: true,
            discoveryLimits: DiscoveryLimits(
                maximumServices: 1024, maximumServicesPerHost: 1024, maximumResolvers: 64),
            serviceType: type,
            backoff: ReconnectBackoff(first: .milliseconds(50), cap: .milliseconds(200), minimumGap: .milliseconds(20)),
            logger: logger)
        let running = Task { await registry.run() }
        defer { running.cancel() }
        // Nothing listens on these ports: a connection to one is refused at once.
        let closedPort = try freePort()

        for wave in 0..<3 {
            let run = UUID().uuidString.prefix(6)
            let fakes = (0..<400).map { index in
                AvahiServiceFlood.Service(
                    name: "Fake \(run) \(index)", port: closedPort,
                    txt: [
                        "id": "w\(wave)-\(run)-\(index)", "fn": "Fake \(index)", "md": "Chromecast",
                        // 4133 has multizoneGroup (1 << 5): a speaker group; 4101 does not.
                        "ca": index.isMultiple(of: 2) ? "4133" : "4101",
                    ])
            }
            let flood = AvahiServiceFlood(serviceType: type, logger: logger)
            try await flood.publish(fakes, timeout: .seconds(120).scaledForTests)
            try await eventually(timeout: .seconds(120), "wave \(wave) listed") { store.devices().count == 400 }
            #expect(await registry.controllerCount == 400)
            // At the default bound (1,024 services), a Watch snapshot still fits a client's
            // 4 MiB frame with room to spare (SECURITY.md, G1.3).
            let snapshotBytes = try store.snapshot().serializedBytes() as [UInt8]
            #expect(snapshotBytes.count * 1024 / 400 < 1 << 20, "\(snapshotBytes.count) bytes for 400 devices")
            // Every group was tried (and failed: nothing answers at its port).
            try await eventually(timeout: .seconds(60), "wave \(wave)'s groups tried") {
                store.devices().filter { $0.isGroup && $0.linkState == .failed }.count == 200
            }
            flood.withdrawAll()
            try await eventually(timeout: .seconds(120), "wave \(wave) removed") { store.devices().isEmpty }
            try await eventually(timeout: .seconds(30), "wave \(wave)'s controllers forgotten") {
                await registry.controllerCount == 0
            }
            #expect(store.snapshot().media.isEmpty)
        }
    }
}
