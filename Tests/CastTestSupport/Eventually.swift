/// `body`'s result, or a failure naming `what` once `limit` (scaled with
/// `CASTD_TEST_TIME_SCALE`) has passed: for a call whose promptness is what a test checks, so
/// that a stalled peer fails the test at the bound instead of passing late.
public func within<T: Sendable>(
    _ limit: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let scaled = limit.scaledForTests
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: scaled)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw WithinTimedOut(what: what, limit: scaled)
        }
        return value
    }
}

public struct WithinTimedOut: Error, CustomStringConvertible {
    public var what: String
    public var limit: Duration
    public var description: String { "\(what) did not finish within \(limit) (CASTD_TEST_TIME_SCALE scales it)" }
}
