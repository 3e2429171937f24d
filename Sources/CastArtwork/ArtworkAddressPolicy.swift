import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which addresses an image may be fetched from, judged on the address a connection would go
/// to (after DNS: `0x7f000001`, `2130706433`, `[::ffff:127.0.0.1]` and `localhost` are all
/// loopback), in the connect path of ``ArtworkFetcher`` (``ArtworkResolver`` before connecting,
/// and the connected channel's peer again before a byte is sent).
///
/// An image URL is chosen by whoever loaded the media (a receiver app, any sender) and is meant
/// for the TV to fetch; the clients fetch it too, on the user's machine, without the user
/// asking. So:
/// - loopback (127/8, ::1) is refused: no real device's artwork is on the machine that shows
///   it, and services there trust their own machine;
/// - link-local (169.254/16, fe80::/10, where cloud metadata services answer) and the
///   unspecified addresses (0/8, ::, which reach this machine) are refused;
/// - a redirect from a public address to a private one (10/8, 172.16/12, 192.168/16,
///   100.64/10, fc00::/7, fec0::/10) is refused: a server on the internet does not get to
///   point the user's machine at the LAN or a VPN. A private URL itself (a media server on the
///   LAN) is fetched, as it always was.
///
/// IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`) and NAT64 (`64:ff9b::a.b.c.d`)
/// IPv6 addresses are judged as the IPv4 address they carry.
package struct ArtworkAddressPolicy: Sendable, Hashable {
    /// What an address is, for these rules.
    package enum Kind: String, Sendable, Hashable {
        case loopback
        case linkLocal
        case unspecified
        case privateNetwork
        case publicNetwork
    }

    /// Whether loopback addresses may be fetched from: for tests only, whose image servers
    /// listen on 127.0.0.1 (``ArtworkFetcher/loopbackAllowedForTests``).
    package var allowsLoopback: Bool

    package init(allowsLoopback: Bool) {
        self.allowsLoopback = allowsLoopback
    }

    /// Why a connection to `address` is refused, or nil if it is not. `previous` is the address
    /// of the server whose redirect led here (nil for the URL the fetch began with).
    package func refusal(of address: SocketAddress, after previous: SocketAddress?) -> String? {
        guard let kind = Self.kind(of: address) else { return "it is not an IP address" }
        return refusal(of: kind, shown: Self.text(address), after: previous.map { (Self.kind(of: $0), Self.text($0)) })
    }

    /// Why a connection to an address of `kind` (shown as `shown`) is refused, or nil.
    package func refusal(of kind: Kind, shown: String, after previous: (kind: Kind?, shown: String)?) -> String? {
        switch kind {
        case .loopback where !allowsLoopback:
            return "\(shown) is this machine's loopback; an image URL is for the TV to fetch, and a real device's "
                + "artwork is never on the machine that shows it"
        case .linkLocal:
            return "\(shown) is a link-local address (169.254/16, fe80::/10), where cloud metadata services answer; "
                + "artwork is never fetched from one"
        case .unspecified:
            return "\(shown) is an unspecified address (0.0.0.0/8, ::), which reaches this machine"
        case .privateNetwork:
            guard let previous, previous.kind == .publicNetwork else { return nil }
            return "\(shown) is on a private network (the LAN, a VPN, CGNAT), and the redirect to it came from "
                + "\(previous.shown), a public address; a server on the internet does not get to send the fetch "
                + "into a private network"
        case .loopback, .publicNetwork:
            return nil
        }
    }

    /// What `address` is; nil for one that is not IPv4 or IPv6.
    package static func kind(of address: SocketAddress) -> Kind? {
        // By the layouts of sockaddr_in (family, port, then the address at 4) and sockaddr_in6
        // (family, port, flow information, then the address at 8), in network order.
        switch address {
        case .v4(let v4):
            return kind(ipv4: withUnsafeBytes(of: v4.address) { $0[4..<8].reduce(0) { $0 << 8 | UInt32($1) } })
        case .v6(let v6):
            return kind(ipv6: withUnsafeBytes(of: v6.address) { Array($0[8..<24]) })
        case .unixDomainSocket:
            return nil
        }
    }

    /// What an IPv4 address (in host order) is.
    package static func kind(ipv4 address: UInt32) -> Kind {
        func within(_ network: UInt32, _ prefix: UInt32) -> Bool {
            address >> (32 - prefix) == network >> (32 - prefix)
        }
        if within(0x7F00_0000, 8) { return .loopback }
        if within(0xA9FE_0000, 16) { return .linkLocal }
        if within(0x0000_0000, 8) { return .unspecified }
        if within(0x0A00_0000, 8) || within(0xAC10_0000, 12) || within(0xC0A8_0000, 16) || within(0x6440_0000, 10) {
            return .privateNetwork
        }
        return .publicNetwork
    }

    /// What an IPv6 address (16 bytes, network order) is.
    package static func kind(ipv6 bytes: [UInt8]) -> Kind {
        guard bytes.count == 16 else { return .unspecified }
        let embedded = bytes[12..<16].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let firstTen = bytes[0..<10].allSatisfy { $0 == 0 }
        if firstTen && bytes[10] == 0xFF && bytes[11] == 0xFF { return kind(ipv4: embedded) }  // ::ffff:a.b.c.d
        if firstTen && bytes[10] == 0 && bytes[11] == 0 {
            if embedded == 0 { return .unspecified }  // ::
            if embedded == 1 { return .loopback }  // ::1
            return kind(ipv4: embedded)  // ::a.b.c.d, deprecated
        }
        if bytes[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] { return kind(ipv4: embedded) }  // NAT64
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return .linkLocal }  // fe80::/10
        if bytes[0] & 0xFE == 0xFC { return .privateNetwork }  // fc00::/7
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0xC0 { return .privateNetwork }  // fec0::/10, site-local
        return .publicNetwork
    }

    /// What the address written `text` (`10.1.2.3`, `::ffff:127.0.0.1`) is; nil if it is not
    /// an address written as inet_pton reads one. For tests and logs.
    package static func kind(of text: String) -> Kind? {
        var bytes = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, text, &bytes) == 1 { return kind(ipv4: bytes[0..<4].reduce(0) { $0 << 8 | UInt32($1) }) }
        if inet_pton(AF_INET6, text, &bytes) == 1 { return kind(ipv6: bytes) }
        return nil
    }

    /// `127.0.0.1`, `::1`: the address alone, without NIO's `[IPv4]host/…:port`.
    static func text(_ address: SocketAddress) -> String {
        address.ipAddress ?? "\(address)"
    }
}
