import CastTestSupport
import Foundation
import Testing

/// cast-mpris started as a newcomer might start it: without a desktop session's bus, and with
/// castd's words for log levels and --version.
@Suite struct CastMPRISStartTests {
    /// Without a session bus cast-mpris stops at once, saying why (exit 69, EX_UNAVAILABLE),
    /// instead of running silently until media appears.
    @Test func withoutASessionBusItStopsAtOnceSayingWhy() async throws {
        try await withTemporaryDirectory { directory in
            let missing = try await run(
                "cast-mpris", ["--socket", directory + "/castd.sock"],
                environment: [
                    "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(directory)/no-bus", "XDG_RUNTIME_DIR": directory,
                ])
            #expect(missing.status == 69, "\(missing)")
            #expect(
                missing.stderr
                    == "cast-mpris: cannot connect to the session bus: No such file or directory; it runs in a desktop session, on its D-Bus (DBUS_SESSION_BUS_ADDRESS=unix:path=\(directory)/no-bus)\n",
                "\(missing)")
            #expect(!missing.stderr.contains("leaving the session bus"))
        }
    }

    /// The level names castd and castc take, `verbose` among them; a bad one names them all.
    @Test func itTakesCastdsLevelNamesAndSaysItsVersion() async throws {
        let bad = try await run("cast-mpris", ["--log-level", "loud"])
        #expect(
            bad.status == 64 && bad.stderr.contains("give verbose, debug, info, notice, warning, error or critical"))
        let version = try await run("cast-mpris", ["--version"])
        #expect(version.status == 0 && !version.stdout.isEmpty, "\(version)")
        let castc = try await run("castc", ["--version"])
        #expect(castc.status == 0 && castc.stdout == version.stdout, "one version for every program: \(castc)")
        // verbose is accepted: the failure that follows is the missing bus, not the flag.
        try await withTemporaryDirectory { directory in
            let verbose = try await run(
                "cast-mpris", ["--log-level", "verbose"],
                environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(directory)/no-bus"])
            #expect(verbose.status == 69, "\(verbose)")
        }
    }
}
