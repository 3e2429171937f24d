import CastSenderLink
import CastClient
import CastDevices
import CastEmulator
import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// Device authentication as castd's clients see it: the outcome in the device record, and a
/// refused device's requests failing with the reason.
struct DaemonDeviceAuthenticationTests {
    func device(_ endpoints: EmulatorEndpoints, name: String) -> StaticDevice {
        StaticDevice(name: name, endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
    }

    func emulator(_ impostor: EmulatorImpostor?) -> EmulatorConfiguration {
        var configuration = EmulatorConfiguration()
        configuration.impostor = impostor
        return configuration
    }

    @Test func aGenuineDeviceIsRecordedAsVerified() async throws {
        try await withEmulator { _, endpoints in
            try await withDaemon(devices: [device(endpoints, name: "TV")]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    let before = try #require(try await client.listDevices().first)
                    #expect(before.authentication.state == .unknown)
                    _ = try await client.startSession()
                    let tv = try #require(try await client.listDevices().first)
                    #expect(tv.linkState == .connected)
                    #expect(tv.authentication.state == .verified)
                    #expect(tv.authentication.root == "Cast Emulator Root CA")
                    #expect(tv.authentication.deviceCertificate.hasPrefix("CN="))
                    #expect(!tv.authentication.sha1)
                    #expect(abs(Double(tv.authentication.checkedAtMs) / 1000 - Date().timeIntervalSince1970) < 60)
                }
            }
        }
    }

    @Test func anImpostorIsRefusedAndRequestsSayWhy() async throws {
        try await withEmulator(emulator(.wrongNonce)) { emulator, endpoints in
            try await withDaemon(devices: [device(endpoints, name: "Fake TV")]) { socket, store in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    let error = await #expect(throws: CastdError.self) { try await client.startSession() }
                    // Reached, but refused: trying again will not help, so not UNAVAILABLE.
                    #expect(error?.code == .failedPrecondition)
                    #expect(error?.message.contains("Fake TV") == true)
                    #expect(
                        error?.message.contains("device authentication failed") == true, "\(String(describing: error))")
                    #expect(error?.message.contains("another challenge") == true)
                    #expect(error?.message.contains("--device-auth warn") == true)

                    let fake = try #require(try await client.listDevices().first)
                    #expect(fake.linkState == .failed)
                    #expect(fake.linkError.contains("another challenge"), "\(fake.linkError)")
                    #expect(fake.authentication.state == .refused)
                    #expect(fake.authentication.detail.contains("another challenge"))
                    #expect(fake.authentication.checkedAtMs > 0)
                    #expect(store.devices().first?.authentication == fake.authentication)

                    // The device got the challenge and nothing else: no virtual connection.
                    #expect(await emulator.state().connections.allSatisfy { $0.virtualConnections.isEmpty })
                    // Every request for it fails the same way.
                    let again = await #expect(throws: CastdError.self) { try await client.setVolume(level: 0.5) }
                    #expect(again?.code == .failedPrecondition)
                }
            }
        }
    }

    @Test func withWarnAnImpostorIsUsedButReportedUnverified() async throws {
        try await withEmulator(emulator(.untrustedRoot)) { _, endpoints in
            try await withDaemon(
                devices: [device(endpoints, name: "Odd TV")], linkConfiguration: .trustingEmulators(policy: .warn)
            ) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    let session = try await client.startSession()
                    #expect(session.state == .started)
                    let odd = try #require(try await client.status().devices.first)
                    #expect(odd.linkState == .connected)
                    #expect(odd.authentication.state == .unverified)
                    #expect(
                        odd.authentication.detail.contains("does not lead to a trusted root"), "\(odd.authentication)")
                }
            }
        }
    }
}
