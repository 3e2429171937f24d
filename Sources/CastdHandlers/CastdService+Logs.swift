import CastdServer
import CastdAPI
import CastdLogging
import Logging
import ServiceLifecycle
import SwiftProtobuf

extension CastdService {
    /// GetLogFilter, SetLogFilter and StreamLogs, on ``logs``. A service made without castd's
    /// logging (an embedding program's, a test's) answers FAILED_PRECONDITION rather than
    /// pretend: a filter it changed would filter nothing, and it keeps no records.
    static func registerLogs(_ router: inout CastdRouter) {
        router.unary(CastdMethods.getLogFilter, available: { try $0.logs(for: .getLogFilter) }) { service, _, _ in
            let logs = try service.logs(for: .getLogFilter)
            return Self.filterMessage(logs.store.filter, logs: logs)
        }
        router.unary(CastdMethods.setLogFilter, available: { try $0.logs(for: .setLogFilter) }) {
            service, request, context in
            let logs = try service.logs(for: .setLogFilter)
            let change = LogFilterChange(request)
            let startup = logs.store.startupFilter
            let changeFilter = { (filter: inout LogFilter) in
                if request.reset { filter = startup }
                change.apply(to: &filter)
            }
            // The notice goes out under the filter in force before the change, so that a change
            // that silences castd's log is itself on record, with who made it.
            var next = logs.store.filter
            changeFilter(&next)
            var logger = logs.logger(CastdSubsystem.castd)
            logger[metadataKey: "rpc.method"] = "\(CastdMethod.setLogFilter.rawValue)"
            var metadata: Logger.Metadata = ["log.filter": "\(next)"]
            if let peer = context.peer {
                metadata["peer.uid"] = "\(peer.uid)"
                metadata["peer.pid"] = "\(peer.pid)"
            }
            logger.notice("log filter changed: \(change.description(reset: request.reset))", metadata: metadata)
            let filter = logs.store.update(changeFilter)
            return Self.filterMessage(filter, logs: logs)
        }
        router.serverStreaming(CastdMethods.streamLogs, available: { try $0.logs(for: .streamLogs) }) {
            service, request, _, stream in
            let logs = try service.logs(for: .streamLogs)
            let recent = Int(min(request.recent, UInt32(logs.buffer.capacity)))
            guard request.follow else {
                for entry in logs.buffer.recent(recent) { try await stream.send(entry.api) }
                return
            }
            // The recent records and the follower at one instant: nothing missed in between.
            let (records, follower) = logs.buffer.follow(recent: recent)
            defer { follower.finish() }
            for entry in records { try await stream.send(entry.api) }
            try await withGracefulShutdownHandler {
                for await entry in follower { try await stream.send(entry.api) }
            } onGracefulShutdown: {
                follower.finish()
            }
            try Task.checkCancellation()
            throw CastdError(.unavailable, "castd is shutting down")
        }
    }

    /// castd's logging, or FAILED_PRECONDITION naming `method` for a service without it.
    @discardableResult
    private func logs(for method: CastdMethod) throws(CastdError) -> CastdLogs {
        guard let logs else {
            throw CastdError(
                .failedPrecondition,
                "\(method.rawValue): this castd runs without its log system, so it has no log filter or records")
        }
        return logs
    }

    static func filterMessage(_ filter: LogFilter, logs: CastdLogs) -> Castd_V1_LogFilter {
        var message = filter.api
        message.knownSubsystems = logs.knownSubsystems
        return message
    }
}

/// What a SetLogFilter request asks after its reset. The request was checked before anything
/// changes (``CastdValidation/setLogFilter(_:)``, by the router): a request that is refused
/// changes nothing, its reset included.
struct LogFilterChange {
    enum Kind {
        case minimum(LogLevel)
        case set(String, LogLevel)
        case remove(String)
        /// Only the reset.
        case none
    }
    var kind: Kind

    /// The change a request that meets ``CastdValidation/setLogFilter(_:)`` asks: its level is
    /// known and its pattern one the filter takes.
    init(_ request: Castd_V1_SetLogFilterRequest) {
        let level = LogLevel(request.level)
        if request.pattern.isEmpty {
            kind = level.map { .minimum($0) } ?? .none
            return
        }
        kind = level.map { .set(request.pattern, $0) } ?? .remove(request.pattern)
    }

    func apply(to filter: inout LogFilter) {
        switch kind {
        case .minimum(let level): filter.minimum = level
        // Validated before (CastdValidation.setLogFilter): cannot throw.
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
