import ArgumentParser

/// `castc volume`'s level: `0.4` (0 to 1) or `40%` (0 to 100 %).
enum VolumeLevel {
    static func parse(_ text: String) throws -> Double {
        let isPercent = text.hasSuffix("%")
        let number = isPercent ? String(text.dropLast()) : text
        guard !number.isEmpty, number.allSatisfy({ $0.isASCIIDigit || $0 == "." }), let value = Double(number) else {
            throw ValidationError("'\(text)' is not a volume: give a level from 0 to 1 (0.4) or a percentage (40%)")
        }
        let level = isPercent ? value / 100 : value
        guard (0...1).contains(level) else {
            let hint = isPercent ? "" : " (for \(number) percent, write \(number)%)"
            throw ValidationError("volume \(text) is out of range: give 0 to 1, or 0% to 100%\(hint)")
        }
        return level
    }

    /// `40%`
    static func format(_ level: Double) -> String {
        "\(Int((level * 100).rounded()))%"
    }
}
