import CastdSupport
import Logging

/// A log handler that keeps every record in memory, for tests that watch what the library logs.
public struct RecordingLogHandler: LogHandler {
    public struct Record: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: Logger.Metadata

        /// `level message key=value …`, the metadata sorted by key.
        public var line: String {
            let fields = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return "\(level) \(message) \(fields.joined(separator: " "))"
        }
    }

    public final class Storage: Sendable {
        private let records = Locked<[Record]>([])

        public var all: [Record] {
            records.withLock { $0 }
        }

        public func append(_ record: Record) {
            records.withLock { $0.append(record) }
        }
    }

    public let storage: Storage
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        storage.append(
            Record(
                level: event.level, message: "\(event.message)",
                metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
    }

    /// A logger whose records `Storage` keeps.
    public static func logger(_ label: String) -> (Logger, Storage) {
        let storage = Storage()
        return (Logger(label: label) { _ in RecordingLogHandler(storage: storage) }, storage)
    }
}
