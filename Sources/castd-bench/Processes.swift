import CastdSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where a spawned process's standard stream goes.
enum StreamTarget: Sendable {
    case null
    case file(String)
    /// A pipe whose other end the parent keeps (`Spawned.stdin`, `.stdout`, `.stderr`).
    case pipe
}

/// Spawning processes with posix_spawn: a clean signal mask and dispositions, standard streams
/// as asked, and no other descriptor of this process (NIO's sockets are not close-on-exec; a
/// child holding an emulator's TLS socket would keep it open past its close).
enum Spawn {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The process's end of each pipe asked for, and the child's pid.
    struct Started {
        var pid: pid_t
        var stdin: Int32?
        var stdout: Int32?
        var stderr: Int32?
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    /// glibc ≥ 2.34 has it; Swift's Glibc module does not declare it (it is a GNU extension).
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    static func start(
        _ argv: [String], environment: [String: String]? = nil,
        stdin: StreamTarget = .null, stdout: StreamTarget = .null, stderr: StreamTarget = .null
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
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    /// One run of a short command, timed from just before posix_spawn to just after waitpid
    /// returned, in the calling thread (the driver calls it on a thread of its own, never on the
    /// cooperative pool).
    struct TimedRun: Sendable {
        var started: UInt64
        var exited: UInt64
        var status: Int32
        var elapsed: UInt64 { exited - started }
    }

    static func timed(
        _ argv: [String], environment: [String: String]? = nil, stdout: StreamTarget = .null,
        stderr: StreamTarget = .null
    ) throws -> TimedRun {
        let started = monotonicNanos()
        let child = try start(argv, environment: environment, stdout: stdout, stderr: stderr)
        let status = wait(child.pid)
        return TimedRun(started: started, exited: monotonicNanos(), status: status)
    }
}

/// Runs `body` on a thread of its own and returns its result: for blocking work (waitpid,
/// blocking socket I/O, sleeping between samples) that must not hold one of the cooperative
/// pool's few threads (two on this machine).
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// A long-running child (castd, a Python peer, avahi-publish): reaped by a thread of its own,
/// stopped with SIGTERM, then SIGKILL.
final class LongProcess: Sendable {
    let name: String
    let pid: pid_t
    let stdin: Int32?
    let stdout: Int32?
    let stderr: Int32?
    let logPath: String?
    private let exit = Locked<(status: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))

    init(
        _ argv: [String], environment: [String: String]? = nil, log: String? = nil,
        stdin: StreamTarget = .null, stdout: StreamTarget? = nil, stderr: StreamTarget? = nil
    ) throws {
        name = (argv[0] as NSString).lastPathComponent
        logPath = log
        let logTarget: StreamTarget = log.map { .file($0) } ?? .null
        let started = try Spawn.start(
            argv, environment: environment, stdin: stdin, stdout: stdout ?? logTarget, stderr: stderr ?? logTarget)
        pid = started.pid
        self.stdin = started.stdin
        self.stdout = started.stdout
        self.stderr = started.stderr
        let pid = started.pid
        Thread.detachNewThread { [self] in
            let status = Spawn.wait(pid)
            let waiters = self.exit.withLock { state in
                state.status = status
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: status) }
        }
    }

    var isRunning: Bool { exit.withLock { $0.status == nil } }
    var exitStatus: Int32? { exit.withLock { $0.status } }

    func waitForExit() async -> Int32 {
        await withCheckedContinuation { continuation in
            let status = exit.withLock { state -> Int32? in
                if let status = state.status { return status }
                state.waiters.append(continuation)
                return nil
            }
            if let status { continuation.resume(returning: status) }
        }
    }

    /// The exit status, or nil if it is still running after `timeout`.
    func waitForExit(timeout: Duration) async -> Int32? {
        await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await self.waitForExit() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
    }

    func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// SIGTERM, then SIGKILL after `grace`; returns once it has exited. Its pipes stay open
    /// (a thread may still be reading one to its end): `closePipes()` closes them.
    func stop(grace: Duration = .seconds(5)) async {
        guard isRunning else { return }
        signal(SIGTERM)
        if await waitForExit(timeout: grace) == nil {
            signal(SIGKILL)
            _ = await waitForExit()
        }
    }

    func closePipes() {
        for fd in [stdin, stdout, stderr] { if let fd { close(fd) } }
    }

    /// The last lines of its log, for error messages.
    func logTail(lines: Int = 15) -> String {
        guard let logPath, let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return "" }
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }
}

/// Reads lines from a descriptor, blocking: for a child's pipe, on a thread of its own.
final class LineReader: @unchecked Sendable {
    // @unchecked: used from one thread at a time (the thread that owns the read loop).
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) {
        self.fd = fd
    }

    /// The next line without its newline, or nil at end of file.
    func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                guard !buffer.isEmpty else { return nil }
                defer { buffer = [] }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer += chunk[..<count]
        }
    }
}

/// Writes all of `text` to `fd`.
func writeAll(_ fd: Int32, _ text: String) -> Bool {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 && errno == EINTR { continue }
        if written <= 0 { return false }
        offset += written
    }
    return true
}
