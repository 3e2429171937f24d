import CSystemd
import CastdSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Whether standard error is the systemd journal, by systemd's documented rule: a service whose
/// stdout or stderr systemd connects to the journal gets `JOURNAL_STREAM=DEVICE:INODE` of that
/// stream, and the process checks it against fstat(2) of its own fd 2. A child that merely
/// inherited the variable, with its stderr sent elsewhere, does not match, and logs to stderr.
public enum JournalStream {
    /// True only when `JOURNAL_STREAM` names the device and inode of this process's fd 2.
    public static func isStderrConnectedToJournal(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Bool {
        isConnectedToJournal(fd: 2, environment: environment)
    }

    /// True only when `JOURNAL_STREAM` names the device and inode of `fd`.
    public static func isConnectedToJournal(fd: Int32, environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"], let (device, inode) = parse(value) else { return false }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// `DEVICE:INODE`, both decimal, as systemd writes them.
    static func parse(_ value: String) -> (device: UInt64, inode: UInt64)? {
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return nil }
        return (device, inode)
    }
}

/// Records as journal entries: their fields, and sending them with sd_journal_sendv(3).
public enum JournalFields {
    /// Fields castd sets itself, and fields journald gives a meaning of its own: a metadata key
    /// that maps to one of them gets the `F_` prefix instead of overriding it.
    public static let reserved: Set<String> = [
        "MESSAGE", "MESSAGE_ID", "PRIORITY", "CODE_FILE", "CODE_LINE", "CODE_FUNC", "ERRNO", "INVOCATION_ID",
        "USER_INVOCATION_ID", "SYSLOG_FACILITY", "SYSLOG_IDENTIFIER", "SYSLOG_PID", "SYSLOG_TIMESTAMP", "SYSLOG_RAW",
        "DOCUMENTATION", "TID", "UNIT", "USER_UNIT", "OBJECT_PID", "CASTD_SUBSYSTEM",
    ]

    /// Where journald listens for entries (sd_journal_sendv(3) sends there).
    public static let socketPath = "/run/systemd/journal/socket"

    /// The longest field name journald accepts.
    public static let maximumNameLength = 64

    /// The journal field for a metadata key: upper-cased, every character outside A–Z and 0–9
    /// replaced by `_` (`device.id` → `DEVICE_ID`, `cast.namespace` → `CAST_NAMESPACE`); a name
    /// that would start with a digit or `_` (journald keeps `_` for its own trusted fields), be
    /// empty, or be one of ``reserved`` is prefixed with `F_`; then cut to 64 characters.
    public static func name(forMetadataKey key: String) -> String {
        var name = String(
            String.UnicodeScalarView(
                key.unicodeScalars.map { scalar -> Unicode.Scalar in
                    switch scalar {
                    case "A"..."Z", "0"..."9": scalar
                    case "a"..."z": Unicode.Scalar(scalar.value - 32)!
                    default: "_"
                    }
                }))
        if name.isEmpty || name.first!.isNumber || name.first == "_" || reserved.contains(name) {
            name = "F_" + name
        }
        return String(name.prefix(maximumNameLength))
    }

    /// The fields of `entry`'s journal entry, in order: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER,
    /// CASTD_SUBSYSTEM, CODE_FILE, CODE_LINE, CODE_FUNC, then every metadata field, by key.
    public static func fields(for entry: LogEntry, identifier: String = "castd") -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [
            ("MESSAGE", entry.message),
            ("PRIORITY", String(entry.level.syslogPriority)),
            ("SYSLOG_IDENTIFIER", identifier),
            ("CASTD_SUBSYSTEM", entry.subsystem),
        ]
        if !entry.file.isEmpty {
            fields.append(("CODE_FILE", entry.file))
            fields.append(("CODE_LINE", String(entry.line)))
        }
        if !entry.function.isEmpty { fields.append(("CODE_FUNC", entry.function)) }
        for key in entry.fields.keys.sorted() {
            fields.append((name(forMetadataKey: key), entry.fields[key]!))
        }
        return fields
    }

    /// Sends one entry to the journal's socket. Returns sd_journal_sendv's result: 0, or a
    /// negative errno (journald refused it). If the socket does not exist, libsystemd drops the
    /// entry and returns 0.
    static func send(_ fields: [(name: String, value: String)]) -> Int32 {
        // Every "NAME=value" in one buffer, then an iovec for each: values may hold newlines,
        // which libsystemd sends in the journal's binary form.
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for (name, value) in fields {
            let start = bytes.count
            bytes.append(contentsOf: name.utf8)
            bytes.append(UInt8(ascii: "="))
            bytes.append(contentsOf: value.utf8)
            ranges.append(start..<bytes.count)
        }
        return bytes.withUnsafeMutableBytes { raw -> Int32 in
            var vectors = ranges.map { range in
                iovec(iov_base: raw.baseAddress! + range.lowerBound, iov_len: range.count)
            }
            return sd_journal_sendv(&vectors, Int32(vectors.count))
        }
    }
}

/// Records as lines on standard error.
public enum StandardErrorLine {
    /// `2026-11-22T10:00:00.123Z info CastChannel: message key=value …`: UTC time, level,
    /// subsystem, the message, then the metadata by key. Control characters are escaped, so a
    /// record is always one line; values with spaces, quotes or `=` are quoted.
    public static func format(_ entry: LogEntry) -> String {
        var line = timestamp(entry.timeMilliseconds)
        line += " \(entry.level.name) \(entry.subsystem): \(LogText.escaped(entry.message))"
        for key in entry.fields.keys.sorted() {
            line += " \(LogText.escaped(key))=\(quoted(entry.fields[key]!))"
        }
        return line
    }

    /// `2026-11-22T10:00:00.123Z`.
    public static func timestamp(_ milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds.floorDivided(by: 1000))
        let fraction = Int(milliseconds - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2))"
            + "T\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2))"
            + ".\(pad(fraction, 3))Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    static func quoted(_ value: String) -> String {
        let needsQuotes =
            value.isEmpty || value.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" }
        guard needsQuotes else { return LogText.escaped(value) }
        return "\""
            + LogText.escaped(
                value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))
            + "\""
    }

    /// Writes `line` and a newline to fd 2 with one write(2) (more only if the kernel takes part
    /// of it), so that concurrent records do not interleave.
    static func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(2, raw.baseAddress! + offset, raw.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return  // stderr is gone or full: nowhere left to say so
                }
            }
        }
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
