import CastdSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Where `swift build` put this package's executables: beside the test bundle, or
/// `$CASTD_BIN_DIR`.
public let productsDirectory: URL = {
    if let dir = ProcessInfo.processInfo.environment["CASTD_BIN_DIR"] { return URL(fileURLWithPath: dir) }
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("castd").path) { return url }
    }
    return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug")
}()

/// The environment of the processes tests start: the test process's own, except that under
/// AddressSanitizer castd's processes check for leaks at exit (`CASTD_CHILD_ASAN_OPTIONS`, set by
/// scripts/swift-flags.sh) while the test runner does not; and that their artwork fetches may
/// reach the tests' image servers on loopback (`CASTD_ARTWORK_ALLOW_LOOPBACK=1`, the test-only
/// setting of `ArtworkFetcher.loopbackAllowedForTests`; SECURITY.md, G3.5).
public var childEnvironment: [String: String] {
    var environment = ProcessInfo.processInfo.environment
    if let options = environment["CASTD_CHILD_ASAN_OPTIONS"] { environment["ASAN_OPTIONS"] = options }
    environment["CASTD_ARTWORK_ALLOW_LOOPBACK"] = "1"
    return environment
}

/// A child process whose output goes to files, ended (SIGTERM, then SIGKILL) by `stop()`.
///
/// Spawned by `Spawn` and reaped by a thread of its own blocked in waitpid(pid): nothing else in
/// the test process can reap it first; the child starts with a clean signal mask and default
/// dispositions (a test runner's threads block signals; daemons must not inherit that) and
/// with none of the test process's descriptors (a castd client's socket, inherited by a castd
/// another test started, kept that client's connection open for 20 s after it closed it).
/// Foundation's Process lost exits of concurrently spawned children here, and passes every
/// descriptor on.
public final class ChildProcess: Sendable {
    public let name: String
    public let stdoutPath: String
    public let stderrPath: String
    public let pid: pid_t
    private let exit = Locked<ExitState>(ExitState())

    private struct ExitState {
        var status: Int32?
        var waiters: [(id: UUID, continuation: CheckedContinuation<Int32, Never>)] = []
    }

    /// Launches `executable` (a name in `productsDirectory`, or a path) with `arguments`.
    public init(
        _ executable: String, _ arguments: [String], directory: String, environment: [String: String] = [:]
    ) throws {
        name = (executable as NSString).lastPathComponent
        let tag = name + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        stdoutPath = directory + "/\(tag).out"
        stderrPath = directory + "/\(tag).err"
        let path = executable.contains("/") ? executable : productsDirectory.appendingPathComponent(executable).path
        var env = childEnvironment
        for (key, value) in environment { env[key] = value }

        let spawned = try Spawn.start(
            [path] + arguments, environment: env, stdin: .null, stdout: .file(stdoutPath), stderr: .file(stderrPath)
        ).pid
        pid = spawned
        Thread.detachNewThread { [self] in
            let code = Spawn.wait(spawned)  // the exit code, or 128 + the signal like a shell
            let waiters = self.exit.withLock { state -> [CheckedContinuation<Int32, Never>] in
                state.status = code
                defer { state.waiters.removeAll() }
                return state.waiters.map(\.continuation)
            }
            for waiter in waiters { waiter.resume(returning: code) }
        }
    }

    public var isRunning: Bool { exit.withLock { $0.status == nil } }
    public var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    public func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// The exit status; -1 if the waiting task is cancelled first (so that a timeout never
    /// leaves a task group waiting for an exit that does not come).
    private func exitStatus() async -> Int32 {
        let id = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let status = exit.withLock { state -> Int32? in
                    if let status = state.status { return status }
                    if Task.isCancelled { return -1 }
                    state.waiters.append((id, continuation))
                    return nil
                }
                if let status { continuation.resume(returning: status) }
            }
        } onCancel: {
            let waiter = exit.withLock { state -> CheckedContinuation<Int32, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: -1)
        }
    }

    /// The exit status, waiting up to `timeout`.
    public func waitForExit(timeout: Duration = .seconds(15)) async throws -> Int32 {
        let timeout = timeout.scaledForTests
        return try await withThrowingTaskGroup(of: Int32.self) { group in
            group.addTask { await self.exitStatus() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TimedOut(what: "\(self.name) to exit", timeout: timeout)
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// Ends the process: SIGTERM, then SIGKILL after `grace`.
    public func stop(grace: Duration = .seconds(5)) async {
        guard isRunning else { return }
        signal(SIGTERM)
        if (try? await waitForExit(timeout: grace)) == nil {
            signal(SIGKILL)
            _ = try? await waitForExit(timeout: .seconds(5))
        }
    }
}

/// A process a test waited on that exited first, with what it said on stderr.
public struct ProcessExited: Error, CustomStringConvertible {
    public var process: ChildProcess
    public init(_ process: ChildProcess) { self.process = process }
    public var description: String { "\(process.name) exited: \(process.stderr)" }
}

extension ChildProcess {
    /// Throws ``ProcessExited`` if the process is no longer running (for a test that polls for
    /// it to be ready: an exit is the answer, not a timeout).
    public func checkRunning() throws {
        guard isRunning else { throw ProcessExited(self) }
    }
}

/// Runs `body` with processes it starts through `launch`, and stops them all afterwards. Their
/// output files live in a directory of their own, removed afterwards (they are read through
/// `ChildProcess.stdout` and `.stderr` meanwhile): a run of the suite leaves nothing in /tmp.
public func withProcesses<T>(
    _ body: (_ launch: (String, [String], [String: String]) throws -> ChildProcess) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        var started: [ChildProcess] = []
        defer {
            // Best effort when body threw; the normal path stops them below.
            for child in started where child.isRunning { child.signal(SIGKILL) }
        }
        let result = try await body { executable, arguments, environment in
            let child = try ChildProcess(executable, arguments, directory: directory, environment: environment)
            started.append(child)
            return child
        }
        for child in started.reversed() { await child.stop() }
        return result
    }
}

/// The result of running a command to completion.
public struct CommandResult: Sendable, CustomStringConvertible {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
}

/// Expects `result` to be a success (exit 0); when it is not, the failure says what the command
/// printed (a sanitizer's report, castc's error), so that a failure seen once can be explained.
public func expectSuccess(_ result: CommandResult, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
}

/// Runs a short-lived command (e.g. castc) to completion.
public func run(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(20)
) async throws -> CommandResult {
    let directory = NSTemporaryDirectory()
    let child = try ChildProcess(executable, arguments, directory: directory, environment: environment)
    defer {
        try? FileManager.default.removeItem(atPath: child.stdoutPath)
        try? FileManager.default.removeItem(atPath: child.stderrPath)
    }
    do {
        let status = try await child.waitForExit(timeout: timeout)
        return CommandResult(status: status, stdout: child.stdout, stderr: child.stderr)
    } catch {
        child.signal(SIGKILL)
        throw error
    }
}

/// True if an avahi-daemon answers on this machine.
public func avahiIsRunning() async -> Bool {
    (try? await run("/usr/sbin/avahi-daemon", ["--check"], timeout: .seconds(5)).status) == 0
}
