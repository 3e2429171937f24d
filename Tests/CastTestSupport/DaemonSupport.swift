import CastChannel
import CastClient
import CastCore
import CastdAPI
import CastdLogging
import CastdServer
import Foundation
import Logging

/// A temporary directory, removed after `body`.
public func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    // Unix socket paths are limited to 107 bytes: keep it short.
    let path = "/tmp/castd-test-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    // 0755 whatever the umask: castd refuses to bind a socket in a directory others may write
    // (SelfBoundSocket), and tests running castc as other uids must reach the socket.
    try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// An in-process castd: the real server on a real Unix socket in a temporary directory, the
/// real registry and device links, no discovery. `body` gets the socket path and the hub, once
/// the server listens and the registry knows `devices`.
/// Device links trust this process's emulators unless `linkConfiguration` says otherwise.
/// With `logs`, the daemon logs through them (as castd's subsystems) and serves its log methods;
/// without, it logs nothing and those methods answer FAILED_PRECONDITION.
public func withDaemon<T>(
    devices: [StaticDevice] = [],
    maximumFrameLength: Int = CastdRPC.defaultMaximumFrameLength,
    watcherQueueLimit: Int = 256,
    linkConfiguration: CastLinkConfiguration = .trustingEmulators(),
    stateDirectory: String? = nil,
    readCallLinkAttempts: Int = DeviceRegistry.readCallLinkAttempts,
    appAnswerDeadline: Duration = .seconds(5),
    configure: (inout CastdServerConfiguration) -> Void = { _ in },
    logs: CastdLogs? = nil,
    _ body: (_ socketPath: String, _ hub: CastdEventHub) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        let socketPath = directory + "/castd.sock"
        let logger = logs?.logger(CastdSubsystem.castDevice) ?? Logger.emulatorForTests(label: "castd")
        let hub = CastdEventHub(watcherQueueLimit: watcherQueueLimit)
        let registry = DeviceRegistry(
            hub: hub, staticDevices: devices, discovery: false, linkConfiguration: linkConfiguration,
            sessionStore: stateDirectory.map {
                SessionStore(directory: URL(fileURLWithPath: $0, isDirectory: true), logger: logger)
            },
            readCallLinkAttempts: readCallLinkAttempts, logger: logger)
        var configuration = CastdServerConfiguration(target: .path(socketPath))
        configuration.maximumFrameLength = maximumFrameLength
        configure(&configuration)
        let listening = AsyncStream<Void>.makeStream()
        var service = CastdService(
            registry: registry, hub: hub, facts: DaemonFacts(version: "test", socketPath: socketPath), logs: logs)
        service.appAnswerDeadline = appAnswerDeadline
        let server = CastdServer(
            configuration: configuration,
            service: service,
            logger: logs?.logger(CastdSubsystem.rpc) ?? logger,
            onListening: { listening.continuation.finish() })
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await registry.run() }
            group.addTask { try await server.run() }
            for await _ in listening.stream {}
            defer { group.cancelAll() }
            // Ready once the registry knows the static devices (it adds them as it starts).
            try await eventually("the registry to know its static devices") {
                devices.allSatisfy { hub.device(id: $0.id) != nil }
            }
            return try await body(socketPath, hub)
        }
    }
}

/// How much longer than usual tests wait for anything: `CASTD_TEST_TIME_SCALE` (scripts/swift-flags.sh
/// sets 4 for sanitizer builds, which run several times slower), else 1. Timeouts only: a test
/// still fails when what it waits for never happens, just later.
public let testTimeScale: Double = {
    guard let text = ProcessInfo.processInfo.environment["CASTD_TEST_TIME_SCALE"], let scale = Double(text),
        scale >= 1, scale <= 100
    else { return 1 }
    return scale
}()

/// Whether a sanitizer's allocator stands in for glibc's malloc in this process: AddressSanitizer
/// (freed blocks wait in a quarantine of up to 256 MiB, every block has redzones) or
/// ThreadSanitizer. Resident-memory bounds then measure the sanitizer rather than castd, and
/// `mallopt` does not reach glibc; tests skip those checks, and `make soak` and the plain
/// debug suite make them.
public let sanitizerAllocatorInUse: Bool = {
    #if canImport(Glibc)
    return dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil
    #else
    return false
    #endif
}()

extension Duration {
    /// This timeout stretched by ``testTimeScale``.
    public var scaledForTests: Duration { self * testTimeScale }
}

/// Waits, up to `timeout` (scaled by ``testTimeScale``), for `condition` to hold, checking it each time `poll` elapses.
/// For conditions that have no event to wait on (another process's output, a file).
public func eventually(
    timeout: Duration = .seconds(10), poll: Duration = .milliseconds(20),
    _ what: @autoclosure () -> String = "condition",
    _ condition: () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let timeout = timeout.scaledForTests
    let deadline = clock.now + timeout
    while true {
        if try await condition() { return }
        if clock.now >= deadline { throw TimedOut(what: what(), timeout: timeout) }
        try await Task.sleep(for: poll)
    }
}

public struct TimedOut: Error, CustomStringConvertible {
    public var what: String
    public var timeout: Duration
    public var description: String { "timed out after \(timeout) waiting for \(what)" }
}
