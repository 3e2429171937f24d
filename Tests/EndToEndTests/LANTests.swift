import CastTestSupport
import CastdAPI
import Foundation
import SwiftProtobuf
import Testing

/// castd on a home LAN (`scripts/test-lan.sh`): castd in the desktop's network namespace, a
/// cast-emulator in a TV's, joined by a bridge; each with its own Avahi, so mDNS crosses a real
/// interface and the device is another host. Skipped, saying why, where namespaces cannot be
/// made.
@Suite(
    .enabled("needs root and network namespaces (scripts/test-lan.sh check says why not)") {
        await TestLAN.unavailable() == nil
    })
struct LANTests {
    struct Home {
        let lan: TestLAN
        let socket: String
        let tvAddress: String
        var environment: [String: String] { ["CASTD_SOCKET": socket] }

        func castc(_ arguments: [String]) async throws -> CommandResult {
            try await run("castc", arguments, environment: environment)
        }

        func device() async throws -> CastdDevice? {
            let listed = try await castc(["devices", "--json"])
            guard listed.status == 0 else { return nil }
            var options = JSONDecodingOptions()
            options.ignoreUnknownFields = true
            return try Castd_V1_ListDevicesResponse(jsonString: listed.stdout, options: options).devices.first
        }

        func status() async throws -> CastdStatusResponse {
            var options = JSONDecodingOptions()
            options.ignoreUnknownFields = true
            return try CastdStatusResponse(jsonString: try await castc(["status", "--json"]).stdout, options: options)
        }
    }

    /// A TV on the LAN, announced over mDNS, and castd in the desktop, once castd lists the TV.
    func withHome<T>(_ body: (Home) async throws -> T) async throws -> T {
        try await TestLAN.with(tvs: 1) { lan, launch in
            let tv = try lan.address(of: "tv1")
            let authority = lan.directory + "/authority"
            let ready = lan.directory + "/tv1.json"
            _ = try launch(
                "tv1", "cast-emulator",
                ["--name", "LAN TV", "--host", tv, "--port", "8009", "--https-port", "8443", "--publish"]
                    + ["--authority", authority, "--ready-file", ready])
            try await eventually(timeout: processStartTimeout, "the TV's ready file") {
                FileManager.default.fileExists(atPath: ready)
            }
            let socket = lan.directory + "/castd.sock"
            _ = try launch(
                "desktop", "castd",
                [
                    "--mode", "user", "--socket", socket, "--state-directory", "", "--trust-root",
                    authority + "/root.pem",
                ])
            let home = Home(lan: lan, socket: socket, tvAddress: tv)
            try await eventually(timeout: .seconds(30), "castd in the desktop to find the TV over mDNS") {
                try await home.device()?.friendlyName == "LAN TV"
            }
            return try await body(home)
        }
    }

    @Test func aTVOnAnotherHostIsFoundOverMDNSAndControlled() async throws {
        try await withHome { home in
            let device = try #require(try await home.device())
            #expect(device.host == home.tvAddress && device.port == 8009 && device.source == .mdns, "\(device)")
            expectSuccess(try await home.castc(["connect", "LAN TV"]))
            expectSuccess(try await home.castc(["load", "https://example.com/a.mp4", "--content-type", "video/mp4"]))
            expectSuccess(try await home.castc(["pause"]))
            let status = try await home.status()
            #expect(status.media.first?.playerState == .paused)
            #expect(status.devices.first?.authentication.state == .verified)
        }
    }

    /// The TV's cable is pulled at the switch: no FIN, no RST, no goodbye. castd finds the link
    /// dead within its liveness window (a PING every 5 s, dead after 10 s of silence), keeps the
    /// session suspended, and resumes it once the cable is back. (Timing: the deadline is the
    /// liveness window with room, scaled by CASTD_TEST_TIME_SCALE; the figures are printed.)
    @Test func aCableCutWithoutAFINIsFoundWithinTheLivenessWindowAndTheSessionResumes() async throws {
        try await withHome { home in
            expectSuccess(try await home.castc(["load", "https://example.com/a.mp4", "--device", "LAN TV"]))
            let session = try #require(try await home.status().sessions.first)
            try await home.lan.cable("tv1", plugged: false)
            let cut = ContinuousClock.now
            try await eventually(timeout: .seconds(25), "castd to find the link dead") {
                try await home.device()?.linkState != .connected
            }
            let found = ContinuousClock.now - cut
            #expect(try await home.status().sessions.first?.state == .suspended)
            try await home.lan.cable("tv1", plugged: true)
            let plugged = ContinuousClock.now
            try await eventually(timeout: .seconds(30), "the session to resume") {
                try await home.status().sessions.first?.state == .resumed
            }
            let resumed = ContinuousClock.now - plugged
            print("LAN: a cut cable found dead after \(found); the session resumed \(resumed) after the cable was back")
            let again = try #require(try await home.status().sessions.first)
            #expect(again.sessionID == session.sessionID)
            expectSuccess(try await home.castc(["pause"]))
        }
    }
}
