import CastdAPI
import Foundation
import NIOCore
import Testing

@testable import CastClient

@Suite(.timeLimit(.minutes(1))) struct ConnectTests {
    @Test func missingSocketIsUnavailableAndNamesThePath() async throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("castc-tests-\(UUID().uuidString).sock").path
        let error = await #expect(throws: CastdError.self) {
            _ = try await CastdClient.connect(socketPath: path)
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("No such file or directory") == true)
        #expect(error?.message.contains("is castd running?") == true)
    }

    @Test func withConnectionToMissingSocketIsUnavailable() async throws {
        let path = "/nonexistent-castc-test-dir/castd.sock"
        let error = await #expect(throws: CastdError.self) {
            try await CastdClient.withConnection(socketPath: path) { _ in }
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.hasPrefix("cannot connect to castd at \(path): ") == true)
    }

    @Test func permissionDeniedIsNotReportedAsDaemonDown() {
        let error = CastdConnectError.make(
            IOError(errnoCode: EACCES, reason: "connect"), path: "/run/castd/castd.sock")
        #expect(error.code == .permissionDenied)
        #expect(error.message.hasPrefix("cannot connect to castd at /run/castd/castd.sock: Permission denied"))
    }

    @Test func refusedConnectionIsUnavailable() {
        let error = CastdConnectError.make(IOError(errnoCode: ECONNREFUSED, reason: "connect"), path: "/tmp/c.sock")
        #expect(
            error
                == CastdError(
                    .unavailable,
                    "cannot connect to castd at /tmp/c.sock: Connection refused — is castd running? (start yours with `castd`, or `systemctl --user enable --now castd.socket`; or set --socket / CASTD_SOCKET)"
                )
        )
    }

    /// The command that starts the castd meant: the machine's (for root, also one for root
    /// alone, since castd will not run as root in system mode), or the user's own.
    @Test func theHintNamesTheCommandThatWorks() {
        let system = CastdSocketPath.system
        #expect(CastdConnectError.startHint(path: system, euid: 0).contains("castd --mode user --socket \(system)"))
        #expect(
            CastdConnectError.startHint(path: system, euid: 1000).contains("sudo systemctl enable --now castd.socket"))
        #expect(
            CastdConnectError.startHint(path: "/run/user/1000/castd/castd.sock", euid: 1000).contains(
                "systemctl --user enable --now castd.socket"))
    }

    @Test func invalidFrameLimitIsRefused() async {
        let error = await #expect(throws: CastdError.self) {
            _ = try await CastdClient.connect(socketPath: "/tmp/x.sock", maximumFrameLength: 0)
        }
        #expect(error?.code == .invalidArgument)
    }
}
