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
    /// Returns when the process gets SIGINT, or when the calling task is cancelled. While it
    /// waits, SIGINT does not terminate the process; afterwards it does again.
    static func wait() async {
        signal(SIGINT, SIG_IGN)
        defer { signal(SIGINT, SIG_DFL) }
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        defer { source.cancel() }
        let (interrupts, continuation) = AsyncStream.makeStream(of: Void.self)
        source.setEventHandler { continuation.yield() }
        source.resume()
        for await _ in interrupts { return }
    }

    /// Runs `body` until it returns or throws, or until Ctrl-C, whichever comes first; Ctrl-C
    /// cancels `body` and returns normally.
    static func orUntilInterrupted(_ body: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await body() }
            group.addTask { await wait() }
            defer { group.cancelAll() }
            try await group.next()
        }
    }
}
