import CastTestSupport
import Foundation
import Testing

/// castd raises its soft descriptor limit to the hard one at start-up (SECURITY.md, M3). A castd
/// process started by `prlimit` with a low soft limit: its own limits, as /proc shows them. (Not
/// in the test process: lowering its limit would starve the tests running beside this one.)
struct DescriptorLimitTests {
    /// The soft and hard "Max open files" of `pid`.
    static func openFileLimits(_ pid: pid_t) -> (soft: String, hard: String)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") })
        else { return nil }
        let fields = line.dropFirst("Max open files".count).split(separator: " ")
        guard fields.count >= 2 else { return nil }
        return (String(fields[0]), String(fields[1]))
    }

    @Test func castdRaisesItsSoftLimitToTheHardOne() async throws {
        try await withTemporaryDirectory { directory in
            let socket = directory + "/castd.sock"
            let castd = productsDirectory.appendingPathComponent("castd").path
            let process = try ChildProcess(
                "/usr/bin/prlimit",
                [
                    "--nofile=256:4096", "--", castd, "--mode", "user", "--socket", socket, "--no-discovery",
                    "--state-directory", "",
                ],
                directory: directory)
            defer { process.signal(SIGKILL) }
            // A start-up, not a timing check: generous, as the machine may be busy with other tests.
            try await eventually(timeout: processStartTimeout, "castd to answer") {
                try process.checkRunning()
                return try await run("castc", ["status"], environment: ["CASTD_SOCKET": socket]).status == 0
            }
            let limits = try #require(Self.openFileLimits(process.pid))
            #expect(limits.soft == "4096" && limits.hard == "4096", "\(limits)")
            #expect(process.stderr.contains("descriptor limit"), "\(process.stderr)")
            await process.stop()
        }
    }
}
