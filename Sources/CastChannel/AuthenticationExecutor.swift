import NIOPosix

/// The thread device authentication runs on. Checking a device's answer is CPU work on input
/// from a peer that has proved nothing yet; on a thread of its own it never holds one of the
/// cooperative pool's threads (two on a two-core machine), so castd answers its clients and
/// stops on SIGTERM while a device is being checked. One thread: checks from several devices
/// wait their turn, and authentication never takes more than one core.
public final class AuthenticationExecutor: TaskExecutor {
    public static let shared = AuthenticationExecutor()

    private let pool: NIOThreadPool

    private init() {
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        pool.submit { _ in job.runSynchronously(on: executor) }
    }
}
