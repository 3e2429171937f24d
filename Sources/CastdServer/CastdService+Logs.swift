import CastdAPI
import CastdLogging
import Logging
import ServiceLifecycle
import SwiftProtobuf

extension CastdService {
    /// GetLogFilter, SetLogFilter and StreamLogs, on ``logs``. A service made without castd's
    /// logging (an embedding program's, a test's) answers FAILED_PRECONDITION rather than
    /// pretend: a filter it changed would filter nothing, and it keeps no records.
    func handleLogs(
        _ method: CastdMethod, request: [UInt8], peer: PeerCredentials?,
        send: @Sendable (any SwiftProtobuf.Message) async throws -> Void
    ) async throws {
        guard let logs else {
            throw CastdError(
                .failedPrecondition,
                "\(method.rawValue): this castd runs without its log system, so it has no log filter or records")
        }
        switch method {
        case .getLogFilter:
            _ = try Self.decodeLogRequest(Castd_V1_GetLogFilterRequest.self, request)
            try await send(Self.filterMessage(logs.store.filter, logs: logs))
        case .setLogFilter:
            let r = try Self.decodeLogRequest(Castd_V1_SetLogFilterRequest.self, request)
            let change = try LogFilterChange(r)
            let startup = logs.store.startupFilter
            let changeFilter = { (filter: inout LogFilter) in
                if r.reset { filter = startup }
                change.apply(to: &filter)
            }
            // The notice goes out under the filter in force before the change, so that a change
            // that silences castd's log is itself on record, with who made it.
            var next = logs.store.filter
            changeFilter(&next)
            var logger = logs.logger(CastdSubsystem.castd)
            logger[metadataKey: "rpc.method"] = "\(method.rawValue)"
            var metadata: Logger.Metadata = ["log.filter": "\(next)"]
            if let peer {
                metadata["peer.uid"] = "\(peer.uid)"
                metadata["peer.pid"] = "\(peer.pid)"
            }
            logger.notice("log filter changed: \(change.description(reset: r.reset))", metadata: metadata)
            let filter = logs.store.update(changeFilter)
            try await send(Self.filterMessage(filter, logs: logs))
        case .streamLogs:
            let r = try Self.decodeLogRequest(Castd_V1_StreamLogsRequest.self, request)
            let recent = Int(min(r.recent, UInt32(logs.buffer.capacity)))
            guard r.follow else {
                for entry in logs.buffer.recent(recent) { try await send(entry.api) }
                return
            }
            // The recent records and the follower at one instant: nothing missed in between.
            let (records, follower) = logs.buffer.follow(recent: recent)
            defer { follower.finish() }
            for entry in records { try await send(entry.api) }
            try await withGracefulShutdownHandler {
                for await entry in follower { try await send(entry.api) }
            } onGracefulShutdown: {
                follower.finish()
            }
            try Task.checkCancellation()
            throw CastdError(.unavailable, "castd is shutting down")
        default:
            throw CastdError(.internal, "\(method.rawValue) is not a log method")
        }
    }

    static func filterMessage(_ filter: LogFilter, logs: CastdLogs) -> Castd_V1_LogFilter {
        var message = filter.api
        message.knownSubsystems = logs.knownSubsystems
        return message
    }

    private static func decodeLogRequest<M: SwiftProtobuf.Message>(_ type: M.Type, _ bytes: [UInt8]) throws -> M {
        do {
            return try M(serializedBytes: bytes)
        } catch {
            throw CastdError(.invalidArgument, "malformed \(M.protoMessageName) request: \(error)")
        }
    }
}

/// What a SetLogFilter request asks after its reset, checked before anything changes: a request
/// that is refused changes nothing, its reset included.
struct LogFilterChange {
    enum Kind {
        case minimum(LogLevel)
        case set(String, LogLevel)
        case remove(String)
        /// Only the reset.
        case none
    }
    var kind: Kind

    /// - Throws: INVALID_ARGUMENT for an unknown level, an invalid pattern (with the reason), or a
    ///   request that asks nothing.
    init(_ request: Castd_V1_SetLogFilterRequest) throws(CastdError) {
        let level: LogLevel?
        switch request.level {
        case .unspecified: level = nil
        case .UNRECOGNIZED(let n): throw CastdError(.invalidArgument, "unknown log level \(n)")
        default: level = LogLevel(request.level)
        }
        if request.pattern.isEmpty {
            if let level {
                kind = .minimum(level)
            } else if request.reset {
                kind = .none
            } else {
                throw CastdError(
                    .invalidArgument,
                    "set a level (the minimum), a pattern and its level, a pattern alone (to remove it), or reset")
            }
            return
        }
        do {
            try LogFilter.validate(pattern: request.pattern)
        } catch {
            throw CastdError(.invalidArgument, error.message)
        }
        kind = level.map { .set(request.pattern, $0) } ?? .remove(request.pattern)
    }

    func apply(to filter: inout LogFilter) {
        switch kind {
        case .minimum(let level): filter.minimum = level
        // Validated in init: cannot throw.
        case .set(let pattern, let level): try? filter.set(level, for: pattern)
        case .remove(let pattern): filter.remove(pattern: pattern)
        case .none: break
        }
    }

    func description(reset: Bool) -> String {
        let what: String
        switch kind {
        case .minimum(let level): what = "minimum level \(level.name)"
        case .set(let pattern, let level): what = "\(pattern) at \(level.name)"
        case .remove(let pattern): what = "\(pattern) removed"
        case .none: what = ""
        }
        switch (reset, what.isEmpty) {
        case (true, true): return "reset to the startup filter"
        case (true, false): return "reset, then \(what)"
        default: return what
        }
    }
}
