import CastdAPI
import Logging

/// castd's log levels: swift-log's, named as the Cast SDK's logger names them where it has a
/// name (verbose = swift-log's trace; the SDK's assert is critical), plus `none`, which in a filter
/// silences a subsystem. The raw values are `castd.v1.LogLevel`'s numbers.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    case verbose = 1
    case debug
    case info
    case notice
    case warning
    case error
    case critical
    case none

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Parses a level name in any case: verbose, debug, info, notice, warning, error, critical,
    /// none; `trace` and `assert` are aliases of verbose and critical.
    /// - Throws: ``LogFilterError`` naming the word and listing the names.
    public init(parsing text: String) throws(LogFilterError) {
        do {
            self.init(try Castd_V1_LogLevel(parsing: text))!
        } catch {
            throw LogFilterError(error.message)
        }
    }

    /// The level of a swift-log record.
    public init(_ level: Logger.Level) {
        switch level {
        case .trace: self = .verbose
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }

    /// The level of a castd.v1 message; nil for UNSPECIFIED and unknown numbers.
    public init?(_ level: Castd_V1_LogLevel) {
        guard level != .unspecified, let known = LogLevel(rawValue: level.rawValue) else { return nil }
        self = known
    }

    public var api: Castd_V1_LogLevel { Castd_V1_LogLevel(rawValue: rawValue) ?? .unspecified }

    /// "verbose", …, "none".
    public var name: String { api.name }
    public var description: String { name }

    /// The lowest swift-log level that passes a threshold of this level. `none` has no such level:
    /// it answers `.critical`, and the handler drops critical records of a silenced subsystem itself.
    public var loggerLevel: Logger.Level {
        switch self {
        case .verbose: .trace
        case .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        case .critical, .none: .critical
        }
    }

    /// syslog(3)'s priority, as the journal's PRIORITY field takes it: 7 debug (verbose too),
    /// 6 info, 5 notice, 4 warning, 3 err, 2 crit.
    public var syslogPriority: Int {
        switch self {
        case .verbose, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical, .none: 2
        }
    }
}

/// A log level, pattern or filter entry castd does not accept; `message` names it and says what
/// is allowed.
public struct LogFilterError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
