/// Subtitles for a Cast device, which takes WebVTT only: a WebVTT file passed through, a SubRip
/// (.srt) file converted. Pure functions on bytes, bounded in what they accept.
public enum WebVTT {
    /// The largest subtitle file accepted, in bytes.
    public static let maximumInputBytes = 8 * 1024 * 1024
    /// The most cues a SubRip file may have.
    public static let maximumCues = 100_000

    /// Why a subtitle file cannot be served as WebVTT.
    public enum ConversionError: Error, Equatable, Sendable {
        /// The file has more than `limit` bytes.
        case tooLarge(bytes: Int, limit: Int)
        /// The SubRip file has more than `limit` cues.
        case tooManyCues(limit: Int)
        /// The file is not WebVTT and no SubRip cue was found in it: empty, or not subtitles.
        case noCues
    }

    /// WebVTT for the subtitle file `bytes`, decided by its content: a file that starts with the
    /// WebVTT header ("WEBVTT" after an optional byte order mark, then the end, a space, a tab
    /// or a line break) is passed through (UTF-8 without the mark; in another encoding,
    /// converted to UTF-8); anything else is read as SubRip (``fromSubRip(_:)``).
    public static func convert(_ bytes: [UInt8]) throws(ConversionError) -> [UInt8] {
        guard bytes.count <= maximumInputBytes else {
            throw .tooLarge(bytes: bytes.count, limit: maximumInputBytes)
        }
        // Well-formed UTF-8 comes back as it is, but for a byte order mark.
        let text = SubtitleText.utf8(bytes).bytes
        if hasHeader(text) { return text }
        return try fromSubRip(text: text)
    }

    /// WebVTT for the SubRip file `bytes` (see ``convert(_:)`` for a file that may be either).
    ///
    /// Reads the files people have: UTF-8 with or without a byte order mark (a stray ill-formed
    /// byte as U+FFFD), UTF-16 with one or with the look of it, else Windows-1252; CRLF, LF or CR line ends; cue numbers missing, not numeric or not in
    /// order; blank lines (of white space or not) between cues or none; times with a comma or
    /// a dot before the milliseconds, hours of one to three digits or none, SubRip's position
    /// hints after them (`X1:… Y1:…`, dropped).
    ///
    /// Text: `<b>`, `<i>`, `<u>` kept (lowercased, attributes dropped), every other tag
    /// (`<font …>`) dropped with its text kept, `{\an8}`-style override codes dropped, a
    /// stray `&`, `<` or `>` escaped (so a line with "-->" stays text), control characters dropped.
    ///
    /// Cues: sorted by start time (stable), overlaps kept; a cue whose end is not after its start,
    /// or whose text is empty once cleaned, is dropped. Lines before the first timing line and
    /// text after a blank line that no timing line follows are dropped.
    ///
    /// Output: UTF-8 `WEBVTT`, a blank line, then each cue as `HH:MM:SS.mmm --> HH:MM:SS.mmm`,
    /// its text lines and a blank line.
    public static func fromSubRip(_ bytes: [UInt8]) throws(ConversionError) -> [UInt8] {
        guard bytes.count <= maximumInputBytes else {
            throw .tooLarge(bytes: bytes.count, limit: maximumInputBytes)
        }
        return try fromSubRip(text: SubtitleText.utf8(bytes).bytes)
    }

    /// SubRip `text` (UTF-8, no byte order mark) to WebVTT, of at most `maximumCues` cues.
    static func fromSubRip(text: [UInt8], maximumCues: Int = maximumCues) throws(ConversionError) -> [UInt8] {
        var cues = try SubRip.cues(in: text, limit: maximumCues)
        cues.removeAll { $0.end <= $0.start || $0.text.isEmpty }
        guard !cues.isEmpty else { throw .noCues }
        // Stable: ties keep the file's order.
        let order = cues.indices.sorted { (cues[$0].start, $0) < (cues[$1].start, $1) }
        var output = Array("WEBVTT\n\n".utf8)
        for index in order {
            let cue = cues[index]
            output += timestamp(cue.start)
            output += Array(" --> ".utf8)
            output += timestamp(cue.end)
            output.append(0x0A)
            output += cue.text
            output.append(0x0A)
        }
        return output
    }

    /// "HH:MM:SS.mmm" (more digits of hours when needed) for `milliseconds`.
    static func timestamp(_ milliseconds: Int) -> [UInt8] {
        func digits(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let hours = milliseconds / 3_600_000
        let minutes = milliseconds / 60_000 % 60
        let seconds = milliseconds / 1000 % 60
        let rest = milliseconds % 1000
        return Array("\(digits(hours, 2)):\(digits(minutes, 2)):\(digits(seconds, 2)).\(digits(rest, 3))".utf8)
    }

    /// Whether UTF-8 `text` (no byte order mark) starts with the WebVTT header.
    static func hasHeader(_ text: [UInt8]) -> Bool {
        guard text.starts(with: Array("WEBVTT".utf8)) else { return false }
        guard text.count > 6 else { return true }
        return [0x20, 0x09, 0x0A, 0x0D].contains(text[6])
    }
}
