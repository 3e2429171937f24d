import ArgumentParser

/// Positions and durations given as options: seconds, m:ss or h:mm:ss.
enum PlaybackTimeArgument {
    static func parse(_ text: String, what: String) throws -> Double {
        guard let seconds = PlaybackTime.parse(text) else {
            throw ValidationError("'\(text)' is not a \(what): give seconds (90), m:ss (1:30) or h:mm:ss")
        }
        return seconds
    }
}
