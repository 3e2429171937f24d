import CastSenderLink
import CastClient
import CastDevices
import CastdAPI
import CastdDaemon
import CastdLogging
import CastdServer
import Foundation
import Logging
import Testing

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

/// An in-process castd, built by castd's own builder (`CastdDaemon`) from the default settings
/// of a user daemon, with discovery off and the socket in a temporary directory: the real server
/// on a real Unix socket, the real registry and device links. `body` gets the socket path and
/// the store, once the server listens and the registry knows `devices`.
/// Device links trust this process's emulators unless `linkConfiguration` says otherwise.
/// Static devices are known by their address only unless `deviceInfo` says where their
/// eureka_info is (a test's emulators serve it on ports of their own).
/// With `logs`, the daemon logs through them (as castd's subsystems) and serves its log methods;
/// without, it logs nothing and those methods answer FAILED_PRECONDITION.
/// `socketPath` puts the socket where a test wants it (a castd restarted on the same path).
public func withDaemon<T>(
    devices: [StaticDevice] = [],
    maximumFrameLength: Int = CastdRPC.defaultMaximumFrameLength,
    watcherQueueLimit: Int = 256,
    linkConfiguration: CastLinkConfiguration = .trustingEmulators(),
    stateDirectory: String? = nil,
    readCallLinkAttempts: Int = DeviceRegistry.readCallLinkAttempts,
    appAnswerDeadline: Duration = .seconds(5),
    deviceInfo: DeviceInfoReader? = nil,
    launch: LaunchDefaults = .init(),
    configure: (inout CastdServerConfiguration) -> Void = { _ in },
    logs: CastdLogs? = nil,
    socketPath: String? = nil,
    _ body: (_ socketPath: String, _ store: CastdStateStore) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        var settings = try CastdSettings.forTests(socket: socketPath ?? directory + "/castd.sock")
        settings.devices = devices
        settings.stateDirectory = stateDirectory
        settings.maxFrameBytes = maximumFrameLength
        settings.watcherQueue = watcherQueueLimit
        settings.launch = launch
        let listening = AsyncStream<Void>.makeStream()
        var options = CastdDaemon.Options(version: "test", logs: logs)
        if logs == nil {
            options.logger = { Logger.emulatorForTests(label: $0) }
        }
        options.linkConfiguration = linkConfiguration
        options.readCallLinkAttempts = readCallLinkAttempts
        options.appAnswerDeadline = appAnswerDeadline
        options.deviceInfo = deviceInfo
        options.onListening = { listening.continuation.finish() }
        let daemon = try CastdDaemon(settings: settings, options: options, tuneServer: configure)
        let store = daemon.store
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await daemon.run(gracefulShutdownSignals: [], logger: Logger.emulatorForTests(label: "castd"))
            }
            for await _ in listening.stream {}
            defer { group.cancelAll() }
            // Ready once the registry knows the static devices (it adds them as it starts).
            try await eventually("the registry to know its static devices") {
                devices.allSatisfy { store.device(id: $0.id) != nil }
            }
            return try await body(daemon.socketPath, store)
        }
    }
}

extension CastdSettings {
    /// A user daemon's default settings, as castd resolves them with no configuration file and
    /// no flags but `--socket socket --no-discovery`.
    public static func forTests(socket: String) throws -> CastdSettings {
        var layer = ConfigLayer()
        layer.set(.socket, .string(socket), from: "--socket")
        layer.set(.discovery, .bool(false), from: "--no-discovery")
        return try CastdSettings.resolve(layer, paths: DaemonPaths(mode: .user, environment: [:]), configFile: nil)
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

/// Whether this is CI's run (`CI=true`, as CI's run of `.ci/run` sets it). There, a test that
/// needs a privilege (root, network namespaces, `unshare --mount`) runs without it and fails
/// with the reason, where elsewhere it is skipped saying why: CI must test what it names.
public let runningInCI: Bool = ProcessInfo.processInfo.environment["CI"] == "true"

/// Whether a sanitizer's allocator stands in for glibc's malloc in this process: AddressSanitizer
/// (freed blocks wait in a quarantine of up to 256 MiB, every block has redzones) or
/// ThreadSanitizer. Resident-memory bounds then measure the sanitizer rather than castd, and
/// `mallopt` does not reach glibc; tests make those checks against ``plainCastd``.
public let sanitizerAllocatorInUse: Bool = {
    #if canImport(Glibc)
        return dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil
    #else
        return false
    #endif
}()

/// A castd built without a sanitizer, for the checks a sanitizer's allocator would falsify
/// (resident memory, glibc's malloc arenas): `$CASTD_PLAIN_BIN_DIR/castd` (scripts/test.sh
/// builds one beside a sanitized build, which is what CI runs), else the castd built beside
/// these tests when they are not sanitized.
public let plainCastd: String? = {
    if let directory = ProcessInfo.processInfo.environment["CASTD_PLAIN_BIN_DIR"] {
        return directory + "/castd"
    }
    return sanitizerAllocatorInUse ? nil : productsDirectory.appendingPathComponent("castd").path
}()

/// Whether the tests that need ``plainCastd`` run: where there is one, and in CI, where its
/// absence fails them (``requirePlainCastd()``) rather than skipping them.
public let plainCastdTestsRun = plainCastd != nil || runningInCI

/// Why the tests that need ``plainCastd`` were skipped.
public let plainCastdMissing: Comment =
    "needs a castd built without a sanitizer: set CASTD_PLAIN_BIN_DIR (scripts/test.sh builds one)"

/// ``plainCastd``'s path, which must be an executable.
public func requirePlainCastd() throws -> String {
    guard let path = plainCastd else { throw PlainCastdMissing(problem: "\(plainCastdMissing)") }
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw PlainCastdMissing(problem: "CASTD_PLAIN_BIN_DIR has no castd: \(path) is not an executable")
    }
    return path
}

public struct PlainCastdMissing: Error, CustomStringConvertible {
    public var problem: String
    public var description: String { problem }
}

/// How long a test waits for a process it started (castd, cast-emulator) to be ready: a bound for
/// "it never will", not a speed target. A debug cast-emulator makes two or four RSA-2048 keys as
/// it starts: 4.6 to 6.7 s measured beside `stress-ng --cpu 4`, and longer beside the rest of
/// the suite, which keeps both cores busy. (Scaled by ``testTimeScale`` like every timeout.)
public let processStartTimeout: Duration = .seconds(60)

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
    _ = stallCheck  // the tests a stall would fail are the ones that wait
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
