/// An image URL as the fetcher takes it: http or https, a host (a name, an IPv4 address, or an
/// IPv6 literal in brackets), a port, and the path and query it asks for.
///
/// Its own parser rather than Foundation's `URL` (castc links FoundationEssentials only), and a
/// strict one: image URLs come from whatever media a sender loaded, so anything unusual is
/// refused rather than guessed at. No user info (`user:password@host`: a credential in a URL,
/// or a trick to make `good.com@evil.com` read like good.com), no space, control character or
/// backslash anywhere, no host that is not ASCII (no IDNA here), ports 1 to 65535. Letters
/// outside ASCII in the path and query are sent percent-encoded as UTF-8; the fragment is
/// dropped, as browsers do.
public struct ArtworkURL: Sendable, Hashable, CustomStringConvertible {
    public enum Scheme: String, Sendable, Hashable {
        case http
        case https

        public var defaultPort: Int { self == .http ? 80 : 443 }
    }

    public var scheme: Scheme
    /// The host: lowercase, without the brackets of an IPv6 literal.
    public var host: String
    public var port: Int
    /// The path, starting with `/`.
    public var path: String
    /// The query, without its `?`; nil when there is none.
    public var query: String?

    /// Parses an absolute http or https URL; ``ArtworkError/invalidURL(_:reason:)`` says what
    /// is wrong with one it refuses.
    public init(parsing text: String) throws(ArtworkError) {
        let invalid = { (reason: String) in ArtworkError.invalidURL(Self.redacted(text), reason: reason) }
        try Self.checkCharacters(text, invalid)
        guard let colon = text.firstIndex(of: ":"), Self.isScheme(text[..<colon]) else {
            throw invalid("it has no scheme (give http:// or https://)")
        }
        guard let scheme = Scheme(rawValue: text[..<colon].lowercased()) else {
            throw invalid("only http and https are fetched, not \(text[..<colon])")
        }
        let rest = text[text.index(after: colon)...]
        guard rest.hasPrefix("//") else { throw invalid("it has no host (give \(scheme.rawValue)://HOST/PATH)") }
        let afterSlashes = rest.dropFirst(2)
        let authorityEnd = afterSlashes.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterSlashes.endIndex
        let authority = afterSlashes[..<authorityEnd]
        guard !authority.contains("@") else { throw invalid("it has user info (user@host); put no credentials in it") }
        let (host, port) = try Self.parseAuthority(authority, scheme: scheme, invalid)
        self.scheme = scheme
        self.host = host
        self.port = port
        (path, query) = Self.splitTarget(afterSlashes[authorityEnd...])
        path = Self.removingDotSegments(path.isEmpty ? "/" : path)
    }

    /// The URL a redirect's `Location` names, relative to this one (RFC 3986, section 5.2): an
    /// absolute URL, `//host/path`, `/path`, `path` or `?query`.
    public func resolving(_ reference: String) throws(ArtworkError) -> ArtworkURL {
        let invalid = { (reason: String) in ArtworkError.invalidURL(Self.redacted(reference), reason: reason) }
        try Self.checkCharacters(reference, invalid)
        if let colon = reference.firstIndex(of: ":"), Self.isScheme(reference[..<colon]) {
            return try ArtworkURL(parsing: reference)
        }
        if reference.hasPrefix("//") { return try ArtworkURL(parsing: scheme.rawValue + ":" + reference) }
        var resolved = self
        let (referencePath, referenceQuery) = Self.splitTarget(reference[...])
        if referencePath.isEmpty {
            if referenceQuery != nil { resolved.query = referenceQuery }
            return resolved
        }
        let merged =
            referencePath.hasPrefix("/")
            ? referencePath : String(path[...(path.lastIndex(of: "/") ?? path.startIndex)]) + referencePath
        resolved.path = Self.removingDotSegments(merged)
        resolved.query = referenceQuery
        return resolved
    }

