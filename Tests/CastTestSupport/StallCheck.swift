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

/// A diagnosis, not part of the suite. With `CASTD_TEST_STALL_CHECK` set, threads check that
/// Swift's cooperative pool, and each of NIO's event loops, run a job within 2 s. When one does
/// not, the check says which, and when it runs again, what every thread of this process did in
/// the meantime, from Linux's own accounts (`/proc/self/task/*/schedstat`): time on a CPU (a
/// thread that computes: a job holding a loop or the pool), time runnable but waiting for a CPU
/// (the machine is overloaded), or neither (asleep, and `wchan` says on what: a lock, a
/// `swift_once`). These work under the sanitizers, where Swift's backtracer does not.
///
/// - `CASTD_TEST_STALL_CHECK=1`: the report above, and the tests go on.
/// - `CASTD_TEST_STALL_CHECK=gdb`: also, once, when a stall has lasted 5 s, every thread's
///   backtrace from `gdb` (if installed), attached to this process (which it pauses meanwhile).
/// - `CASTD_TEST_STALL_CHECK=backtrace`: sends this process SIGQUIT at the first stall, so that
///   Swift's backtracer prints every thread and the run stops (`SWIFT_BACKTRACE=enable=yes`; not
///   under a sanitizer).
public let stallCheck: Void = {
    guard let mode = ProcessInfo.processInfo.environment["CASTD_TEST_STALL_CHECK"], !mode.isEmpty else { return }
    let check = StallCheck(mode: mode)
    check.watch("the cooperative pool") { job in Task.detached { job() } }
    // And each of NIO's event loops (a handler or a test blocking one stalls every channel on it).
    for loop in MultiThreadedEventLoopGroup.singleton.makeIterator() {
        check.watch("event loop \(loop)") { job in loop.execute { job() } }
    }
}()

private final class StallCheck: Sendable {
    let mode: String
    let reportedWithGDB = Locked(false)
    /// When a stall is reported: after this long without a job run.
    static let threshold: Duration = .seconds(2)

    init(mode: String) { self.mode = mode }

    /// A thread that hands `schedule` a job every 100 ms and reports when none has run for
    /// ``threshold``.
    func watch(_ what: String, schedule: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        Thread.detachNewThread { [self] in
            let ran = Locked<ContinuousClock.Instant>(.now)
            var stall: (since: ContinuousClock.Instant, before: ThreadsSnapshot, gdb: Bool)?
            while true {
                schedule { ran.withLock { $0 = .now } }
                usleep(100_000)
                let lastRun = ran.withLock { $0 }
                let now = ContinuousClock.now
                if now - lastRun > Self.threshold {
                    guard let current = stall else {
                        let before = ThreadsSnapshot()
                        stall = (lastRun, before, false)
                        say("nothing ran on \(what) for \(Self.threshold); \(before.system)")
                        if mode == "backtrace" {
                            kill(getpid(), SIGQUIT)
                            return
                        }
                        continue
                    }
                    if mode == "gdb", !current.gdb, now - lastRun > .seconds(5),
                        reportedWithGDB.withLock({ done in
                            defer { done = true }; return !done
                        })
                    {
                        stall?.gdb = true
                        backtraces(while: what)
                    }
                } else if let ended = stall {
                    stall = nil
                    let after = ThreadsSnapshot()
                    say(
                        "\(what) ran again after \(lastRun - ended.since); \(after.system); meanwhile:\n"
                            + after.changes(since: ended.before))
                }
            }
        }
    }

    func say(_ text: String) {
        FileHandle.standardError.write(Data("stall check [pid \(getpid())]: \(text)\n".utf8))
    }

    /// Every thread's backtrace, from gdb attached to this process.
    func backtraces(while what: String) {
        let gdb = "/usr/bin/gdb"
        guard FileManager.default.isExecutableFile(atPath: gdb) else {
            say("no \(gdb) for backtraces")
            return
        }
        // To a file, not a pipe: gdb stops every thread of this process, this one too, and would
        // block on a full pipe that nobody reads.
        let path = NSTemporaryDirectory() + "castd-stall-check-\(getpid()).txt"
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let file = FileHandle(forWritingAtPath: path)
        else {
            say("cannot write \(path)")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: gdb)
        process.arguments = ["-p", "\(getpid())", "-batch", "-nx", "-ex", "thread apply all bt 30"]
        process.standardOutput = file
        process.standardError = file
        do {
            try process.run()
            process.waitUntilExit()
            try? file.close()
            // The threads and their frames; gdb's notes on symbols stay in the file.
            let text = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
                .filter { $0.hasPrefix("Thread ") || $0.hasPrefix("#") }.joined(separator: "\n")
            say("backtraces while \(what) stalls (gdb's whole output: \(path)):\n" + text)
        } catch {
            say("gdb did not run: \(error)")
        }
    }
}

/// Each thread's account, as Linux keeps it, at one moment.
private struct ThreadsSnapshot {
    struct Account {
        var name: String
        var state: String
        var wchan: String
        var onCPU: Int  // nanoseconds
        var waiting: Int  // nanoseconds runnable, not running
    }
    var threads: [Int: Account] = [:]
    /// The machine's load and the tasks runnable at this moment.
    var system: String

    init() {
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        let load = read("/proc/loadavg").split(separator: " ").prefix(4).joined(separator: " ")
        system = "load \(load)"
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            guard let tid = Int(task) else { continue }
            let stat = read("/proc/self/task/\(task)/stat")
            let state = stat.lastIndex(of: ")").map { String(stat[stat.index($0, offsetBy: 2)...].prefix(1)) } ?? "?"
            let sched = read("/proc/self/task/\(task)/schedstat").split(separator: " ").compactMap {
                Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            threads[tid] = Account(
                name: read("/proc/self/task/\(task)/comm").trimmingCharacters(in: .whitespacesAndNewlines),
                state: state, wchan: read("/proc/self/task/\(task)/wchan"),
                onCPU: sched.first ?? 0, waiting: sched.dropFirst().first ?? 0)
        }
    }

    /// The threads that ran, waited to run, or are NIO's, each with what it did since `before`.
    func changes(since before: ThreadsSnapshot) -> String {
        let rows = threads.compactMap { tid, now -> (Int, String)? in
            let then = before.threads[tid]
            let cpu = (now.onCPU - (then?.onCPU ?? 0)) / 1_000_000
            let waited = (now.waiting - (then?.waiting ?? 0)) / 1_000_000
            guard cpu >= 50 || waited >= 50 || now.name.hasPrefix("NIO") else { return nil }
            let row =
                "  \(tid) \(now.name): \(cpu) ms on a CPU, \(waited) ms waiting for one; "
                + "state \(then?.state ?? "new")→\(now.state), wchan \(then?.wchan ?? "")→\(now.wchan)"
            return (cpu + waited, row)
        }
        let total = threads.values.reduce(0) { $0 + $1.onCPU } - before.threads.values.reduce(0) { $0 + $1.onCPU }
        return rows.sorted { $0.0 > $1.0 }.prefix(25).map(\.1).joined(separator: "\n")
            + "\n  (\(threads.count) threads; \(total / 1_000_000) ms on a CPU in all)"
    }
}
