import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Spawning processes with posix_spawn: a clean signal mask and dispositions, standard streams
/// as asked, and no other descriptor of this process. NIO's sockets are not close-on-exec: a
/// child that inherited one keeps the connection open after this process closes it, so its peer
/// sees no end until the child exits (a castd client's connection then stays counted against its
/// uid's limit; an emulator's TLS socket stays open past its close). Every process the project
/// starts, in its tools and its tests, is started here.
public enum Spawn {
    /// Where a spawned process's standard stream goes.
    public enum Target: Sendable {
        case null
        case file(String)
        /// A pipe whose other end the parent keeps (`Started.stdin`, `.stdout`, `.stderr`).
        case pipe
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The process's end of each pipe asked for, and the child's pid.
    public struct Started: Sendable {
        public var pid: pid_t
        public var stdin: Int32?
        public var stdout: Int32?
        public var stderr: Int32?
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    /// glibc ≥ 2.34 has it; Swift's Glibc module does not declare it (it is a GNU extension).
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    public static func start(
        _ argv: [String], environment: [String: String]? = nil,
        stdin: Spawn.Target = .null, stdout: Spawn.Target = .null, stderr: Spawn.Target = .null
    ) throws -> Started {
        precondition(!argv.isEmpty)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = []
        for (fd, target) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch target {
            case .null:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .pipe:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                let (childEnd, parentEnd) = fd == 0 ? (ends[0], ends[1]) : (ends[1], ends[0])
                posix_spawn_file_actions_adddup2(&actions, childEnd, fd)
                childEnds.append(childEnd)
                parentEnds[Int(fd)] = parentEnd
            }
        }
        if let addCloseFrom { _ = addCloseFrom(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let result: Int32
        if let environment {
            let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { cEnvironment.forEach { free($0) } }
            result = posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
        } else {
            result = posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, environ)
        }
        for end in childEnds { close(end) }
        guard result == 0 else {
            for end in parentEnds { if let end { close(end) } }
            throw Failure(description: "cannot start \(argv[0]): \(String(cString: strerror(result)))")
        }
        return Started(pid: pid, stdin: parentEnds[0], stdout: parentEnds[1], stderr: parentEnds[2])
    }

    /// Waits for `pid` in this thread; returns the exit code, or 128 + the signal.
    public static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}
