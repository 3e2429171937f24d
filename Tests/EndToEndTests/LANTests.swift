import CastClient
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

        /// castd's view, asked in the test's own process (polling with castc, a process a poll,
        /// cost more CPU than the tests beside it could spare under a sanitizer).
        func device() async throws -> CastdDevice? {
            try? await status().devices.first
        }

        func status() async throws -> CastdStatusResponse {
            try await CastdClient.withConnection(socketPath: socket) { try await $0.status() }
        }
    }

    /// A TV on the LAN, announced over mDNS, and castd in the desktop, once castd lists the TV.
    /// `anyAddress`: the TV listens on every address it has (one that may change), not only on
    /// the one it starts with. `castdArguments(tvAddress)`: more of castd's flags.
    func withHome<T>(
        anyAddress: Bool = false, impaired: Bool = false, castdArguments: (String) -> [String] = { _ in [] },
        _ body: (Home) async throws -> T
    ) async throws -> T {
        try await TestLAN.with(tvs: 1, impaired: impaired ? ["tv1": (delayMs: 100, lossPercent: 5)] : [:]) {
            lan, launch in
            let tv = try lan.address(of: "tv1")
            let authority = lan.directory + "/authority"
            let ready = lan.directory + "/tv1.json"
            _ = try launch(
                "tv1", "cast-emulator",
                ["--name", "LAN TV", "--host", anyAddress ? "0.0.0.0" : tv, "--port", "8009", "--https-port", "8443"]
                    + ["--publish", "--authority", authority, "--ready-file", ready])
            try await eventually(timeout: processStartTimeout, "the TV's ready file") {
                FileManager.default.fileExists(atPath: ready)
            }
            let socket = lan.directory + "/castd.sock"
            _ = try launch(
                "desktop", "castd",
                [
                    "--mode", "user", "--socket", socket, "--state-directory", "", "--trust-root",
                    authority + "/root.pem",
                ]
                    + castdArguments(tv))
            let home = Home(lan: lan, socket: socket, tvAddress: tv)
            try await eventually(
                timeout: .seconds(30), poll: .milliseconds(250), "castd in the desktop to find the TV over mDNS"
            ) {
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
            try await eventually(timeout: .seconds(25), poll: .milliseconds(250), "castd to find the link dead") {
                try await home.device()?.linkState != .connected
            }
            let found = ContinuousClock.now - cut
            #expect(try await home.status().sessions.first?.state == .suspended)
            try await home.lan.cable("tv1", plugged: true)
            let plugged = ContinuousClock.now
            try await eventually(timeout: .seconds(30), poll: .milliseconds(250), "the session to resume") {
                try await home.status().sessions.first?.state == .resumed
            }
            let resumed = ContinuousClock.now - plugged
            print("LAN: a cut cable found dead after \(found); the session resumed \(resumed) after the cable was back")
            let again = try #require(try await home.status().sessions.first)
            #expect(again.sessionID == session.sessionID)
            expectSuccess(try await home.castc(["pause"]))
        }
    }

    /// The TV gets a new address mid-session, as after a DHCP renewal: its Avahi announces it,
    /// castd follows, and the session is resumed there. (Timing: castd finds the old link dead
    /// by its liveness window; the deadline is that with room, scaled by CASTD_TEST_TIME_SCALE.)
    @Test func aTVThatChangesAddressMidSessionIsFollowedAndTheSessionSurvives() async throws {
        try await withHome(anyAddress: true) { home in
            expectSuccess(try await home.castc(["load", "https://example.com/a.mp4", "--device", "LAN TV"]))
            let session = try #require(try await home.status().sessions.first)
            let renumbered = try await home.lan.renumber("tv1")
            let changed = ContinuousClock.now
            try await eventually(
                timeout: .seconds(40), poll: .milliseconds(250), "castd to resume the session at the TV's new address"
            ) {
                let status = try await home.status()
                return status.devices.first?.host == renumbered && status.sessions.first?.state == .resumed
            }
            print(
                "LAN: a TV renumbered mid-session was resumed at its new address after \(ContinuousClock.now - changed)"
            )
            let status = try await home.status()
            #expect(status.sessions.first?.sessionID == session.sessionID)
            #expect(status.devices.count == 1 && status.devices.first?.linkState == .connected)
            expectSuccess(try await home.castc(["pause"]))
        }
    }

    /// The TV given by address too (castd --device ADDRESS): castd reads its eureka_info on the
    /// real port, 8443, across the LAN, and the device given by address and the device mDNS
    /// announces are one.
    @Test func aTVGivenByAddressAndAnnouncedIsOneDevice() async throws {
        try await withHome(castdArguments: { ["--device", $0] }) { home in
            try await eventually(
                timeout: .seconds(20), poll: .milliseconds(250), "the device given by address and announced to be one"
            ) {
                try await home.status().devices.count == 1
            }
            let device = try #require(try await home.device())
            #expect(device.friendlyName == "LAN TV" && device.source == .static && device.manufacturer == "Google Inc.")
            #expect(device.host == home.tvAddress && device.id.count == 32, "\(device)")
            expectSuccess(try await home.castc(["connect", "LAN TV"]))
            #expect(try await home.status().devices.count == 1)
        }
    }

    /// Two TVs on two hosts and a speaker group of both, announced by the first (as a group's
    /// leader announces it, on a port of its own): castd lists three devices, learns the
    /// group's members from the group, and casts to the group.
    @Test func twoTVsAndAGroupOfBoth() async throws {
        try await TestLAN.with(tvs: 2) { lan, launch in
            let authority = lan.directory + "/authority"
            let ids = ["tv1": String(repeating: "a1", count: 16), "tv2": String(repeating: "b2", count: 16)]
            let names = ["tv1": "Living Room", "tv2": "Kitchen"]
            for node in ["tv1", "tv2"] {
                let ready = lan.directory + "/\(node).json"
                _ = try launch(
                    node, "cast-emulator",
                    ["--name", names[node]!, "--id", ids[node]!, "--host", try lan.address(of: node), "--port", "8009"]
                        + ["--publish", "--authority", authority, "--ready-file", ready])
                try await eventually(timeout: processStartTimeout, "\(node)'s ready file") {
                    FileManager.default.fileExists(atPath: ready)
                }
            }
            let groupReady = lan.directory + "/group.json"
            _ = try launch(
                "tv1", "cast-emulator",
                ["--name", "Downstairs", "--host", try lan.address(of: "tv1"), "--port", "42001", "--publish"]
                    + ["--group-member", "\(ids["tv1"]!)=Living Room", "--group-member", "\(ids["tv2"]!)=Kitchen"]
                    + ["--authority", authority, "--ready-file", groupReady])
            let socket = lan.directory + "/castd.sock"
            _ = try launch(
                "desktop", "castd",
                [
                    "--mode", "user", "--socket", socket, "--state-directory", "", "--trust-root",
                    authority + "/root.pem",
                ])
            let home = Home(lan: lan, socket: socket, tvAddress: try lan.address(of: "tv1"))
            try await eventually(
                timeout: .seconds(30), poll: .milliseconds(250), "castd to list both TVs and the group with its members"
            ) {
                guard let devices = try? await home.status().devices else { return false }
                guard devices.count == 3, let group = devices.first(where: \.isGroup) else { return false }
                return Set(group.groupMembers.map(\.name)) == ["Living Room", "Kitchen"]
            }
            let table = try await home.castc(["devices"])
            #expect(table.stdout.contains("Downstairs (group)") && table.stdout.contains("  - Kitchen"), "\(table)")
            expectSuccess(try await home.castc(["load", "https://example.com/a.mp3", "--device", "Downstairs"]))
            let status = try await home.status()
            #expect(status.sessions.count == 1 && status.sessions.first?.deviceName == "Downstairs")
        }
    }

    /// The TV's cable delays every frame 100 ms and drops 5 %, each way: castd still finds it,
    /// every command works, the heartbeat never declares the live TV dead, and a cut cable is
    /// still recovered from. (Timing: deadlines as elsewhere, scaled; the figures are printed.)
    @Test func aTVBehindALossySlowLinkIsControlledAndNeverDeclaredDead() async throws {
        try await withHome(impaired: true) { home in
            expectSuccess(try await home.castc(["load", "https://example.com/a.mp4", "--device", "LAN TV"]))
            // Commands for longer than the heartbeat's window (dead after 10 s of silence), so that
            // it judges the link several times while the link is in use.
            var latencies: [Duration] = []
            let start = ContinuousClock.now
            try await CastdClient.withConnection(socketPath: home.socket) { client in
                while latencies.count < 20 || ContinuousClock.now - start < .seconds(12) {
                    let started = ContinuousClock.now
                    if latencies.count.isMultiple(of: 2) {
                        _ = try await client.pause(device: "LAN TV")
                    } else {
                        _ = try await client.play(device: "LAN TV")
                    }
                    latencies.append(ContinuousClock.now - started)
                }
            }
            let status = try await home.status()
            #expect(status.devices.first?.linkState == .connected && status.devices.first?.reconnectAttempts == 0)
            #expect(status.sessions.first?.state == .started, "never suspended: \(status.sessions)")
            let sorted = latencies.sorted()
            print(
                "LAN, 100 ms and 5 % loss each way: \(sorted.count) play/pause, median \(sorted[sorted.count / 2]), max \(sorted.last!)"
            )

            try await home.lan.cable("tv1", plugged: false)
            try await eventually(timeout: .seconds(30), poll: .milliseconds(250), "castd to find the link dead") {
                try await home.device()?.linkState != .connected
            }
            try await home.lan.cable("tv1", plugged: true)
            let plugged = ContinuousClock.now
            try await eventually(
                timeout: .seconds(40), poll: .milliseconds(250), "the session to resume over the lossy link"
            ) {
                try await home.status().sessions.first?.state == .resumed
            }
            print(
                "LAN, 100 ms and 5 % loss each way: the session resumed \(ContinuousClock.now - plugged) after the cable was back"
            )
        }
    }
}
