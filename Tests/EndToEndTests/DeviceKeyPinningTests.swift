import CastTestSupport
import CastdAPI
import Foundation
import SwiftProtobuf
import Testing

/// castd pins the key each device id first authenticates with, and refuses another genuine
/// device answering for that id until a person forgets the pin (SECURITY.md, M2). Real programs:
/// two cast-emulator processes with keys of their own take turns at one address, which castd
/// knows by that address; castd trusts both emulators' roots, so the second is a genuine device
/// in every respect but its key.
@Suite(.serialized)
struct DeviceKeyPinningTests {
    struct Setup {
        var directory: String
        var port: Int
        var socket: String { directory + "/castd.sock" }
        var environment: [String: String] { ["CASTD_SOCKET": socket] }

        func castc(_ arguments: [String]) async throws -> CommandResult {
            try await run("castc", arguments, environment: environment)
        }

        /// The device as `castc devices --json` shows it.
        func device() async throws -> CastdDevice {
            let result = try await castc(["devices", "--json"])
            #expect(result.status == 0, "\(result)")
            let response = try Castd_V1_ListDevicesResponse(jsonString: result.stdout)
            return try #require(response.devices.first)
        }
    }

    /// An emulator on `port` with the device authority (root and device key) kept in `authority`.
    static func emulator(
        _ launch: (String, [String], [String: String]) throws -> ChildProcess, port: Int, authority: String,
        directory: String
    ) async throws -> ChildProcess {
        let ready = directory + "/ready-\(UInt32.random(in: 0...UInt32.max)).json"
        let process = try launch(
            "cast-emulator",
            ["--name", "Pinned TV", "--port", "\(port)", "--authority", authority, "--ready-file", ready], [:])
        try await eventually(timeout: processStartTimeout, "the emulator's ready file") {
            try process.checkRunning()
            return FileManager.default.fileExists(atPath: ready)
        }
        return process
    }

    @Test func anotherGenuineDeviceAnsweringForAPinnedIdIsRefusedUntilForgotten() async throws {
        try await withTemporaryDirectory { directory in
            try await withProcesses { launch in
                let port = try freePort()
                let setup = Setup(directory: directory, port: port)
                let first = try await Self.emulator(
                    launch, port: port, authority: directory + "/a", directory: directory)
                // The second emulator's authority now (an emulator started once on another port
                // writes it), so that castd can trust both roots from the start.
                let other = try await Self.emulator(
                    launch, port: try freePort(), authority: directory + "/b", directory: directory)
                await other.stop()
                let second = (directory: directory + "/b", root: directory + "/b/root.pem")
                let castd = try launch(
                    "castd",
                    [
                        "--mode", "user", "--socket", setup.socket, "--no-discovery", "--state-directory",
                        directory + "/state",
                        "--trust-root", directory + "/a/root.pem", "--trust-root", second.root,
                        "--device", "Pinned TV=127.0.0.1:\(port)",
                    ], [:])
                try await eventually(timeout: processStartTimeout, "castd to answer") {
                    try castd.checkRunning()
                    return try await setup.castc(["status"]).status == 0
                }

                // First authentication: the key is pinned, and shown.
                let connect = try await setup.castc(["connect", "Pinned TV"])
                #expect(connect.status == 0, "\(connect)")
                let pinned = try await setup.device().authentication
                #expect(pinned.state == .verified)
                #expect(pinned.keyFingerprint.hasPrefix("sha256:") && pinned.pinnedKey == pinned.keyFingerprint)
                let file = try String(contentsOfFile: directory + "/state/pinned-keys.json", encoding: .utf8)
                #expect(file.contains(pinned.pinnedKey))

                // Another genuine device takes the address (and so the id): refused, saying why.
                await first.stop()
                _ = try await Self.emulator(launch, port: port, authority: second.directory, directory: directory)
                let refused = try await setup.castc(["connect", "Pinned TV"])
                #expect(refused.status == 9, "\(refused)")  // FAILED_PRECONDITION
                #expect(refused.stderr.contains("another key"), "\(refused.stderr)")
                #expect(refused.stderr.contains("castc devices forget"), "\(refused.stderr)")
                let shown = try await setup.device().authentication
                #expect(shown.state == .refused && shown.pinnedKey == pinned.pinnedKey, "\(shown)")

                // A person who knows why forgets the pin: castd tries again and pins the new key.
                let forget = try await setup.castc(["devices", "forget", "Pinned TV"])
                #expect(forget.status == 0, "\(forget)")
                #expect(forget.stdout.contains("Forgot the key pinned for Pinned TV"), "\(forget)")
                let again = try await setup.castc(["connect", "Pinned TV"])
                #expect(again.status == 0, "\(again)")
                let repinned = try await setup.device().authentication
                #expect(repinned.state == .verified && repinned.pinnedKey == repinned.keyFingerprint)
                #expect(repinned.pinnedKey != pinned.pinnedKey)
            }
        }
    }
}
