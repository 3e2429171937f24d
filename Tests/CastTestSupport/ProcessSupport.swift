import Foundation

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

/// A child process whose output goes to files, ended (SIGTERM, then SIGKILL) by `stop()`.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: `process` is configured before launch and only read after; Foundation's
    // Process is thread-safe for terminate / isRunning / terminationStatus.
    public let name: String
    public let stdoutPath: String
    public let stderrPath: String
    private let process = Process()
    private let exited = AsyncStream<Int32>.makeStream()

    /// Launches `executable` (a name in `productsDirectory`, or a path) with `arguments`.
    public init(
        _ executable: String, _ arguments: [String], directory: String, environment: [String: String] = [:]
    ) throws {
        name = (executable as NSString).lastPathComponent
        let tag = name + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        stdoutPath = directory + "/\(tag).out"
        stderrPath = directory + "/\(tag).err"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL =
            executable.contains("/") ? URL(fileURLWithPath: executable) : productsDirectory.appendingPathComponent(executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        process.standardInput = FileHandle.nullDevice
        let continuation = exited.continuation
        process.terminationHandler = { process in
            continuation.yield(process.terminationStatus)
            continuation.finish()
        }
        try process.run()
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }
    public var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    public func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// The exit status, waiting up to `timeout`.
    public func waitForExit(timeout: Duration = .seconds(15)) async throws -> Int32 {
        try await withThrowingTaskGroup(of: Int32.self) { group in
            group.addTask { [exited] in
                for await status in exited.stream { return status }
                // The stream ended without a status: cancelled, or an earlier wait took it.
                guard !self.process.isRunning else { throw CancellationError() }
                return self.process.terminationStatus
            }
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
        guard process.isRunning else { return }
        signal(SIGTERM)
        if (try? await waitForExit(timeout: grace)) == nil {
            signal(SIGKILL)
            _ = try? await waitForExit(timeout: .seconds(5))
        }
    }
}

/// Runs `body` with processes it starts through `launch`, and stops them all afterwards.
public func withProcesses<T>(
    _ body: (_ launch: (String, [String], [String: String]) throws -> ChildProcess) async throws -> T
) async throws -> T {
    var started: [ChildProcess] = []
    defer {
        // Best effort when body threw; the normal path stops them below.
        for child in started where child.isRunning { child.signal(SIGKILL) }
    }
    let directory = NSTemporaryDirectory()
    let result = try await body { executable, arguments, environment in
        let child = try ChildProcess(executable, arguments, directory: directory, environment: environment)
        started.append(child)
        return child
    }
    for child in started.reversed() { await child.stop() }
    return result
}

/// The result of running a command to completion.
public struct CommandResult: Sendable, CustomStringConvertible {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
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
