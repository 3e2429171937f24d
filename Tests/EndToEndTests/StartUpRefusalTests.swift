import CastTestSupport
import CastdAPI
import Foundation
import SwiftProtobuf
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What castd refuses to start with, as a process (SECURITY.md: the self-bound socket and
/// running as root): it names the problem, exits, and leaves everything it found as it was.
@Suite(.serialized)
struct StartUpRefusalTests {
    static let castdPath = productsDirectory.appendingPathComponent("castd").path
    /// A uid (and gid) that exists only in these tests.
    static let other: UInt32 = 4242

    static func accepts(_ path: String) -> Bool {
        guard let fd = try? unixSocket(Int32(SOCK_STREAM.rawValue), path: path) else { return false }
        close(fd)
        return true
    }

    /// castd on `socket`, with nothing else of the machine's: no discovery, no state, an empty
    /// configuration file (made in the socket's directory, so that it goes with it).
    static func arguments(_ socket: String, mode: String = "user") -> [String] {
        let config = (socket as NSString).deletingLastPathComponent + "/empty-castd.toml"
        if !FileManager.default.fileExists(atPath: config) {
            _ = FileManager.default.createFile(atPath: config, contents: Data(), attributes: [.posixPermissions: 0o644])
        }
        return ["--mode", mode, "--socket", socket, "--no-discovery", "--state-directory", "", "--config", config]
    }

    // MARK: running as root

    @Test(.enabled(if: geteuid() == 0 || runningInCI, "needs root: castd refuses root in system mode"))
    func castdDoesNotRunAsRootInSystemMode() async throws {
        try await withTemporaryDirectory { directory in
            let socket = directory + "/castd.sock"
            let state = directory + "/state"
            let explicit = try await run(
                "castd", ["--mode", "system", "--socket", socket, "--no-discovery", "--state-directory", state])
            #expect(explicit.status == 78, "EX_CONFIG: \(explicit)")
            #expect(explicit.stderr.contains("castd: refusing to run as root in --mode system"), "\(explicit)")
            #expect(explicit.stderr.contains("User=castd") && explicit.stderr.contains("--mode user"), "\(explicit)")
            #expect(!FileManager.default.fileExists(atPath: socket) && !FileManager.default.fileExists(atPath: state))

            // The mode castd picks when none is given: system, without a login session.
            let detected = try await run(
                "/usr/bin/env",
                [
                    "-u", "XDG_RUNTIME_DIR", Self.castdPath, "--socket", socket, "--no-discovery", "--state-directory",
                    state,
                ])
            #expect(detected.status == 78, "\(detected)")
            #expect(
                detected.stderr.contains("castd: refusing to run as root in system mode ($XDG_RUNTIME_DIR is not set)"),
                "\(detected)")
            #expect(!FileManager.default.fileExists(atPath: socket))

            // Checking the configuration and naming the socket serve nothing: still allowed
            // (scripts/verify-units.sh asks castd --mode system for its socket path as root).
            let path = try await run("castd", ["--mode", "system", "--print-socket-path"])
            #expect(path.status == 0 && path.stdout == "/run/castd/castd.sock\n", "\(path)")
            _ = FileManager.default.createFile(atPath: directory + "/castd.toml", contents: Data())
            let check = try await run(
                "castd", ["--mode", "system", "--check-config", "--config", directory + "/castd.toml"])
            #expect(check.status == 0 && check.stdout.contains("mode = system"), "\(check)")
            // … noting that castd started so would refuse, with the commands that work.
            #expect(
                check.stdout.contains("would refuse to run")
                    && check.stdout.contains("castd --mode user --socket /run/castd/castd.sock"), "\(check)")
        }
    }

    @Test(.enabled(if: geteuid() == 0 || runningInCI, "needs root to run castd as another uid"))
    func anUnprivilegedUserMayRunCastdInSystemMode() async throws {
        try await withTemporaryDirectory { directory in
            // The socket's directory belongs to that user, as /run/castd belongs to castd.
            let runtime = directory + "/run"
            mkdir(runtime, 0o755)
            chown(runtime, Self.other, Self.other)
            let socket = runtime + "/castd.sock"
            let castd = try ChildProcess(
                "/usr/bin/setpriv",
                ["--reuid", "\(Self.other)", "--regid", "\(Self.other)", "--clear-groups", Self.castdPath]
                    + Self.arguments(socket, mode: "system"),
                directory: directory)
            defer { castd.signal(SIGKILL) }
            try await eventually("castd as uid \(Self.other) to serve") {
                try castd.checkRunning()
                return Self.accepts(socket)
            }
            let status = try await run(
                "/usr/bin/setpriv",
                ["--reuid", "\(Self.other)", "--regid", "\(Self.other)", "--clear-groups"]
                    + [productsDirectory.appendingPathComponent("castc").path, "status", "--json"],
                environment: ["CASTD_SOCKET": socket])
            #expect(status.status == 0, "\(status)")
            var options = JSONDecodingOptions()
            options.ignoreUnknownFields = true
            let parsed = try CastdStatusResponse(jsonString: status.stdout, options: options)
            #expect(parsed.daemon.mode == "system" && parsed.daemon.uid == Self.other, "\(parsed.daemon)")
        }
    }

    // MARK: the socket castd binds itself

    @Test func aSecondCastdOnASocketInUseStopsWithAClearError() async throws {
        try await withTemporaryDirectory { directory in
            let socket = directory + "/castd.sock"
            let first = try ChildProcess("castd", Self.arguments(socket), directory: directory)
            defer { first.signal(SIGKILL) }
            try await eventually("the first castd to serve") {
                try first.checkRunning()
                return Self.accepts(socket)
            }
            let second = try await run("castd", Self.arguments(socket))
            #expect(second.status == 1, "\(second)")
            #expect(second.stderr.contains("another castd is already serving \(socket)"), "\(second)")
            #expect(first.isRunning && Self.accepts(socket), "the first castd still serves")
            #expect(try await run("castc", ["status"], environment: ["CASTD_SOCKET": socket]).status == 0)
        }
    }

    @Test(.enabled(if: geteuid() == 0 || runningInCI, "needs root to run castd as another uid"))
    func aSocketCastdCannotProbeIsNotTakenForStale() async throws {
        try await withTemporaryDirectory { directory in
            // castd's user owns the directory, so it could remove what is in it; a server of
            // root's listens there on a socket castd's user may not connect to (EACCES).
            let runtime = directory + "/run"
            mkdir(runtime, 0o755)
            chown(runtime, Self.other, Self.other)
            let socket = runtime + "/castd.sock"
            let listener = try unixSocket(Int32(SOCK_STREAM.rawValue), path: socket, bindInstead: true)
            defer { close(listener) }
            #expect(listen(listener, 8) == 0)
            chmod(socket, 0o600)
            let result = try await run(
                "/usr/bin/setpriv",
                ["--reuid", "\(Self.other)", "--regid", "\(Self.other)", "--clear-groups", Self.castdPath]
                    + Self.arguments(socket))
            #expect(result.status == 1, "\(result)")
            #expect(
                result.stderr.contains(
                    "cannot tell whether \(socket) is in use: connecting to it failed (Permission denied); castd leaves it alone"
                ),
                "\(result)")
            #expect(Self.accepts(socket), "root's server still has its socket")
        }
    }

    @Test func aLinkAtTheSocketPathStopsCastdAndWhatItPointsAtIsUntouched() async throws {
        try await withTemporaryDirectory { directory in
            let socket = directory + "/castd.sock"
            let target = directory + "/target"
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: target))
            symlink(target, socket)
            let result = try await run("castd", Self.arguments(socket))
            #expect(result.status == 1, "\(result)")
            #expect(
                result.stderr.contains("\(socket) is a symbolic link, not a socket; castd leaves it alone"), "\(result)"
            )
            #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me")
            var info = stat()
            #expect(lstat(socket, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "the link is still there")
        }
    }

    @Test func aDirectoryAnyoneMayWriteStopsCastd() async throws {
        try await withTemporaryDirectory { directory in
            let open = directory + "/open"
            mkdir(open, 0o700)
            chmod(open, 0o777)
            let result = try await run("castd", Self.arguments(open + "/castd.sock"))
            #expect(result.status == 1, "\(result)")
            #expect(
                result.stderr.contains("its directory \(open) may be written by anyone (mode 0777, not sticky)"),
                "\(result)")
            #expect(!FileManager.default.fileExists(atPath: open + "/castd.sock"))
        }
    }
}
