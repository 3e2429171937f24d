import CastdAPI
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The socket castd binds itself (when systemd does not pass it one): made so that it never
/// exists with a wider mode than the access policy's, given its group and mode without following
/// a link, and never at the cost of anything but a stale socket.
///
/// - The socket's directory, and every directory above it, must belong to castd's user or root
///   and must not be writable by group or others, unless its sticky bit is set (as on `/tmp`):
///   otherwise another user could rename the socket away, put a link or another socket in its
///   place, or swap the directory, between castd's checks and its use of the name. A sticky
///   directory lets others create names in it but not remove or rename castd's; a name someone
///   took first is refused like any other (below).
/// - What is at the path already: nothing, or a socket no one accepts on (`ECONNREFUSED`: a
///   stale one, removed), is fine. A socket someone serves is refused ("another castd is already
///   serving"); a socket castd cannot probe (`EACCES`, …), a link, a file or a directory is
///   refused and left alone.
/// - The mode is set on the socket before `bind`: Linux creates an `AF_UNIX` socket's file with
///   the mode of the socket's inode less the umask, so `fchmod` on the unbound socket decides it
///   without touching the process-wide umask (which other threads' files would feel). Only the
///   owner's bits are given at first; then the group and the full mode are set by name relative
///   to the checked directory, without following a link (`fchownat`/`fchmodat` with
///   `AT_SYMLINK_NOFOLLOW`), and only then does the socket listen. The file's owner cannot be
///   set on the socket beforehand: `fchown` on a socket changes only the socket's own uid, and
///   the file gets castd's.
package enum SelfBoundSocket {
    /// Binds `path` with `permissions` and listens on it; the listening descriptor. `afterBind`
    /// runs right after `bind(2)`, before the group and mode are given (tests look at the file
    /// there).
    package static func listen(
        at path: String, permissions: (mode: mode_t, group: UInt32?), backlog: Int32 = 256,
        afterBind: (String) -> Void = { _ in }
    ) throws(CastdError) -> Int32 {
        let (directory, name) = split(path)
        try makeDirectory(directory, private: permissions.mode & 0o077 == 0)
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else {
            throw CastdError(.unavailable, "cannot open \(directory), the socket's directory: \(errorText())")
        }
        defer { close(directoryFD) }
        try checkDirectories(of: path, directory: directory, directoryFD: directoryFD)
        try clearTheWay(path, directoryFD: directoryFD, name: name)

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CastdError(.unavailable, "cannot make a socket for \(path): \(errorText())") }
        var bound = false
        do throws(CastdError) {
            // The owner's bits only, until the group is right (see above).
            guard fchmod(fd, permissions.mode & 0o700) == 0 else {
                throw CastdError(.unavailable, "cannot set the mode of the socket for \(path): \(errorText())")
            }
            try bind(fd, path)
            bound = true
            afterBind(path)
            try giveOwnership(path, directoryFD: directoryFD, name: name, permissions: permissions)
            guard Glibc.listen(fd, backlog) == 0 else {
                throw CastdError(.unavailable, "cannot listen on \(path): \(errorText())")
            }
            return fd
        } catch {
            close(fd)
            if bound { unlinkat(directoryFD, name, 0) }
            throw error
        }
    }

    /// Removes the socket castd served at `path`, if a socket of castd's user is still there.
    package static func remove(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK, info.st_uid == geteuid() else { return }
        unlink(path)
    }

    // MARK: the steps

    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    /// Creates the socket's directory if it is missing: `0700` when only castd's user may use the
    /// socket, else `0755` (the group or others must pass through it to reach the socket).
    static func makeDirectory(_ directory: String, private: Bool) throws(CastdError) {
        var info = stat()
        if stat(directory, &info) == 0 { return }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: `private` ? 0o700 : 0o755])
        } catch {
            throw CastdError(.unavailable, "cannot create \(directory) for the socket: \(error.localizedDescription)")
        }
    }

    /// The socket's directory and those above it: owned by castd's user or root, and writable
    /// by no one else unless sticky.
    static func checkDirectories(of path: String, directory: String, directoryFD: Int32) throws(CastdError) {
        var info = stat()
        guard fstat(directoryFD, &info) == 0 else {
            throw CastdError(.unavailable, "cannot inspect \(directory), the socket's directory: \(errorText())")
        }
        if let problem = problem(with: info) {
            throw CastdError(
                .failedPrecondition,
                "castd will not serve \(path): its directory \(directory) \(problem); use a directory only castd's user (or root) can write, such as $XDG_RUNTIME_DIR or /run/castd"
            )
        }
        try checkLinks(in: directory, path: path)
        // Above it, by the real path: a directory another user may write could have the whole
        // subtree swapped under castd.
        guard let resolved = realpath(directory, nil) else {
            throw CastdError(.unavailable, "cannot resolve \(directory), the socket's directory: \(errorText())")
        }
        var current = String(cString: resolved)
        free(resolved)
        while current != "/" {
            let (parent, _) = split(current)
            current = parent
            var above = stat()
            guard stat(current, &above) == 0 else {
                throw CastdError(
                    .unavailable, "cannot inspect \(current), above the socket's directory: \(errorText())")
            }
            if let problem = problem(with: above) {
                throw CastdError(
                    .failedPrecondition,
                    "castd will not serve \(path): \(current), above its directory, \(problem); use a directory only castd's user (or root) can write, such as $XDG_RUNTIME_DIR or /run/castd"
                )
            }
        }
    }

    /// Each component of `directory` as written: a symbolic link among them must belong to
    /// castd's user or root. The real path's directories are checked too, but a link another
    /// user made (in a sticky directory such as /tmp, where anyone may) decides where that
    /// real path goes: castd would serve, and remove a stale socket, wherever they chose.
    static func checkLinks(in directory: String, path: String) throws(CastdError) {
        var prefix = ""
        if !directory.hasPrefix("/") {
            guard let cwd = getcwd(nil, 0) else {
                throw CastdError(.unavailable, "cannot resolve \(directory), the socket's directory: \(errorText())")
            }
            prefix = String(cString: cwd)
            free(cwd)
        }
        for component in directory.split(separator: "/") where component != "." {
            prefix += "/" + component
            var info = stat()
            guard lstat(prefix, &info) == 0 else {
                throw CastdError(.unavailable, "cannot inspect \(prefix), on the way to the socket: \(errorText())")
            }
            guard info.st_mode & S_IFMT == S_IFLNK, info.st_uid != geteuid(), info.st_uid != 0 else { continue }
            let owner = info.st_uid
            throw CastdError(
                .failedPrecondition,
                "castd will not serve \(path): \(prefix) is a symbolic link that belongs to \(PeerCredentials.userName(owner).map { "\($0) (uid \(owner))" } ?? "uid \(owner)"), not to castd's user or root; use a directory only castd's user (or root) can write, such as $XDG_RUNTIME_DIR or /run/castd"
            )
        }
    }

    /// Why a directory is no place for castd's socket, or nil.
    static func problem(with info: stat) -> String? {
        let owner = info.st_uid
        if owner != geteuid() && owner != 0 {
            return
                "belongs to \(PeerCredentials.userName(owner).map { "\($0) (uid \(owner))" } ?? "uid \(owner)"), not to castd's user or root"
        }
        let mode = info.st_mode
        if mode & 0o022 != 0, mode & S_ISVTX == 0 {
            let who = mode & 0o002 != 0 ? "anyone" : "its group"
            return "may be written by \(who) (mode 0\(String(mode & 0o7777, radix: 8)), not sticky)"
        }
        return nil
    }

    /// Makes room for the socket: nothing there, or a stale socket (removed). Anything else is
    /// refused and left as it is.
    static func clearTheWay(_ path: String, directoryFD: Int32, name: String) throws(CastdError) {
        var info = stat()
        guard fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return }
            throw CastdError(.unavailable, "cannot inspect \(path): \(errorText())")
        }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFSOCK else {
            throw CastdError(
                .failedPrecondition,
                "\(path) is \(describe(kind)), not a socket; castd leaves it alone: remove it or choose another socket (--socket)"
            )
        }
        switch probe(path) {
        case 0:
            throw CastdError(.alreadyExists, "another castd is already serving \(path)")
        case ECONNREFUSED:
            // No one listens: a socket left by a castd that is gone.
            guard unlinkat(directoryFD, name, 0) == 0 || errno == ENOENT else {
                throw CastdError(.unavailable, "cannot remove the stale socket \(path): \(errorText())")
            }
        case ENOENT:
            return  // gone meanwhile
        case let error:
            throw CastdError(
                .failedPrecondition,
                "cannot tell whether \(path) is in use: connecting to it failed (\(String(cString: strerror(error)))); castd leaves it alone: remove it if no castd serves it, or choose another socket (--socket)"
            )
        }
    }

    /// `connect(2)` to `path`: 0 if something accepts there, else the errno. Non-blocking, so a
    /// server with a full backlog cannot hold castd up (`EAGAIN`: it is being served).
    static func probe(_ path: String) -> Int32 {
        let fd = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        guard var address = socketAddress(path) else { return ENAMETOOLONG }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result == 0 || errno == EAGAIN { return 0 }
        return errno
    }

    static func bind(_ fd: Int32, _ path: String) throws(CastdError) {
        guard var address = socketAddress(path) else {
            throw CastdError(.invalidArgument, "\(path) is longer than a Unix socket path may be (107 bytes)")
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            if errno == EADDRINUSE {
                throw CastdError(.alreadyExists, "something else created \(path) while castd was binding it")
            }
            throw CastdError(.unavailable, "cannot bind \(path): \(errorText())")
        }
    }

    /// Gives the socket castd just bound its group and mode, by name within the checked
    /// directory and without following a link, once it is sure the name is still its socket.
    static func giveOwnership(
        _ path: String, directoryFD: Int32, name: String, permissions: (mode: mode_t, group: UInt32?)
    ) throws(CastdError) {
        var info = stat()
        guard fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFSOCK,
            info.st_uid == geteuid()
        else {
            throw CastdError(.unavailable, "\(path) is not the socket castd just bound there")
        }
        if let group = permissions.group, fchownat(directoryFD, name, uid_t.max, group, AT_SYMLINK_NOFOLLOW) != 0 {
            throw CastdError(
                .permissionDenied,
                "cannot give \(path) to group \(CastdServer.groupNames([group])): \(errorText()) (castd's user must be root or a member of it)"
            )
        }
        var changed = fchmodat(directoryFD, name, permissions.mode, AT_SYMLINK_NOFOLLOW)
        if changed != 0 && (errno == EOPNOTSUPP || errno == ENOTSUP) {
            // No way to change a mode without following links here (a kernel without
            // fchmodat2 and no /proc for glibc's fallback). The name was checked to be castd's
            // socket just now, in a directory no one else may write.
            changed = fchmodat(directoryFD, name, permissions.mode, 0)
        }
        guard changed == 0 else {
            throw CastdError(.permissionDenied, "cannot set the mode of \(path): \(errorText())")
        }
    }

    static func socketAddress(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    static func describe(_ kind: mode_t) -> String {
        switch kind {
        case S_IFLNK: "a symbolic link"
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR, S_IFBLK: "a device file"
        default: "not a socket"
        }
    }

    static func errorText() -> String { String(cString: strerror(errno)) }
}
