import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The thread device authentication runs on. Checking a device's answer is CPU work on input
/// from a peer that has proved nothing yet; on a thread of its own it never holds one of the
/// cooperative pool's threads (two on a two-core machine), so castd answers its clients and
/// stops on SIGTERM while a device is being checked. One thread: checks from several devices
/// wait their turn, and authentication never takes more than one core. The thread, named
/// `castd-auth`, lives as long as the process.
///
/// A plain pthread and a queue of our own: NIOThreadPool's per-thread state, held only by its
/// thread, shows up as a leak in LeakSanitizer's report when castd exits.
public final class AuthenticationExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` is read and written only with `mutex` held.
    public static let shared = AuthenticationExecutor()

    /// The name of the executor's thread, as /proc shows it.
    public static let threadName = "castd-auth"

    private var jobs: [UnownedJob] = []
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let available = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    private init() {
        mutex.initialize(to: pthread_mutex_t())
        available.initialize(to: pthread_cond_t())
        precondition(pthread_mutex_init(mutex, nil) == 0 && pthread_cond_init(available, nil) == 0)
        var thread = pthread_t()
        // Unretained: `shared` holds the executor for the life of the process.
        let started = pthread_create(
            &thread, nil,
            { argument in
                Unmanaged<AuthenticationExecutor>.fromOpaque(argument!).takeUnretainedValue().run()
            }, Unmanaged.passUnretained(self).toOpaque())
        precondition(started == 0, "cannot start the authentication thread: \(started)")
        pthread_detach(thread)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(mutex)
        jobs.append(job)
        pthread_cond_signal(available)
        pthread_mutex_unlock(mutex)
    }

    private func run() -> Never {
        if let comm = fopen("/proc/thread-self/comm", "w") {
            fputs(Self.threadName, comm)
            fclose(comm)
        }
        let executor = asUnownedTaskExecutor()
        while true {
            pthread_mutex_lock(mutex)
            while jobs.isEmpty { pthread_cond_wait(available, mutex) }
            let job = jobs.removeFirst()
            pthread_mutex_unlock(mutex)
            job.runSynchronously(on: executor)
        }
    }
}
