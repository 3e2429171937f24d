import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ctrl-C as an event instead of the end of the process.
enum Interrupt {
    /// Runs `body` until it returns or throws, or until Ctrl-C, whichever comes first; Ctrl-C
    /// cancels `body` and returns normally.
    ///
    /// SIGINT is caught before `body` starts, so that a Ctrl-C that comes as soon as `body` has
    /// printed something (a watcher's first line) is never the default one that ends the process
    /// with a signal, nor one ignored and lost. Afterwards SIGINT terminates the process again.
    static func orUntilInterrupted(_ body: @escaping @Sendable () async throws -> Void) async throws {
        signal(SIGINT, SIG_IGN)
        defer { signal(SIGINT, SIG_DFL) }
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        defer { source.cancel() }
        let (interrupts, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        source.setEventHandler { continuation.yield() }
        // Registration happens on dispatch's own thread; until it has, an ignored SIGINT would be
        // lost, so `body` starts only once the source is in place.
        await withCheckedContinuation { (registered: CheckedContinuation<Void, Never>) in
            source.setRegistrationHandler { registered.resume() }
            source.resume()
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await body() }
            group.addTask { for await _ in interrupts { return } }
            defer { group.cancelAll() }
            try await group.next()
        }
    }
}
