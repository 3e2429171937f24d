#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a pthread mutex: what castd uses wherever several threads share state,
/// instead of the standard library's `Synchronization.Mutex`.
///
/// On Linux `Mutex` waits on a futex and hands over with atomics inside the standard library,
/// which ThreadSanitizer does not see: under `--sanitize=thread` every access through
/// `Mutex.withLock` from two threads is reported as a race, which hides the real ones. A
/// pthread mutex is intercepted by ThreadSanitizer, so `withLock` here orders what happens
/// inside it, for the sanitizer as for the machine. The cost is one allocation when the box is
/// made; locking is the same futex underneath.
///
/// The API is `Mutex`'s: `Locked(value)`, `withLock { (inout value) in … }`.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read or written between `pthread_mutex_lock` and
    // `pthread_mutex_unlock` on `mutex`, and only through `withLock`, which (like `Mutex`)
    // takes the value in and gives results out as `sending`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private nonisolated(unsafe) var value: Value

    public init(_ initialValue: sending Value) {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let created = pthread_mutex_init(mutex, nil)
        precondition(created == 0, "pthread_mutex_init failed: \(created)")
        value = initialValue
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock. `body` must not call `withLock` on the same
    /// box again (the lock is not recursive) nor suspend: it is synchronous.
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
