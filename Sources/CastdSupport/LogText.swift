/// Text of a log record as it is shown on one line (castd's stderr records, `castc logs`).
public enum LogText {
    /// `text` with its control characters written out: `\n`, `\r` and `\t` as such, the other
    /// C0 controls and DEL as `\u{hex}`, so that a record stays one line and writes nothing to
    /// the terminal.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The first characters of a secret (a token, a handle), enough to tell two apart in a log
    /// or an error, too few to use: "3f9a1c…".
    public static func prefix(_ secret: String, keeping count: Int = 6) -> String {
        secret.count <= count ? "…" : String(escaped(String(secret.prefix(count)))) + "…"
    }
}