    /// What goes in the request line: the path and query, letters outside ASCII percent-encoded.
    public var requestTarget: String {
        Self.percentEncodingNonASCII(path + (query.map { "?" + $0 } ?? ""))
    }

    /// `host`, `host:port` when the port is not the scheme's, `[v6]` or `[v6]:port`: the `Host`
    /// header's value.
    public var authority: String {
        let name = isIPv6 ? "[\(host)]" : host
        return port == scheme.defaultPort ? name : "\(name):\(port)"
    }

    /// Whether the host is an IP address (then TLS sends no server name, and the certificate
    /// must name the address).
    public var isIPAddress: Bool {
        isIPv6
            || (host.split(separator: ".", omittingEmptySubsequences: false).count == 4
                && host.allSatisfy { $0 == "." || $0.isASCIIDigit })
    }

    var isIPv6: Bool { host.contains(":") }

    public var description: String { "\(scheme.rawValue)://\(authority)\(requestTarget)" }

    /// This URL as logs and errors show it: without its query, which may hold a token
    /// (`https://host/a.png?…`).
    public var redacted: String {
        "\(scheme.rawValue)://\(authority)\(Self.percentEncodingNonASCII(path))\(query == nil ? "" : "?…")"
    }

    /// Any URL text shown as ``redacted``: cut at its `?` (or `#`), and at most 200 characters.
    public static func redacted(_ text: String) -> String {
        guard let end = text.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return String(text.prefix(200)) }
        return String(text[..<end].prefix(200)) + (text[end] == "?" ? "?…" : "")
    }

    // MARK: parsing

    private static func checkCharacters(_ text: String, _ invalid: (String) -> ArtworkError) throws(ArtworkError) {
        guard !text.isEmpty else { throw invalid("it is empty") }
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x20: throw invalid("it contains a space (percent-encode it as %20)")
            case 0x00..<0x20, 0x7F..<0xA0: throw invalid("it contains a control character")
            case 0x5C: throw invalid("it contains a backslash")
            default: continue
            }
        }
    }

    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }

    private static func parseAuthority(
        _ authority: Substring, scheme: Scheme, _ invalid: (String) -> ArtworkError
    ) throws(ArtworkError) -> (host: String, port: Int) {
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("its IPv6 address has no ]") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("something follows its IPv6 address") }
                portText = after.dropFirst()
            }
            guard host.contains(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw invalid("'[\(host)]' is not an IPv6 address")
            }
        } else {
            if let colon = authority.firstIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            } else {
                host = authority
            }
            guard !host.isEmpty else { throw invalid("it has no host") }
            guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }) else {
                throw invalid("its host '\(host)' is not a host name (letters, digits, - and . only; no IDN)")
            }
        }
        var port = scheme.defaultPort
        if let portText, !portText.isEmpty {
            guard portText.count <= 5, portText.allSatisfy(\.isASCIIDigit), let number = Int(portText),
                (1...65535).contains(number)
            else { throw invalid("its port '\(portText)' is not a port (1 to 65535)") }
            port = number
        }
        return (host.lowercased(), port)
    }

    /// `/path?query#fragment` → (`/path`, `query`), the fragment dropped.
    private static func splitTarget(_ text: Substring) -> (path: String, query: String?) {
        let withoutFragment = text[..<(text.firstIndex(of: "#") ?? text.endIndex)]
        guard let question = withoutFragment.firstIndex(of: "?") else { return (String(withoutFragment), nil) }
        return (
            String(withoutFragment[..<question]), String(withoutFragment[withoutFragment.index(after: question)...])
        )
    }

    /// RFC 3986's remove_dot_segments for an absolute path: `/a/b/../c/./d` → `/a/c/d`.
    static func removingDotSegments(_ path: String) -> String {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var output: [Substring] = []
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/")
    }

    private static func percentEncodingNonASCII(_ text: String) -> String {
        guard !text.utf8.allSatisfy({ $0 < 0x80 }) else { return text }
        let digits = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            if byte < 0x80 {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
