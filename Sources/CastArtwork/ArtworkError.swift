/// Why an image could not be had, as one line that names the URL.
///
/// The URLs an error carries are already shortened as logs show them
/// (``ArtworkURL/redacted(_:)``: no query string, which may hold a token), so an error can be
/// logged or shown as it is.
public enum ArtworkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not an http or https URL the fetcher takes (another scheme, user info, a
    /// space or a control character, no host, a bad port, …).
    case invalidURL(String, reason: String)
    /// A redirect pointed somewhere the fetcher does not go (no Location, another scheme, …).
    case badRedirect(url: String, location: String, reason: String)
    case tooManyRedirects(url: String, count: Int, limit: Int)
    /// The URL, or a redirect, leads to an address artwork is never fetched from (this machine's
    /// loopback, a link-local address, a private network after a public server's redirect):
    /// refused before connecting (``ArtworkAddressPolicy``).
    case refusedAddress(url: String, address: String, reason: String)
    case connectionFailed(url: String, reason: String)
    /// The TLS handshake failed: an untrusted certificate, a certificate for another host, …
    case tlsFailed(url: String, reason: String)
    /// The whole fetch, connection and redirects and body, took longer than its timeout.
    case timedOut(url: String, timeout: Duration)
    /// The server answered with a status other than 200 (or a redirect).
    case httpStatus(url: String, code: Int, reason: String)
    /// Content-Length said more than the limit (`contentLength`), or the body grew past it
    /// (`contentLength` nil): the fetch stopped there.
    case tooLarge(url: String, limit: Int, contentLength: Int?)
    /// The body does not start like a PNG, JPEG, GIF or WebP image; `start` is its first bytes.
    case notAnImage(url: String, start: [UInt8])
    /// The image's header says it is wider or taller than `limit` pixels.
    case imageTooLarge(url: String, width: Int, height: Int, limit: Int)
    /// The image's header, where its size is, is malformed or cut short.
    case badImageHeader(url: String, format: ArtworkFormat, reason: String)
    /// The answer ended early or broke the HTTP protocol.
    case incomplete(url: String, reason: String)
    /// The fetch's task was cancelled.
    case cancelled(url: String)
    /// The media has no image with a URL.
    case noImage
    /// The cache directory or a file in it could not be made, written or read.
    case cache(path: String, reason: String)

    public var description: String {
        switch self {
        case .invalidURL(let text, let reason):
            "'\(text)' is not an image URL castd can fetch: \(reason)"
        case .badRedirect(let url, let location, let reason):
            "\(url) redirects to '\(location)', which is refused: \(reason)"
        case .tooManyRedirects(let url, let count, let limit):
            "too many redirects (\(count)) from \(url): at most \(limit) are followed"
        case .refusedAddress(let url, let address, let reason):
            "refused to fetch \(url) from \(address): \(reason)"
        case .connectionFailed(let url, let reason):
            "cannot fetch \(url): \(reason)"
        case .tlsFailed(let url, let reason):
            "cannot fetch \(url): \(reason)"
        case .timedOut(let url, let timeout):
            "\(url) did not answer within \(Self.describe(timeout))"
        case .httpStatus(let url, let code, let reason):
            "\(url) answered HTTP \(code)\(reason.isEmpty ? "" : " (\(reason))")"
        case .tooLarge(let url, let limit, let contentLength?):
            "\(url) is larger than \(Self.describe(bytes: limit)) (Content-Length \(contentLength))"
        case .tooLarge(let url, let limit, nil):
            "\(url) is larger than \(Self.describe(bytes: limit)) (stopped reading there)"
        case .notAnImage(let url, let start) where start.isEmpty:
            "\(url) is empty, not an image"
        case .notAnImage(let url, let start):
            "\(url) is not an image (starts with `\(Self.printable(start))`)"
        case .imageTooLarge(let url, let width, let height, let limit):
            "\(url) is an image of \(width)×\(height) pixels; at most \(limit)×\(limit) is taken"
        case .badImageHeader(let url, let format, let reason):
            "\(url) is not a valid \(format.rawValue.uppercased()) image: \(reason)"
        case .incomplete(let url, let reason):
            "\(url): \(reason)"
        case .cancelled(let url):
            "the fetch of \(url) was cancelled"
        case .noImage:
            "the media has no images"
        case .cache(let path, let reason):
            "the artwork cache \(path): \(reason)"
        }
    }

    /// `10 s`, `0.5 s`, `250 ms`.
    static func describe(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if milliseconds < 1000 { return "\(milliseconds) ms" }
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000) s" }
        var fraction = String(milliseconds % 1000)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(milliseconds / 1000).\(fraction) s"
    }

    /// `10 MiB`, `64 KiB`, `1500 bytes`.
    static func describe(bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }

    /// The first few bytes as text: printable ASCII as it is, anything else as `\xNN`.
    static func printable(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF")
        var text = ""
        for byte in bytes.prefix(4) {
            if (0x20...0x7E).contains(byte) && byte != UInt8(ascii: "`") && byte != UInt8(ascii: "\\") {
                text.append(Character(Unicode.Scalar(byte)))
            } else {
                text += "\\x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
            }
        }
        return text
    }
}
