import CastdAPI

/// One log record castd kept: what a log statement said, where, and its metadata flattened to
/// strings.
public struct LogEntry: Sendable, Equatable {
    /// Set by ``LogRecordBuffer/append(_:)``: increases by one per record kept.
    public var sequence: UInt64 = 0
    /// Milliseconds since the Unix epoch.
    public var timeMilliseconds: Int64
    public var level: LogLevel
    public var subsystem: String
    public var message: String
    /// Metadata (`device.id`, `rpc.method`, …), each value as its description.
    public var fields: [String: String]
    public var file: String
    public var function: String
    public var line: UInt
    /// Set on what a follower gets: how many records it missed just before this one.
    public var droppedBefore: UInt64 = 0

    public init(
        timeMilliseconds: Int64, level: LogLevel, subsystem: String, message: String, fields: [String: String] = [:],
        file: String = "", function: String = "", line: UInt = 0
    ) {
        self.timeMilliseconds = timeMilliseconds
        self.level = level
        self.subsystem = subsystem
        self.message = message
        self.fields = fields
        self.file = file
        self.function = function
        self.line = line
    }

    /// As castd.v1 sends it.
    public var api: Castd_V1_LogRecord {
        var record = Castd_V1_LogRecord()
        record.sequence = sequence
        record.timeMs = timeMilliseconds
        record.level = level.api
        record.subsystem = subsystem
        record.message = message
        record.fields = fields
        record.droppedBefore = droppedBefore
        return record
    }
}
