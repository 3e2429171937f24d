import CastSync
import Foundation
import Testing

/// For suites whose tests compute for seconds without awaiting anything (parsing castc's whole
/// command tree, X.509 and RSA in a debug build): they run on threads of their own instead of
/// Swift's cooperative pool.
///
/// Why: the pool has one thread per core, two on the machines this project is tested on, and the
/// suite runs hundreds of tests in parallel. Two such tests at once held both threads for
/// seconds, and every test waiting with a deadline (for castd, an emulator, a session) saw
/// nothing happen until it timed out: the suite's flakes under load. `CASTD_TEST_STALL_CHECK`
/// finds such tests (``stallCheck``).
extension Trait where Self == CPUBoundTrait {
    public static var cpuBound: CPUBoundTrait { CPUBoundTrait() }
}

public struct CPUBoundTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        _ = stallCheck
        try await withTaskExecutorPreference(CPUBoundExecutor.shared) {
            try await function()
        }
    }
}

/// The thread CPU-bound tests run on, one job at a time: more would take the cores from the
/// processes other tests start (castd, cast-emulator, castc), which must start within deadlines.
public enum CPUBoundExecutor {
    public static let shared = ThreadExecutor(name: "cpu-bound")
}

/// With `CASTD_TEST_STALL_CHECK=1`: a thread that checks that Swift's cooperative pool runs a job
/// within 3 s, and otherwise sends this process SIGQUIT, so that the backtracer prints every
/// thread (`SWIFT_BACKTRACE=enable=yes`): the tests on the pool's threads then are the ones to
/// mark ``CPUBoundTrait/cpuBound``. A diagnosis, not part of the suite.
public let stallCheck: Void = {
    guard ProcessInfo.processInfo.environment["CASTD_TEST_STALL_CHECK"] != nil else { return }
    Thread.detachNewThread {
        let ran = Locked<ContinuousClock.Instant>(.now)
        while true {
            Task.detached { ran.withLock { $0 = .now } }
            usleep(250_000)
            if ContinuousClock.now - ran.withLock({ $0 }) > .seconds(3) {
                FileHandle.standardError.write(Data("stall check: no job ran on the cooperative pool for 3 s\n".utf8))
                kill(getpid(), SIGQUIT)
                return
            }
        }
    }
}()
