import ArgumentParser

/// Where `castc seek` goes: `120`, `1:30` (absolute), `+10`, `-1:00` (relative), or any of them
/// with --relative.
struct SeekTarget: Equatable {
    /// Seconds; negative only when relative.
    var seconds: Double
    var relative: Bool

    static func parse(_ text: String, relative: Bool = false) throws -> SeekTarget {
        var body = Substring(text)
        var sign = 1.0
        var isRelative = relative
        if let first = body.first, first == "+" || first == "-" {
            sign = first == "-" ? -1 : 1
            isRelative = true
            body = body.dropFirst()
        }
        guard let seconds = PlaybackTime.parse(body) else {
            throw ValidationError(
                "'\(text)' is not a position: give seconds (90), m:ss (1:30) or h:mm:ss, or +/- to seek relative (+10, -1:00)"
            )
        }
        return SeekTarget(seconds: sign * seconds, relative: isRelative)
    }
}
