import CastdSupport

/// The unguessable name of one published file: 128 bits from `SystemRandomNumberGenerator`
/// (the kernel's getrandom), written in a URL as 32 lowercase hex digits.
///
/// Its `description` is a short prefix, safe for logs; the whole token appears only in the URL
/// that ``MediaServer/url(for:host:)`` makes.
public struct MediaToken: Hashable, Sendable, CustomStringConvertible {
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A new random token.
    static func random() -> MediaToken {
        var generator = SystemRandomNumberGenerator()
        return MediaToken(high: generator.next(), low: generator.next())
    }

    /// The token in a URL's path: 32 lowercase hex digits.
    var hex: String { Self.hexWord(high) + Self.hexWord(low) }

    /// The first 8 hex digits and an ellipsis (32 of the 128 bits): enough to tell tokens apart in
    /// a log, too little to guess the rest (`LogText.prefix`, as every secret castd logs).
    public var description: String { LogText.prefix(hex, keeping: 8) }

    /// Reads the 32 hex digits of a URL path segment (either case); nil for anything else.
    init?<Bytes: Collection<UInt8>>(hexDigits: Bytes) {
        guard hexDigits.count == 32 else { return nil }
        var words: (UInt64, UInt64) = (0, 0)
        for (index, byte) in hexDigits.enumerated() {
            guard let nibble = HexDigit.value(byte) else { return nil }
            if index < 16 {
                words.0 = words.0 << 4 | UInt64(nibble)
            } else {
                words.1 = words.1 << 4 | UInt64(nibble)
            }
        }
        self.init(high: words.0, low: words.1)
    }

    /// The token a URL of the media server names (http://HOST:PORT/TOKEN[.ext]); nil for any
    /// other URL.
    public init?(url: String) {
        guard url.hasPrefix("http://"), let slash = url.lastIndex(of: "/") else { return nil }
        let segment = url[url.index(after: slash)...].prefix { $0 != "." && $0 != "?" }
        self.init(hexDigits: Array(segment.utf8))
    }

    private static func hexWord(_ word: UInt64) -> String {
        let digits = String(word, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
