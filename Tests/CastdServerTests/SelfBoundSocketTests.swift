import CastTestSupport
import CastdAPI
import CastdServer
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The socket castd binds itself (SECURITY.md, the self-bound socket): never wider than the
/// policy's mode, given its group and mode without following a link, and made only where no one
/// else may write, and only in place of nothing or a stale socket.
struct SelfBoundSocketTests {
    static func mode(_ path: String) -> (kind: mode_t, mode: mode_t, gid: UInt32)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (info.st_mode & S_IFMT, info.st_mode & 0o7777, info.st_gid)
    }

    /// A listening Unix socket at `path`, as another server would hold it.
    static func listener(at path: String) throws -> Int32 {
        let fd = try unixSocket(Int32(SOCK_STREAM.rawValue), path: path, bindInstead: true)
        guard Glibc.listen(fd, 8) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        return fd
    }

    static func accepts(_ path: String) -> Bool {
        guard let fd = try? unixSocket(Int32(SOCK_STREAM.rawValue), path: path) else { return false }
        close(fd)
        return true
    }

    @Test func aLinkAtThePathIsRefusedAndWhatItPointsAtIsUntouched() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/castd.sock"
            // A link to a file: castd neither follows it nor removes it.
            let file = directory + "/precious"
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: file))
            chmod(file, 0o640)
            symlink(file, path)
            let refused = #expect(throws: CastdError.self) {
                try SelfBoundSocket.listen(at: path, permissions: (0o660, nil))
            }
            #expect(
                refused?.message.contains("\(path) is a symbolic link, not a socket") == true,
                "\(String(describing: refused))")
            #expect(Self.mode(path)?.kind == S_IFLNK, "the link is left")
            #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep me")
            #expect(Self.mode(file)?.mode == 0o640)

            // A link to a stale socket elsewhere: not taken for the socket either (castd once
            // removed the link and bound in its place).
            unlink(path)
            let elsewhere = directory + "/elsewhere.sock"
            close(try Self.listener(at: elsewhere))  // closed: stale
            symlink(elsewhere, path)
            #expect(throws: CastdError.self) { try SelfBoundSocket.listen(at: path, permissions: (0o600, nil)) }
            #expect(Self.mode(path)?.kind == S_IFLNK && Self.mode(elsewhere)?.kind == S_IFSOCK)
        }
    }

    @Test func aFileAtThePathIsRefusedNotDeleted() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/castd.sock"
            try Data("not a socket".utf8).write(to: URL(fileURLWithPath: path))
            let refused = #expect(throws: CastdError.self) {
                try SelfBoundSocket.listen(at: path, permissions: (0o600, nil))
            }
            #expect(
                refused?.message.contains("is a regular file, not a socket; castd leaves it alone") == true,
                "\(String(describing: refused))")
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "not a socket")

            let subdirectory = directory + "/dir.sock"
            mkdir(subdirectory, 0o755)
            let alsoRefused = #expect(throws: CastdError.self) {
                try SelfBoundSocket.listen(at: subdirectory, permissions: (0o600, nil))
            }
            #expect(alsoRefused?.message.contains("is a directory") == true)
        }
    }

    @Test func aSocketSomeoneServesIsRefusedAndAStaleOneReplaced() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/castd.sock"
            let live = try Self.listener(at: path)
            let refused = #expect(throws: CastdError.self) {
                try SelfBoundSocket.listen(at: path, permissions: (0o600, nil))
            }
            #expect(refused?.code == .alreadyExists)
            #expect(refused?.message == "another castd is already serving \(path)")
            #expect(Self.accepts(path), "the server there is untouched")

            close(live)  // its file stays: a stale socket
            #expect(!Self.accepts(path) && Self.mode(path)?.kind == S_IFSOCK)
            let fd = try SelfBoundSocket.listen(at: path, permissions: (0o600, nil))
            defer { close(fd) }
            #expect(Self.accepts(path), "castd's socket replaced the stale one")
        }
    }

    @Test func theSocketIsNeverWiderThanThePolicyAndEndsExactlyAsIt() async throws {
        try await withTemporaryDirectory { directory in
            // Several groups: 0666 in the end (castd checks each peer); a umask the test process
            // has (often 022) would narrow it, so castd sets the mode after bind too.
            for (mode, group) in [(mode_t(0o600), UInt32?.none), (0o660, 4301), (0o666, nil)] {
                let path = directory + "/castd-\(String(mode, radix: 8)).sock"
                var atBind: (kind: mode_t, mode: mode_t, gid: UInt32)?
                let fd = try SelfBoundSocket.listen(at: path, permissions: (mode, group)) { atBind = Self.mode($0) }
                defer { close(fd) }
                // Right after bind(2), before its group is set: the owner's bits only. Without
                // the mode set on the socket before bind, the file starts as 0777 less the
                // umask (0755 under umask 022), open to everyone the umask lets through.
                #expect(atBind?.kind == S_IFSOCK)
                #expect(atBind.map { $0.mode & ~0o600 } == 0, "mode at bind: \(String(atBind?.mode ?? 0, radix: 8))")
                let final = try #require(Self.mode(path))
                #expect(final.mode == mode, "final mode \(String(final.mode, radix: 8))")
                if let group { #expect(final.gid == group) }
            }
        }
    }

    @Test func aDirectoryOthersMayWriteIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            for (mode, who) in [(mode_t(0o777), "anyone"), (0o775, "its group")] {
                let open = directory + "/open-\(String(mode, radix: 8))"
                mkdir(open, 0o700)
                chmod(open, mode)
                let path = open + "/castd.sock"
                let refused = #expect(throws: CastdError.self) {
                    try SelfBoundSocket.listen(at: path, permissions: (0o600, nil))
                }
                #expect(refused?.code == .failedPrecondition)
                #expect(
                    refused?.message.contains(
                        "its directory \(open) may be written by \(who) (mode 0\(String(mode, radix: 8)), not sticky)")
                        == true, "\(String(describing: refused))")
                #expect(Self.mode(path) == nil, "nothing was created")

                // Further down, in a directory of castd's own: the one above could still swap it.
                let inner = open + "/inner"
                mkdir(inner, 0o755)
                let below = #expect(throws: CastdError.self) {
                    try SelfBoundSocket.listen(at: inner + "/castd.sock", permissions: (0o600, nil))
                }
                #expect(
                    below?.message.contains("\(open), above its directory, may be written by \(who)") == true,
                    "\(String(describing: below))")
            }

            // Another user's directory.
            let theirs = directory + "/theirs"
            mkdir(theirs, 0o755)
            chown(theirs, 4242, 4242)
            let notOurs = #expect(throws: CastdError.self) {
                try SelfBoundSocket.listen(at: theirs + "/castd.sock", permissions: (0o600, nil))
            }
            #expect(
                notOurs?.message.contains("belongs to uid 4242, not to castd's user or root") == true,
                "\(String(describing: notOurs))")

            // Sticky, as /tmp is: others may add names but not remove or rename castd's.
            let sticky = directory + "/sticky"
            mkdir(sticky, 0o700)
            chmod(sticky, 0o1777)
            let fd = try SelfBoundSocket.listen(at: sticky + "/castd.sock", permissions: (0o600, nil))
            close(fd)
        }
    }

    /// A link on the way to the socket that another user owns (anyone may make one in /tmp) is
    /// refused, though what it points at is castd's own; one of castd's user or root is not.
    /// (Before, only the resolved path was checked.)
    @Test func aLinkOnTheWayThatAnotherUserOwnsIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let sticky = directory + "/tmp"
            mkdir(sticky, 0o700)
            chmod(sticky, 0o1777)
            let target = directory + "/castds-own"
            mkdir(target, 0o700)
            let theirs = sticky + "/theirs"
            symlink(target, theirs)
            lchown(theirs, 4242, 4242)
            let refused = #expect(throws: CastdError.self) {
                try SelfBoundSocket.listen(at: theirs + "/castd.sock", permissions: (0o600, nil))
            }
            #expect(refused?.code == .failedPrecondition)
            #expect(
                refused?.message.contains("\(theirs) is a symbolic link that belongs to uid 4242") == true,
                "\(String(describing: refused))")
            #expect(Self.mode(target + "/castd.sock") == nil, "nothing was created where the link points")

            // The same link, castd's own: served.
            let ours = sticky + "/ours"
            symlink(target, ours)
            let fd = try SelfBoundSocket.listen(at: ours + "/castd.sock", permissions: (0o600, nil))
            close(fd)
            #expect(Self.mode(target + "/castd.sock")?.kind == S_IFSOCK)
        }
    }

    @Test func aMissingDirectoryIsMadePrivateUnlessGroupsMustReachTheSocket() async throws {
        try await withTemporaryDirectory { directory in
            let fd = try SelfBoundSocket.listen(at: directory + "/private/castd.sock", permissions: (0o600, nil))
            close(fd)
            #expect(Self.mode(directory + "/private")?.mode == 0o700)
            let shared = try SelfBoundSocket.listen(at: directory + "/shared/castd.sock", permissions: (0o660, 4301))
            close(shared)
            // 0755 less the umask: never more.
            #expect(Self.mode(directory + "/shared").map { $0.mode & ~0o755 } == 0)
        }
    }
}
