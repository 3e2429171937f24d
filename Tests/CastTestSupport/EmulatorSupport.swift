import CastEmulator
import Foundation
import Logging

extension Logger {
    /// The emulator's logger in tests: quiet unless `CAST_EMULATOR_LOG_LEVEL` (trace, debug,
    /// info, …) asks for its lines on standard error.
    public static func emulatorForTests(label: String = "cast-emulator") -> Logger {
        guard let name = ProcessInfo.processInfo.environment["CAST_EMULATOR_LOG_LEVEL"],
            let level = Logger.Level(rawValue: name)
        else {
            return Logger(label: label, factory: { _ in SwiftLogNoOpLogHandler() })
        }
        var logger = Logger(label: label, factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = level
        return logger
    }
}

/// Runs `body` against an emulated Cast device on 127.0.0.1, on a port picked by the system,
/// and always shuts the device down afterwards, whether `body` returns or throws.
///
/// ```swift
/// try await withEmulator { emulator, endpoints in
///     // connect to endpoints.host:endpoints.port (TLS, CastV2)
///     let state = await emulator.state()
/// }
/// ```
///
/// `configuration.host` and `configuration.port` are replaced (127.0.0.1, 0); ask for the
/// eureka_info servers with `httpPort = 0` / `httpsPort = 0`.
public func withEmulator<T>(
    _ configuration: EmulatorConfiguration = .init(),
    logger: Logger = .emulatorForTests(),
    _ body: (CastDeviceEmulator, EmulatorEndpoints) async throws -> T
) async throws -> T {
    var configuration = configuration
    configuration.host = "127.0.0.1"  // the port: 0 (any) unless a test asks for one
    if configuration.heartbeat == EmulatorHeartbeat() {
        // A device's 5 s and 10 s assume it has a CPU of its own. This emulator shares the test
        // process's threads with every test running (a sanitized build, hundreds of tests, a CPU
        // hog): its windows stretch with `testTimeScale` like every deadline of the suite. Tests
        // of the heartbeat itself give their own.
        configuration.heartbeat = EmulatorHeartbeat(
            pingAfter: Duration.seconds(5).scaledForTests, closeAfter: Duration.seconds(10).scaledForTests)
    }
    let emulator = CastDeviceEmulator(configuration: configuration, logger: logger)
    let endpoints = try await emulator.start()
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await emulator.run() }
        let result: T
        do {
            result = try await body(emulator, endpoints)
        } catch {
            await emulator.shutdown()
            try? await group.waitForAll()
            throw error
        }
        await emulator.shutdown()
        try await group.waitForAll()
        return result
    }
}
