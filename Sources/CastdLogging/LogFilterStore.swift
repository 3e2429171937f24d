import CastdSupport

/// The filter castd logs by, shared by every log handler and changed at run time (SetLogFilter).
///
/// The hot path is ``level(for:)``, which every log statement asks (through its handler's
/// `logLevel`): one lock and one dictionary lookup. Each subsystem's level is resolved against
/// the patterns once and cached; a change of filter empties the cache.
public final class LogFilterStore: Sendable {
    private struct State {
        var filter: LogFilter
        /// Resolved levels by subsystem; emptied whenever `filter` changes.
        var cache: [String: LogLevel] = [:]
        /// Every subsystem that asked, for `known_subsystems`.
        var seen: Set<String> = []
    }

    /// Subsystem names are a small, fixed set; this only bounds a misbehaving caller.
    static let cacheLimit = 4096

    private let state: Locked<State>
    /// The filter castd started with (configuration and flags): what a reset returns to.
    public let startupFilter: LogFilter

    public init(_ filter: LogFilter) {
        self.startupFilter = filter
        self.state = Locked(State(filter: filter))
    }

    /// The current filter.
    public var filter: LogFilter { state.withLock { $0.filter } }

    /// The level of `subsystem` under the current filter.
    public func level(for subsystem: String) -> LogLevel {
        state.withLock { state in
            if let level = state.cache[subsystem] { return level }
            let level = state.filter.level(for: subsystem)
            if state.cache.count >= Self.cacheLimit { state.cache.removeAll(keepingCapacity: true) }
            state.cache[subsystem] = level
            if state.seen.count < Self.cacheLimit { state.seen.insert(subsystem) }
            return level
        }
    }

    /// Changes the filter with `change` (which must not log: it runs under the store's lock) and
    /// returns the new filter. If `change` throws, the filter stays as it was.
    @discardableResult
    public func update<E: Error>(_ change: (inout LogFilter) throws(E) -> Void) throws(E) -> LogFilter {
        try state.withLock { (state: inout State) throws(E) -> LogFilter in
            var filter = state.filter
            try change(&filter)
            if filter != state.filter {
                state.filter = filter
                state.cache.removeAll(keepingCapacity: true)
            }
            return filter
        }
    }

    /// Back to ``startupFilter``; returns it.
    @discardableResult
    public func reset() -> LogFilter {
        let startup = startupFilter
        return update { $0 = startup }
    }

    /// The subsystems that have logged (or asked whether they would) since castd started.
    public var seenSubsystems: Set<String> { state.withLock { $0.seen } }
}
