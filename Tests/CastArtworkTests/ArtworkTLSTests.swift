import CastArtwork
import CastTestSupport
import Testing

/// https with NIOSSL's default client configuration: a certificate must chain to a trusted root
/// and name the host (by name, sent as SNI, or by address).
@Suite(.timeLimit(.minutes(1))) struct ArtworkTLSTests {
    static let png = ImageServer.png(count: 1500)

    static func isTLSFailure(_ fetcher: ArtworkFetcher, _ url: String) async -> Bool {
        do {
            _ = try await fetcher.fetch(url)
            return false
        } catch {
            if case .tlsFailed = error { return true }
            Issue.record("\(url): \(error)")
            return false
        }
    }

    @Test func aTrustedCertificateForTheHostIsAccepted() async throws {
        let authority = try TestCertificateAuthority()
        let tls = try authority.serverConfiguration(dnsNames: ["localhost"], addresses: [[127, 0, 0, 1]])
        try await ImageServer.with(tls: tls) { server in
            server.answer("/a.png", .body(Self.png))
            var fetcher = ArtworkFetcher.forTests
            fetcher.additionalTrustRoots = [authority.root]
            let byName = try await fetcher.fetch(server.url("/a.png", host: "localhost"))
            #expect(byName.bytes == Self.png)
            let byAddress = try await fetcher.fetch(server.url("/a.png"))
            #expect(byAddress.bytes == Self.png)
            // The system's roots do not know the test's authority.
            #expect(await Self.isTLSFailure(ArtworkFetcher.forTests, server.url("/a.png", host: "localhost")))
            #expect(server.hits("/a.png") == 2)
        }
    }

    @Test func aCertificateForAnotherHostIsRefused() async throws {
        let authority = try TestCertificateAuthority()
        let tls = try authority.serverConfiguration(dnsNames: ["other.example"])
        try await ImageServer.with(tls: tls) { server in
            server.answer("/a.png", .body(Self.png))
            var fetcher = ArtworkFetcher.forTests
            fetcher.additionalTrustRoots = [authority.root]
            #expect(await Self.isTLSFailure(fetcher, server.url("/a.png", host: "localhost")))
            #expect(await Self.isTLSFailure(fetcher, server.url("/a.png")))
            #expect(server.hits("/a.png") == 0)
        }
    }
}
