import CastdSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

extension Tag {
    /// Suites whose tests compute for seconds without awaiting anything (parsing castc's whole
    /// command tree, X.509 and RSA, JSON corpora, in a debug or sanitized build).
    /// `scripts/test.sh` runs them on their own, before the rest.
    ///
    /// Why: Swift's cooperative pool has one thread per core, two on the machines this project
    /// is tested on. Two such tests at once held both threads for seconds, and every test then
    /// waiting with a deadline (for castd, an emulator, a session, an idle timer) saw nothing
    /// happen until it timed out. Run on a thread of their own instead, they took the cores from
    /// NIO's threads and the processes other tests start, which have deadlines too. Apart, they
    /// stall nobody. `CASTD_TEST_STALL_CHECK` finds such tests (``stallCheck``).
    @Tag public static var cpuBound: Self
}

/// With `CASTD_TEST_STALL_CHECK=1`: threads that check that Swift's cooperative pool, and each of
/// NIO's event loops, run a job within 3 s, and otherwise send this process SIGQUIT, so that the
/// backtracer prints every thread (`SWIFT_BACKTRACE=enable=yes`): the tests on the pool's threads
/// then are the ones to tag ``Testing/Tag/cpuBound``; a test on a loop's thread blocks it. A
/// diagnosis, not part of the suite.
public let stallCheck: Void = {
    guard ProcessInfo.processInfo.environment["CASTD_TEST_STALL_CHECK"] != nil else { return }
    watch("the cooperative pool") { job in Task.detached { job() } }
    // And each of NIO's event loops (a handler or a test blocking one stalls every channel on it).
    for loop in MultiThreadedEventLoopGroup.singleton.makeIterator() {
        watch("event loop \(loop)") { job in loop.execute { job() } }
    }
}()

/// A thread that hands `schedule` a job every 250 ms and, if none has run for 3 s, reports
/// `what` and sends this process SIGQUIT.
private func watch(_ what: String, schedule: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
    Thread.detachNewThread {
        let ran = Locked<ContinuousClock.Instant>(.now)
        while true {
            schedule { ran.withLock { $0 = .now } }
            usleep(250_000)
            if ContinuousClock.now - ran.withLock({ $0 }) > .seconds(3) {
                FileHandle.standardError.write(Data("stall check: nothing ran on \(what) for 3 s\n".utf8))
                kill(getpid(), SIGQUIT)
                return
            }
        }
    }
}
