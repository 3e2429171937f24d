/// Positions and durations as people write and read them: `90`, `90.5`, `1:30`, `1:02:03`.
enum PlaybackTime {
    static func parse(_ text: String) -> Double? { parse(Substring(text)) }

    /// Seconds from `90`, `90.5`, `1:30`, `1:30.5` or `1:02:03`; nil for anything else (signs,
    /// exponents, `inf`, minutes or seconds of 60 or more after a colon).
    static func parse(_ text: Substring) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (index, part) in parts.enumerated() {
            let isLast = index == parts.count - 1
            guard let value = number(part, allowFraction: isLast) else { return nil }
            // After a colon, minutes and seconds are 0…59 (the first part may be any size).
            if index > 0, value >= 60 { return nil }
            total = total * 60 + value
        }
        return total
    }

    private static func number(_ text: Substring, allowFraction: Bool) -> Double? {
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard let whole = pieces.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit) else { return nil }
        switch pieces.count {
        case 1:
            return Double(text)
        case 2 where allowFraction && !pieces[1].isEmpty && pieces[1].allSatisfy(\.isASCIIDigit):
            return Double(text)
        default:
            return nil
        }
    }

    /// `0:05`, `1:30`, `1:02:03` (whole seconds, rounded down; negative and non-finite as 0).
    static func format(_ seconds: Double) -> String {
        let total = seconds.isFinite && seconds > 0 ? Int(seconds.rounded(.down)) : 0
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        if hours > 0 { return "\(hours):\(twoDigits(minutes)):\(twoDigits(secs))" }
        return "\(minutes):\(twoDigits(secs))"
    }

    /// `45s`, `5m 10s`, `2h 3m`, `3d 4h`: how long something has run.
    static func formatUptime(_ seconds: Double) -> String {
        let total = seconds.isFinite && seconds > 0 ? Int(seconds) : 0
        let (days, hours, minutes, secs) = (total / 86400, total / 3600 % 24, total / 60 % 60, total % 60)
        if days > 0 { return "\(days)d \(hours)h" }
        if hours > 0 { return "\(hours)h \(minutes)m" }
        if minutes > 0 { return "\(minutes)m \(secs)s" }
        return "\(secs)s"
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
