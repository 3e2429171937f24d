import CastArtwork
import Testing

/// The fetcher's own URL parser: what it takes, what it refuses, and how redirects resolve.
@Suite struct ArtworkURLTests {
    struct Good: Sendable, CustomTestStringConvertible {
        var text: String
        var scheme: ArtworkURL.Scheme
        var host: String
        var port: Int
        var target: String
        var authority: String
        var testDescription: String { text }
    }

    static let good: [Good] = [
        Good(
            text: "http://example.com/a.png", scheme: .http, host: "example.com", port: 80, target: "/a.png",
            authority: "example.com"),
        Good(
            text: "HTTPS://Example.COM:8443/Art/A.png?size=2&x=%20", scheme: .https, host: "example.com", port: 8443,
            target: "/Art/A.png?size=2&x=%20", authority: "example.com:8443"),
        Good(
            text: "http://[::1]:8080/x", scheme: .http, host: "::1", port: 8080, target: "/x",
            authority: "[::1]:8080"),
        Good(
            text: "https://[2001:db8::7]/a.jpg", scheme: .https, host: "2001:db8::7", port: 443, target: "/a.jpg",
            authority: "[2001:db8::7]"),
        Good(
            text: "http://127.0.0.1:80/", scheme: .http, host: "127.0.0.1", port: 80, target: "/",
            authority: "127.0.0.1"),
        Good(
            text: "http://example.com", scheme: .http, host: "example.com", port: 80, target: "/",
            authority: "example.com"),
        Good(
            text: "http://example.com?q=1", scheme: .http, host: "example.com", port: 80, target: "/?q=1",
            authority: "example.com"),
        Good(
            text: "http://example.com/a/../b/./c.png#frag", scheme: .http, host: "example.com", port: 80,
            target: "/b/c.png", authority: "example.com"),
        Good(
            text: "http://example.com/Café.png", scheme: .http, host: "example.com", port: 80,
            target: "/Caf%C3%A9.png", authority: "example.com"),
        Good(
            text: "http://example.com:/a", scheme: .http, host: "example.com", port: 80, target: "/a",
            authority: "example.com"),
        Good(
            text: "http://media_server.local:8000/a", scheme: .http, host: "media_server.local", port: 8000,
            target: "/a", authority: "media_server.local:8000"),
    ]

    @Test(arguments: good)
    func parses(_ example: Good) throws {
        let url = try ArtworkURL(parsing: example.text)
        #expect(url.scheme == example.scheme)
        #expect(url.host == example.host)
        #expect(url.port == example.port)
        #expect(url.requestTarget == example.target)
        #expect(url.authority == example.authority)
    }

    static let hostile: [String] = [
        "", "ftp://example.com/a.png", "file:///etc/passwd", "javascript:alert(1)", "data:image/png;base64,AAAA",
        "http://user:pw@example.com/a.png", "http://example.com@evil.com/a.png", "http://exa mple.com/",
        "http://example.com/a b.png", "http://example.com/a\n.png", "http://example.com/a\r\nX-Evil: 1",
        "http://example.com/a\u{7F}", "http://example.com/a\u{0}b", "http://example.com\\@evil.com/",
        "http:///a.png", "http://:80/a", "http://example.com:0/", "http://example.com:65536/",
        "http://example.com:8a/", "http://example.com:123456/", "http://[::1/", "http://[example.com]/",
        "http://[::1]x/", "http://[::1%25eth0]/", "http://exämple.com/", "//example.com/a.png", "example.com/a.png",
        "http:example.com/a.png", " http://example.com/", "http://example.com/\t",
    ]

    @Test(arguments: hostile)
    func refuses(_ text: String) {
        #expect(throws: ArtworkError.self) { try ArtworkURL(parsing: text) }
    }

    @Test func refusalsSayWhy() {
        func reason(_ text: String) -> String {
            do {
                _ = try ArtworkURL(parsing: text)
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        #expect(reason("ftp://example.com/a.png").contains("only http and https"))
        #expect(reason("http://u:secret@example.com/").contains("user info"))
        #expect(reason("http://example.com/a b").contains("space"))
        #expect(reason("http://example.com:99999/").contains("port"))
        // The query, which may hold a token, is not shown.
        #expect(!reason("http://example.com/a b?token=secret").contains("secret"))
    }

    @Test func redactedDropsTheQuery() throws {
        #expect(try ArtworkURL(parsing: "https://x.example/a.png?sig=s3cret").redacted == "https://x.example/a.png?…")
        #expect(try ArtworkURL(parsing: "https://x.example/a.png").redacted == "https://x.example/a.png")
        #expect(ArtworkURL.redacted("nonsense?token=1") == "nonsense?…")
    }

    @Test(arguments: [
        ("https://other.example/x.png", "https://other.example/x.png"),
        ("//cdn.example/x.png", "http://cdn.example/x.png"),
        ("/x.png", "http://a.example:8080/x.png"),
        ("x.png", "http://a.example:8080/b/c/x.png"),
        ("./x.png", "http://a.example:8080/b/c/x.png"),
        ("../x.png", "http://a.example:8080/b/x.png"),
        ("../../../../x.png", "http://a.example:8080/x.png"),
        ("?r=1", "http://a.example:8080/b/c/d.png?r=1"),
        ("x.png#top", "http://a.example:8080/b/c/x.png"),
        ("/x.png?y=2", "http://a.example:8080/x.png?y=2"),
    ])
    func resolvesRedirects(location: String, expected: String) throws {
        let base = try ArtworkURL(parsing: "http://a.example:8080/b/c/d.png?q=0")
        #expect(try base.resolving(location).description == expected)
    }

    @Test(arguments: ["ftp://example.com/x.png", "http://u@example.com/", "mailto:a@example.com", "/a b", "\r\n"])
    func refusesRedirectsItWouldNotFetch(location: String) throws {
        let base = try ArtworkURL(parsing: "http://a.example/b")
        #expect(throws: ArtworkError.self) { try base.resolving(location) }
    }

    @Test func fileURLsArePercentEncoded() {
        let file = ArtworkFile(path: "/home/a b/.cache/castd/artwork/x.png", byteCount: 1, format: .png)
        #expect(file.fileURL == "file:///home/a%20b/.cache/castd/artwork/x.png")
    }
}
