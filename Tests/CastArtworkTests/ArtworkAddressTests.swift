import CastTestSupport
import Testing

@testable import CastArtwork

/// Where artwork may be fetched from (SECURITY.md, G3.5): never this machine's loopback, a
/// link-local or unspecified address, nor a private network after a public server's redirect;
/// never from https to http. Only loopback is ever connected to here: the other refusals are
/// shown at the decision (the policy, and the resolver's check, which connects nowhere).
@Suite(.timeLimit(.minutes(1))) struct ArtworkAddressTests {
    static let png = ImageServer.png(count: 2000)

    /// A fetcher that may not fetch from loopback, whatever the environment says.
    static func strict(timeout: Duration = Duration.seconds(15).scaledForTests) -> ArtworkFetcher {
        var fetcher = ArtworkFetcher(timeout: timeout)
        fetcher.allowsLoopback = false
        return fetcher
    }

    static func error(_ fetcher: ArtworkFetcher, _ url: String) async -> ArtworkError? {
        do {
            _ = try await fetcher.fetch(url)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        ("127.0.0.1", ArtworkAddressPolicy.Kind.loopback), ("127.255.255.254", .loopback),
        ("169.254.169.254", .linkLocal), ("0.0.0.0", .unspecified), ("0.1.2.3", .unspecified),
        ("10.1.2.3", .privateNetwork), ("172.16.0.1", .privateNetwork), ("172.31.255.255", .privateNetwork),
        ("172.32.0.1", .publicNetwork), ("192.168.1.20", .privateNetwork), ("100.64.0.1", .privateNetwork),
        ("100.127.255.255", .privateNetwork), ("100.128.0.1", .publicNetwork), ("8.8.8.8", .publicNetwork),
        ("::1", .loopback), ("::", .unspecified), ("fe80::1", .linkLocal), ("febf::1", .linkLocal),
        ("fc00::1", .privateNetwork), ("fd12:3456::1", .privateNetwork), ("2001:db8::1", .publicNetwork),
        ("::ffff:127.0.0.1", .loopback), ("::ffff:7f00:2", .loopback), ("::ffff:169.254.169.254", .linkLocal),
        ("::ffff:0.0.0.0", .unspecified), ("::ffff:10.0.0.1", .privateNetwork), ("::ffff:8.8.8.8", .publicNetwork),
        ("::127.0.0.1", .loopback), ("64:ff9b::7f00:1", .loopback),
    ])
    func addressesAreToldApart(address: String, kind: ArtworkAddressPolicy.Kind) {
        #expect(ArtworkAddressPolicy.kind(of: address) == kind)
    }

    @Test func thePolicyRefusesLoopbackLinkLocalAndPublicToPrivate() {
        typealias Kind = ArtworkAddressPolicy.Kind
        let strict = ArtworkAddressPolicy(allowsLoopback: false)
        let tests = ArtworkAddressPolicy(allowsLoopback: true)
        let publicServer: (Kind?, String) = (.publicNetwork, "93.184.216.34")
        let lanServer: (Kind?, String) = (.privateNetwork, "192.168.1.2")
        func refused(_ policy: ArtworkAddressPolicy, _ kind: Kind, after: (Kind?, String)?) -> String? {
            policy.refusal(of: kind, shown: "ADDRESS", after: after.map { (kind: $0.0, shown: $0.1) })
        }
        #expect(refused(strict, .loopback, after: nil)?.contains("ADDRESS is this machine's loopback") == true)
        #expect(refused(tests, .loopback, after: nil) == nil)
        for policy in [strict, tests] {
            #expect(refused(policy, .linkLocal, after: nil)?.contains("link-local") == true)
            #expect(refused(policy, .unspecified, after: nil)?.contains("unspecified") == true)
            // A media server on the LAN is fetched from, and may redirect within the LAN.
            #expect(refused(policy, .privateNetwork, after: nil) == nil)
            #expect(refused(policy, .privateNetwork, after: lanServer) == nil)
            let intoTheLAN = refused(policy, .privateNetwork, after: publicServer)
            #expect(intoTheLAN?.contains("private network") == true && intoTheLAN?.contains("93.184.216.34") == true)
            #expect(refused(policy, .publicNetwork, after: nil) == nil)
            #expect(refused(policy, .publicNetwork, after: lanServer) == nil)
        }
    }

    /// The resolver's check, which the fetcher makes before connecting: by address, by name, and
    /// after a public server's redirect. Nothing is connected to.
    @Test func theConnectPathJudgesTheResolvedAddress() throws {
        let strict = ArtworkAddressPolicy(allowsLoopback: false)
        for url in ["http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/a.png", "http://0.0.0.0/a.png"] {
            #expect(throws: ArtworkError.self, "\(url)") { try strict.addresses(of: url) }
        }
        #expect(throws: ArtworkError.self) { try strict.addresses(of: "http://127.0.0.1/a.png") }
        #expect(try ArtworkAddressPolicy(allowsLoopback: true).addresses(of: "http://127.0.0.1/a.png") == ["127.0.0.1"])
        // A private address: taken as the URL, or after a LAN server's redirect; refused after a
        // public server's.
        #expect(try strict.addresses(of: "http://10.1.2.3/a.png") == ["10.1.2.3"])
        #expect(try strict.addresses(of: "http://10.1.2.3/a.png", redirectedBy: "192.168.1.2") == ["10.1.2.3"])
        do {
            _ = try strict.addresses(of: "http://[fd00::5]:8080/a.png", redirectedBy: "93.184.216.34")
            Issue.record("a public server's redirect into a private network was allowed")
        } catch {
            guard case .refusedAddress(let url, let address, let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(url == "http://[fd00::5]:8080/a.png" && address == "fd00::5")
            #expect(reason.contains("private network") && reason.contains("93.184.216.34"), "\(reason)")
        }
        #expect(try strict.addresses(of: "http://8.8.8.8/a.png", redirectedBy: "93.184.216.34") == ["8.8.8.8"])
    }

    /// Loopback however it is written (as getaddrinfo, and so a connection, reads it) is refused
    /// before anything is sent: the server never gets a request.
    @Test func loopbackIsRefusedHoweverItIsWritten() async throws {
        try await ImageServer.with { server in
            server.answer("/a.png", .body(Self.png))
            let forms = [
                ("127.0.0.1", ["127.0.0.1"]), ("2130706433", ["127.0.0.1"]), ("0x7f000001", ["127.0.0.1"]),
                ("127.1", ["127.0.0.1"]), ("[::ffff:127.0.0.1]", ["::ffff:127.0.0.1"]), ("[::1]", ["::1"]),
                ("localhost", ["127.0.0.1", "::1"]),
            ]
            for (host, addresses) in forms {
                let url = server.url("/a.png", host: host)
                let error = await Self.error(Self.strict(), url)
                guard case .refusedAddress(let shown, let address, let reason) = error else {
                    Issue.record("\(url): \(String(describing: error))")
                    continue
                }
                #expect(shown == url && addresses.contains(address), "\(url): \(address)")
                #expect(reason.contains("this machine's loopback"), "\(reason)")
                #expect(error?.description.hasPrefix("refused to fetch \(url) from \(address): ") == true)
            }
            #expect(server.totalHits == 0)
            // The test-only setting lets the same server be fetched from.
            var allowed = Self.strict()
            allowed.allowsLoopback = true
            let byAddress = try await allowed.fetch(server.url("/a.png"))
            let byInteger = try await allowed.fetch(server.url("/a.png", host: "2130706433"))
            #expect(byAddress.bytes == Self.png && byInteger.bytes == Self.png)
            #expect(server.hits("/a.png") == 2)
        }
    }

    /// A redirect is judged as the URL is: one to a link-local address is refused before
    /// connecting (with loopback allowed, as the test's server needs).
    @Test func aRedirectToALinkLocalAddressIsRefused() async throws {
        try await ImageServer.with { server in
            server.answer("/metadata", .redirect(302, location: "http://169.254.169.254/latest/meta-data/"))
            server.answer("/v6", .redirect(301, location: "http://[::ffff:169.254.169.254]/a.png"))
            for (path, address) in [("/metadata", "169.254.169.254"), ("/v6", "::ffff:169.254.169.254")] {
                let error = await Self.error(.forTests, server.url(path))
                guard case .refusedAddress(_, let refused, let reason) = error else {
                    Issue.record("\(path): \(String(describing: error))")
                    continue
                }
                #expect(refused == address && reason.contains("link-local"), "\(reason)")
            }
        }
    }

    @Test func aRedirectFromHTTPSToHTTPIsRefused() async throws {
        let authority = try TestCertificateAuthority()
        let tls = try authority.serverConfiguration(dnsNames: ["localhost"], addresses: [[127, 0, 0, 1]])
        try await ImageServer.with { plain in
            plain.answer("/a.png", .body(Self.png))
            try await ImageServer.with(tls: tls) { secure in
                secure.answer("/down", .redirect(302, location: plain.url("/a.png")))
                secure.answer("/same", .redirect(302, location: "/a.png"))
                secure.answer("/a.png", .body(Self.png))
                var fetcher = ArtworkFetcher.forTests
                fetcher.additionalTrustRoots = [authority.root]
                let error = await Self.error(fetcher, secure.url("/down"))
                guard case .badRedirect(let url, let location, let reason) = error else {
                    Issue.record("\(String(describing: error))")
                    return
                }
                #expect(url == secure.url("/down") && location == plain.url("/a.png"))
                #expect(reason.contains("from https to plain http"), "\(reason)")
                #expect(plain.totalHits == 0)
                // https to https is followed.
                let same = try await fetcher.fetch(secure.url("/same"))
                #expect(same.bytes == Self.png)
            }
        }
    }
}
