import CastdAPI
import Foundation

/// castd's own log: the filter that decides which records it keeps (a minimum level, and levels
/// for subsystems named by glob patterns), and the records themselves.
///
/// Level names are the Cast SDK's where it has them: verbose, debug, info, notice, warning,
/// error, critical, none (``CastdLogLevel/init(parsing:)`` reads them, with `trace` and
/// `assert` as aliases). Subsystems are castd's parts: `CastChannel`, `CastSession`,
/// `Discovery`, `RPC`, … (``CastdLogFilter/knownSubsystems`` lists them).
extension CastdClient {
    /// The daemon's log filter, and the subsystems it logs as.
    public func logFilter() async throws -> CastdLogFilter {
        try await unary(CastdMethods.getLogFilter, Castd_V1_GetLogFilterRequest())
    }

    /// Sets the level of the subsystems `pattern` matches, or the minimum level if `pattern` is
    /// nil, until castd restarts. A pattern already in the filter is replaced and moves last
    /// (the last matching pattern decides a subsystem's level).
    ///
    /// ```swift
    /// try await client.setLogLevel(.verbose, for: "CastChannel*")
    /// ```
    ///
    /// - Parameter reset: First go back to the filter castd started with.
    /// - Returns: The new filter.
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if `pattern` is not
    ///   a valid pattern (empty, white space, an unclosed `[`, …) or `level` is `.unspecified`.
    public func setLogLevel(_ level: CastdLogLevel, for pattern: String? = nil, reset: Bool = false) async throws
        -> CastdLogFilter
    {
        guard level != .unspecified else {
            throw CastdError(.invalidArgument, "give a log level; removeLogLevel(for:) removes a pattern")
        }
        var request = Castd_V1_SetLogFilterRequest()
        request.level = level
        request.reset = reset
        if let pattern {
            try Self.checkLogPattern(pattern)
            request.pattern = pattern
        }
        return try await unary(CastdMethods.setLogFilter, request)
    }

    /// Removes `pattern` from the log filter; the subsystems it matched get their level from the
    /// other patterns, or the minimum. Removing a pattern that is not there changes nothing.
    /// - Returns: The new filter.
    public func removeLogLevel(for pattern: String) async throws -> CastdLogFilter {
        try Self.checkLogPattern(pattern)
        var request = Castd_V1_SetLogFilterRequest()
        request.pattern = pattern
        return try await unary(CastdMethods.setLogFilter, request)
    }

    /// Back to the log filter castd started with (its configuration and flags).
    /// - Returns: That filter.
    public func resetLogFilter() async throws -> CastdLogFilter {
        var request = Castd_V1_SetLogFilterRequest()
        request.reset = true
        return try await unary(CastdMethods.setLogFilter, request)
    }

    /// The daemon's log records: the `recent` newest it kept (it keeps the last 1000), then, with
    /// `follow`, every new one as it is logged, until the iteration ends (which cancels the call
    /// on the daemon) or the daemon ends it (UNAVAILABLE when castd shuts down).
    ///
    /// Only records that passed the filter when they were logged are kept. A record whose
    /// `droppedBefore` is not 0 comes after records this reader missed because it read too
    /// slowly.
    ///
    /// ```swift
    /// for try await record in client.logs(recent: 0, follow: true) {
    ///     print(record.subsystem, record.message)
    /// }
    /// ```
    public func logs(recent: Int = 100, follow: Bool = false) -> CastdLogStream {
        var request = Castd_V1_StreamLogsRequest()
        request.recent = UInt32(clamping: max(recent, 0))
        request.follow = follow
        return serverStream(CastdMethods.streamLogs, request)
    }

    private static func checkLogPattern(_ pattern: String) throws(CastdError) {
        if let problem = CastdLogPattern.problem(pattern) { throw CastdError(.invalidArgument, problem) }
    }
}

/// The records of a StreamLogs call. See ``CastdClient/logs(recent:follow:)``.
public typealias CastdLogStream = CastdServerStream<CastdLogRecord>
