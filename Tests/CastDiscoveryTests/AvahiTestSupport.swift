import CastdSupport
import CastDiscovery
import CastTestSupport
import Foundation
import Logging
import Testing

/// Helpers for the tests that use the real Avahi daemon on loopback
/// (start it with `scripts/avahi-loopback.sh start DIR`).

let avahiHint = "start it with `scripts/avahi-loopback.sh start DIR` (see MDNS-RECIPE.md)"

func testLogger(_ label: String) -> Logger {
    var logger = Logger(label: "castd.tests.\(label)")
    let level = ProcessInfo.processInfo.environment["CASTD_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:))
    logger.logLevel = level ?? .warning
    return logger
}

/// A unique name for things a test publishes, so that tests running in parallel on the one
/// shared Avahi daemon never see each other's services.
func uniqueName(_ prefix: String) -> String {
    "\(prefix) \(UUID().uuidString.prefix(8))"
}

struct TestError: Error, CustomStringConvertible {
    var description: String
}

/// Every event a browser reported, with waits that have deadlines.
final class EventLog: Sendable {
    private struct Waiter {
        var predicate: @Sendable (DiscoveryEvent) -> Bool
        var continuation: CheckedContinuation<DiscoveryEvent, any Error>
    }

    private struct State {
        var events: [DiscoveryEvent] = []
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private let state = Locked(State())

    var events: [DiscoveryEvent] {
        state.withLock { $0.events }
    }

    /// The events about one device (added, updated, removed), in order.
    func events(forDevice id: String) -> [DiscoveryEvent] {
        events.filter { $0.deviceID == id }
    }

    func append(_ event: DiscoveryEvent) {
        let ready = state.withLock { state in
            state.events.append(event)
            let matching = state.waiters.filter { $0.value.predicate(event) }
            for id in matching.keys {
                state.waiters[id] = nil
            }
            return matching.values.map(\.continuation)
        }
        for continuation in ready {
            continuation.resume(returning: event)
        }
    }

    /// The first event (already logged at `index` or later, or still to come) that matches,
    /// within `timeout`. `predicate` runs with the log locked: it must not use the log.
    @discardableResult
    func first(
        _ what: String, within timeout: Duration = .seconds(20), from index: Int = 0,
        where predicate: @escaping @Sendable (DiscoveryEvent) -> Bool
    ) async throws -> DiscoveryEvent {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withThrowingTaskGroup(of: DiscoveryEvent.self) { group in
            group.addTask {
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        let found: Result<DiscoveryEvent, any Error>? = self.state.withLock { state in
                            if let event = state.events.dropFirst(index).first(where: predicate) {
                                return .success(event)
                            }
                            if Task.isCancelled { return .failure(CancellationError()) }
                            state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                            return nil
                        }
                        if let found {
                            continuation.resume(with: found)
                        }
                    }
                } onCancel: {
                    self.state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(
                        throwing: CancellationError())
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TestError(description: "no \(what) within \(timeout); events so far: \(self.events)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
}

extension DiscoveryEvent {
    var deviceID: String? {
        switch self {
        case .added(let device), .updated(let device): device.id
        case .removed(let id): id
        case .available, .unavailable: nil
        }
    }

    var device: DiscoveredDevice? {
        switch self {
        case .added(let device), .updated(let device): device
        default: nil
        }
    }

    var kind: String {
        switch self {
        case .added: "added"
        case .updated: "updated"
        case .removed: "removed"
        case .available: "available"
        case .unavailable: "unavailable"
        }
    }
}

struct AvahiNotRunning: Error, CustomStringConvertible {
    var reason: String
    var description: String { "This test needs the Avahi daemon, which is unavailable (\(reason)): \(avahiHint)" }
}

/// Browses with a real `AvahiBrowser` while `body` runs; unless told otherwise, fails with a clear
/// message if Avahi is not running.
@discardableResult
func withBrowser<Result: Sendable>(
    retryInterval: Duration = .seconds(2), requireAvahi: Bool = true, logger: Logger = testLogger("browser"),
    _ body: @Sendable (EventLog) async throws -> Result
) async throws -> Result {
    let browser = AvahiBrowser(retryInterval: retryInterval, logger: logger)
    let log = EventLog()
    let stream = browser.events()
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            for await event in stream {
                log.append(event)
            }
        }
        defer { group.cancelAll() }
        let first = try await log.first("first event", within: .seconds(10)) { _ in true }
        if requireAvahi, case .unavailable(let reason) = first {
            throw AvahiNotRunning(reason: reason)
        }
        return try await body(log)
    }
}

/// A child process whose exit can be awaited with a deadline: CastTestSupport's ChildProcess
/// (posix_spawn, a clean signal state, its own reaper), killed when released.
final class Subprocess: Sendable {
    private let child: ChildProcess

    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw TestError(description: "\(executable) is missing")
        }
        child = try ChildProcess(
            executable, arguments, directory: NSTemporaryDirectory(), environment: environment ?? [:])
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(atPath: child.stdoutPath)
        try? FileManager.default.removeItem(atPath: child.stderrPath)
    }

    /// What the process wrote to standard output and standard error.
    var output: String { child.stdout + child.stderr }

    func kill() {
        child.signal(SIGKILL)
    }

    /// The exit status, waiting at most `timeout`.
    func exitStatus(within timeout: Duration) async throws -> Int32 {
        try await child.waitForExit(timeout: timeout)
    }
}

/// `avahi-publish -s NAME _googlecast._tcp PORT key=value…` as a subprocess.
final class AvahiPublishProcess: Sendable {
    let name: String
    private let process: Subprocess

    init(name: String, port: Int, txt: [String]) throws {
        let tool = "/usr/bin/avahi-publish"
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw AvahiNotRunning(reason: "\(tool) is missing (Debian package avahi-utils)")
        }
        self.name = name
        process = try Subprocess(tool, ["-s", name, "_googlecast._tcp", String(port)] + txt)
    }

    /// Kills avahi-publish; Avahi withdraws the service when its D-Bus client goes away. Does not
    /// wait: the tests wait for the browser's `.removed` instead.
    func stop() {
        process.kill()
    }
}
