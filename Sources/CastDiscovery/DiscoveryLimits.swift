/// How much of Avahi and of memory one browse may use, whatever the network announces.
public struct DiscoveryLimits: Sendable, Equatable {
    /// Service instances followed at once. Announcements beyond it are ignored (and logged)
    /// until some leave; then the browse starts over to pick up those it ignored. A device on
    /// IPv4 and IPv6 is two instances.
    public var maximumServices: Int
    /// Service instances followed from one address (the address a service resolves to). One
    /// host that announces more has only its first ones followed, so that a flood from one
    /// host cannot fill `maximumServices` and hide the devices of others: the rest are
    /// dropped as they resolve (and logged), and looked at again when the host's followed
    /// services leave.
    public var maximumServicesPerHost: Int
    /// Resolvers open at once. Avahi lets one client hold 1,024 objects; a resolver stays open
    /// after it answered, to follow the device's TXT changes, until another service needs it.
    public var maximumResolvers: Int
    /// The wait before resolving again a service that did not resolve; it doubles with each
    /// failure, up to `maximumResolveRetry`.
    public var resolveRetry: Duration
    public var maximumResolveRetry: Duration

    public init(
        maximumServices: Int = 1024, maximumServicesPerHost: Int = 32, maximumResolvers: Int = 256,
        resolveRetry: Duration = .seconds(5), maximumResolveRetry: Duration = .seconds(300)
    ) {
        self.maximumServices = max(1, maximumServices)
        self.maximumServicesPerHost = max(1, maximumServicesPerHost)
        self.maximumResolvers = min(max(1, maximumResolvers), 900)
        self.resolveRetry = max(resolveRetry, .milliseconds(1))
        self.maximumResolveRetry = max(maximumResolveRetry, self.resolveRetry)
    }

    /// The delay before the next resolve of a service that failed `failures` times (1 or more).
    func retryDelay(afterFailures failures: Int) -> Duration {
        var delay = resolveRetry
        for _ in 1..<max(1, min(failures, 32)) where delay < maximumResolveRetry {
            delay *= 2
        }
        return min(delay, maximumResolveRetry)
    }
}

/// What one browse holds now, and the most it ever held: for tests and benchmarks.
package struct BrowseCounts: Sendable, Equatable {
    /// Service instances followed (waiting, resolving, resolved or waiting to retry).
    package var services = 0
    package var openResolvers = 0
    package var mostOpenResolvers = 0
    /// Announcements ignored because `maximumServices` were followed.
    package var ignored = 0
    /// Services dropped as they resolved because their host had `maximumServicesPerHost`.
    package var refusedByHost = 0
    /// Resolves that failed (each is retried while the service is announced).
    package var failedResolves = 0
    /// Times the browse started over after ignoring announcements.
    package var rebrowses = 0

    package init() {}
}
