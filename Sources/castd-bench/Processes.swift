import CastdSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Spawn {
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
        _ argv: [String], environment: [String: String]? = nil, stdout: Spawn.Target = .null,
        stderr: Spawn.Target = .null
    ) throws -> TimedRun {
        let started = monotonicNanos()
        let child = try start(argv, environment: environment, stdout: stdout, stderr: stderr)
        let status = wait(child.pid)
        return TimedRun(started: started, exited: monotonicNanos(), status: status)
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
        stdin: Spawn.Target = .null, stdout: Spawn.Target? = nil, stderr: Spawn.Target? = nil
    ) throws {
        name = (argv[0] as NSString).lastPathComponent
        logPath = log
        let logTarget: Spawn.Target = log.map { .file($0) } ?? .null
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
