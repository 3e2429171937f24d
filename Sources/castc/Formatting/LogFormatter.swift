import CastClient
import CastdSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `castc logs` and `castc log-level`: log records and the log filter, for people.
enum LogFormatter {
    /// `10:00:00.123 info     CastChannel  sent  cast.namespace=urn:… cast.type=LAUNCH`: the
    /// local time, the level, the subsystem, the message, then the fields by name. Line breaks
    /// and other control characters are escaped, so that a record is one line.
    static func line(_ record: CastdLogRecord, timeZone: TimeZone = .current) -> String {
        var line =
            "\(timestamp(record.timeMs, timeZone: timeZone)) \(pad(record.level.name, 8)) \(pad(record.subsystem, 11))  \(LogText.escaped(record.message))"
        let fields = record.fields.keys.sorted().map { "\(LogText.escaped($0))=\(quoted(record.fields[$0]!))" }
        if !fields.isEmpty { line += "  " + fields.joined(separator: " ") }
        return line
    }

    /// `14:03:07.250` in `timeZone`, from whole milliseconds (no rounding through a Double).
    static func timestamp(_ milliseconds: Int64, timeZone: TimeZone) -> String {
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let whole = fraction < 0 ? seconds - 1 : seconds
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents(
            [.hour, .minute, .second], from: Date(timeIntervalSince1970: Double(whole)))
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let ms = Int(fraction < 0 ? fraction + 1000 : fraction)
        return "\(pad(parts.hour ?? 0, 2)):\(pad(parts.minute ?? 0, 2)):\(pad(parts.second ?? 0, 2)).\(pad(ms, 3))"
    }

    /// What castc says on stderr before a record that comes after a gap.
    static func gap(_ record: CastdLogRecord) -> String? {
        guard record.droppedBefore > 0 else { return nil }
        let n = record.droppedBefore
        return "castc: \(n) log record\(n == 1 ? "" : "s") skipped: castc read more slowly than castd logged"
    }

    /// The filter: the minimum level, each pattern with its level in the order they apply, and
    /// the subsystems there are, wrapped to `columns`.
    ///
    /// ```
    /// minimum       info
    /// CastChannel*  verbose
    ///
    /// Subsystems: Daemon, Config, RPC, …
    /// ```
    static func report(_ filter: CastdLogFilter, columns: Int = 80) -> String {
        let rows = [["minimum", filter.minimumLevel.name]] + filter.subsystems.map { [$0.pattern, $0.level.name] }
        var text = TextTable.render(rows)
        if filter.subsystems.count > 1 { text += "\n(the last pattern that matches a subsystem decides its level)" }
        if !filter.knownSubsystems.isEmpty {
            text += "\n\n" + wrap("Subsystems: " + filter.knownSubsystems.joined(separator: ", "), columns: columns)
        }
        return text
    }

    /// The patterns that match none of `known` (fnmatch(3), as castd matches them).
    static func unmatched(_ patterns: [String], known: [String]) -> [String] {
        guard !known.isEmpty else { return [] }
        return patterns.filter { pattern in !known.contains { fnmatch(pattern, $0, 0) == 0 } }
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    private static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) else {
            return LogText.escaped(value)
        }
        return "\"" + LogText.escaped(value.replacingOccurrences(of: "\"", with: "\\\"")) + "\""
    }

    private static func wrap(_ text: String, columns: Int) -> String {
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ") {
            if !current.isEmpty, current.count + 1 + word.count > columns {
                lines.append(current)
                current = "  " + word
            } else {
                current += (current.isEmpty ? "" : " ") + word
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines.joined(separator: "\n")
    }
}
