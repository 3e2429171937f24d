import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A task executor on threads of its own, for CPU work that must not hold the threads of Swift's
/// cooperative pool (one per core: two on a two-core machine). While such work runs there,
/// nothing else in the process that awaits gets to run: no reply is read, no deadline is noticed.
/// Run work here with `withTaskExecutorPreference(executor) { … }` from a nonisolated async
/// function, or `group.addTask(executorPreference:)`.
///
/// Jobs run first come, first served. The threads, named `name` (`name-1`, `name-2`, … when
/// there are several), live as long as the process. Plain pthreads and a queue of our own:
/// NIOThreadPool's per-thread state, held only by its thread, shows up as a leak in
/// LeakSanitizer's report at exit.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` is read and written only with `mutex` held.
    private var jobs: [UnownedJob] = []
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let available = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// The threads' names, as /proc shows them (at most 15 bytes each).
    public let threadNames: [String]

    /// Starts `threads` threads named after `name`. Make one per purpose, once (a `static let`):
    /// they never stop.
    public init(name: String, threads: Int = 1) {
        precondition(threads >= 1)
        threadNames = threads == 1 ? [name] : (1...threads).map { "\(name)-\($0)" }
        mutex.initialize(to: pthread_mutex_t())
        available.initialize(to: pthread_cond_t())
        precondition(pthread_mutex_init(mutex, nil) == 0 && pthread_cond_init(available, nil) == 0)
        for name in threadNames {
            let context = Unmanaged.passRetained(StartContext(executor: self, name: name)).toOpaque()
            var thread = pthread_t()
            let started = pthread_create(
                &thread, nil,
                { argument in
                    let context = Unmanaged<StartContext>.fromOpaque(argument!).takeRetainedValue()
                    context.executor.run(named: context.name)
                }, context)
            precondition(started == 0, "cannot start thread \(name): \(started)")
            pthread_detach(thread)
        }
    }

    private final class StartContext {
        // Strong: the executor lives as long as its threads, the life of the process.
        let executor: ThreadExecutor
        let name: String
        init(executor: ThreadExecutor, name: String) {
            self.executor = executor
            self.name = name
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(mutex)
        jobs.append(job)
        pthread_cond_signal(available)
        pthread_mutex_unlock(mutex)
    }

    private func run(named name: String) -> Never {
        if let comm = fopen("/proc/thread-self/comm", "w") {
            fputs(name, comm)
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

/// Runs `body` on a thread of its own and returns its result: for blocking work (waitpid,
/// blocking socket I/O, sleeping between samples) that must not hold one of the cooperative
/// pool's few threads (one per core). On Dispatch's global queues it would wait behind other
/// blocked work: they add threads for blocked work only about once a second.
public func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
