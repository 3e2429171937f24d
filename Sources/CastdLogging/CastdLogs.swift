import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// castd's subsystems: the names its log records carry, which log filter patterns select
/// (`castc log-level verbose 'CastChannel*'`). A component that gets a logger passed in switches
/// it to its subsystem with `logger[metadataKey: "subsystem"] = "CastChannel"` (see
/// ``CastdLogHandler``), so that the device-side libraries need not import this module.
public enum CastdSubsystem {
    /// The daemon itself: startup, shutdown, log filter changes.
    public static let castd = "Daemon"
    /// Reading the configuration.
    public static let config = "Config"
    /// The castd.v1 server: connections and calls.
    public static let rpc = "RPC"
    /// Who may call what: permission decisions.
    public static let access = "Access"
    /// mDNS discovery (Avahi) and the registry's use of it.
    public static let discovery = "Discovery"
    /// A device's lifecycle: its link coming and going, reconnection, its receiver status.
    public static let castDevice = "CastDevice"
    /// One TLS link to a device: connecting, heartbeat, every message sent and received.
    public static let castChannel = "CastChannel"
    /// Device authentication.
    public static let castAuth = "CastAuth"
    /// Sessions: launch, join, resume, leave, transfer.
    public static let castSession = "CastSession"
    /// The media channel: loading media and commanding the player.
    public static let castMedia = "CastMedia"
    /// The saved sessions castd rejoins after a restart.
    public static let state = "State"
    /// The files clients hand castd, and the media server devices fetch them from.
    public static let media = "Media"

    /// Every subsystem, in the order `castc log-level` lists them.
    public static let all = [
        castd, config, rpc, access, discovery, castDevice, castChannel, castAuth, castSession, castMedia, state,
        media,
    ]
}

/// Where records go besides castd's own buffer (``LogRecordBuffer``).
public enum LogOutput: Sendable, Equatable, CustomStringConvertible {
    /// The journal when standard error is the journal stream (``JournalStream``) and journald's
    /// socket is there, else standard error.
    case automatic
    /// Lines on standard error.
    case standardError
    /// Journal entries with structured fields, sent to journald's socket; a record the journal
    /// refuses goes to standard error instead. (Without the socket at all, libsystemd drops
    /// records silently, reporting success: `.automatic` does not choose the journal then.)
    case journal
    /// Nowhere: records are only kept in the buffer (tests).
    case discard

    /// "journal", "stderr", "automatic" or "nowhere".
    public var description: String {
        switch self {
        case .automatic: "automatic"
        case .standardError: "stderr"
        case .journal: "journal"
        case .discard: "nowhere"
        }
    }

    /// `.automatic` decided for this process.
    public func resolved(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        journalSocket: String = JournalFields.socketPath
    ) -> LogOutput {
        guard self == .automatic else { return self }
        guard JournalStream.isStderrConnectedToJournal(environment: environment) else { return .standardError }
        return access(journalSocket, F_OK) == 0 ? .journal : .standardError
    }
}

/// castd's logging: the filter every handler asks, the buffer of recent records, and where
/// records are written. One per castd; `bootstrap(filter:output:)` makes it swift-log's backend.
/// Tests make their own, and loggers from it with ``logger(_:)``, without the global bootstrap.
public final class CastdLogs: Sendable {
    public let store: LogFilterStore
    public let buffer: LogRecordBuffer
    /// Resolved: never `.automatic`.
    public let output: LogOutput
    /// The journal's SYSLOG_IDENTIFIER.
    public let identifier: String

    public init(
        filter: LogFilter, output: LogOutput = .automatic, identifier: String = "castd",
        buffer: LogRecordBuffer = LogRecordBuffer()
    ) {
        self.store = LogFilterStore(filter)
        self.buffer = buffer
        self.output = output.resolved()
        self.identifier = identifier
    }

    /// Makes castd's logging swift-log's backend for the whole process: every `Logger(label:)`
    /// after this logs as the subsystem named by its label. Call it once, before any logger is
    /// made. The output is the journal when standard error is the journal stream, else stderr.
    @discardableResult
    public static func bootstrap(filter: LogFilter, output: LogOutput = .automatic) -> CastdLogs {
        let logs = CastdLogs(filter: filter, output: output)
        LoggingSystem.bootstrap { label in CastdLogHandler(subsystem: label, logs: logs) }
        return logs
    }

    /// A logger for `subsystem` writing to these logs (not through the global bootstrap).
    public func logger(_ subsystem: String) -> Logger {
        Logger(label: subsystem) { CastdLogHandler(subsystem: $0, logs: self) }
    }

    /// The subsystems for writing patterns: ``CastdSubsystem/all``, then any other subsystem that
    /// has logged, by name.
    public var knownSubsystems: [String] {
        let known = Set(CastdSubsystem.all)
        return CastdSubsystem.all + store.seenSubsystems.filter { !known.contains($0) }.sorted()
    }

    /// Writes a record that passed the filter, and keeps it.
    func emit(_ entry: LogEntry) {
        switch output {
        case .journal:
            if JournalFields.send(JournalFields.fields(for: entry, identifier: identifier)) < 0 {
                StandardErrorLine.write(StandardErrorLine.format(entry))
            }
        case .standardError, .automatic:
            StandardErrorLine.write(StandardErrorLine.format(entry))
        case .discard:
            break
        }
        buffer.append(entry)
    }
}

/// swift-log's handler for castd: asks the shared ``LogFilterStore`` whether a record passes,
/// then writes it (stderr or the journal) and keeps it in the ``LogRecordBuffer``.
///
/// - Its subsystem is the logger's label; a component handed a logger switches it by setting the
///   metadata key ``subsystemMetadataKey`` (`logger[metadataKey: "subsystem"] = "CastChannel"`),
///   which this handler takes as its subsystem rather than as metadata. Other handlers (a test's)
///   simply show it as metadata.
/// - `logLevel` answers from the store, so that every logger follows the filter as it changes
///   at run time. Setting it is ignored: castd's filter (configuration, flags, `castc
///   log-level`) is the one place levels are decided, and a component setting its own level
///   would silently defeat it.
public struct CastdLogHandler: LogHandler {
    /// The metadata key that sets the subsystem.
    public static let subsystemMetadataKey = "subsystem"

    public private(set) var subsystem: String
    public var metadataProvider: Logger.MetadataProvider?
    private var storedMetadata: Logger.Metadata = [:]
    private let logs: CastdLogs

    public init(subsystem: String, logs: CastdLogs, metadataProvider: Logger.MetadataProvider? = nil) {
        self.subsystem = subsystem
        self.logs = logs
        self.metadataProvider = metadataProvider
    }

    /// The subsystem's threshold (one lock and a dictionary lookup). A subsystem at `none`
    /// answers `.critical`, and ``log(event:)`` drops its critical records.
    public var logLevel: Logger.Level {
        get { logs.store.level(for: subsystem).loggerLevel }
        set {}  // Ignored: see the type's documentation.
    }

    public var metadata: Logger.Metadata {
        get { storedMetadata }
        set {
            var metadata = newValue
            if let subsystem = metadata.removeValue(forKey: Self.subsystemMetadataKey) {
                self.subsystem = subsystem.description
            }
            storedMetadata = metadata
        }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { key == Self.subsystemMetadataKey ? .string(subsystem) : storedMetadata[key] }
        set {
            if key == Self.subsystemMetadataKey {
                if let newValue { subsystem = newValue.description }
            } else {
                storedMetadata[key] = newValue
            }
        }
    }

    public func log(event: LogEvent) {
        // Logger asked `logLevel` already; only `none` needs a second look, which `.critical` stands for.
        if event.level == .critical, logs.store.level(for: subsystem) == .none { return }
        var fields: [String: String] = [:]
        for (key, value) in storedMetadata { fields[key] = value.description }
        if let provided = metadataProvider?.get() {
            for (key, value) in provided { fields[key] = value.description }
        }
        if let metadata = event.metadata {
            for (key, value) in metadata where key != Self.subsystemMetadataKey { fields[key] = value.description }
        }
        if let error = event.error, fields["error"] == nil { fields["error"] = "\(error)" }
        logs.emit(
            LogEntry(
                timeMilliseconds: Self.now(), level: LogLevel(event.level), subsystem: subsystem,
                message: event.message.description, fields: fields, file: event.file, function: event.function,
                line: event.line))
    }

    /// Milliseconds since the Unix epoch, from the real-time clock.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}
