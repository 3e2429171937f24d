import CastdSupport
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The name lookup of one artwork connection, which judges every address before NIO may connect
/// to any: one `getaddrinfo` (on NIO's thread pool; it blocks), whose addresses are checked by
/// the ``ArtworkAddressPolicy``. If any of them is refused, the whole lookup fails with the
/// refusal, so that Happy Eyeballs has nothing left to try: a name that resolves to a public
/// address and to 127.0.0.1 is refused, not half-followed. IP literals go through the same
/// lookup (`getaddrinfo` reads `0x7f000001` and `2130706433` as 127.0.0.1, as connecting would).
final class ArtworkResolver: Resolver, Sendable {
    private let loop: any EventLoop
    private let url: ArtworkURL
    private let policy: ArtworkAddressPolicy
    private let previous: SocketAddress?
    private let lookup = Locked<EventLoopFuture<[SocketAddress]>?>(nil)

    /// - Parameter previous: The server whose redirect led to `url`, if one did.
    init(loop: any EventLoop, url: ArtworkURL, policy: ArtworkAddressPolicy, previous: SocketAddress?) {
        self.loop = loop
        self.url = url
        self.policy = policy
        self.previous = previous
    }

    func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        addresses(host: host, port: port).map { $0.filter { if case .v4 = $0 { true } else { false } } }
    }

    func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        addresses(host: host, port: port).map { $0.filter { if case .v6 = $0 { true } else { false } } }
    }

    func cancelQueries() {}

    /// Every address of `host`, checked; one lookup for both queries.
    private func addresses(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        lookup.withLock { lookup in
            if let lookup { return lookup }
            let (url, policy, previous) = (self.url, self.policy, self.previous)
            let started = NIOThreadPool.singleton.runIfActive(eventLoop: loop) {
                try Self.checkedAddresses(host: host, port: port, url: url, policy: policy, previous: previous)
            }
            lookup = started
            return started
        }
    }

    /// The addresses of `host`, each judged by `policy`; the first refused one throws.
    static func checkedAddresses(
        host: String, port: Int, url: ArtworkURL, policy: ArtworkAddressPolicy, previous: SocketAddress?
    ) throws(ArtworkError) -> [SocketAddress] {
        let addresses = try resolve(host: host, port: port, url: url)
        for address in addresses {
            if let reason = policy.refusal(of: address, after: previous) {
                throw .refusedAddress(url: url.redacted, address: ArtworkAddressPolicy.text(address), reason: reason)
            }
        }
        return addresses
    }

    /// `getaddrinfo` for a TCP connection to `host`: its addresses in the system's order.
    static func resolve(host: String, port: Int, url: ArtworkURL) throws(ArtworkError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0, let list else {
            let reason = code == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(code))
            throw .connectionFailed(url: url.redacted, reason: "cannot resolve \(host) (\(reason))")
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let address = current.pointee.ai_addr {
                switch current.pointee.ai_family {
                case AF_INET:
                    addresses.append(
                        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                            SocketAddress($0.pointee, host: host)
                        })
                case AF_INET6:
                    addresses.append(
                        address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                            SocketAddress($0.pointee, host: host)
                        })
                default:
                    break
                }
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw .connectionFailed(url: url.redacted, reason: "cannot resolve \(host) (no IPv4 or IPv6 address)")
        }
        return addresses
    }
}

extension ArtworkAddressPolicy {
    /// The addresses a fetch of `url` would connect to, each judged as the fetcher judges it
    /// before it connects (``ArtworkResolver``), and nothing connected to: the decision alone,
    /// for tests (which never connect anywhere but loopback) and diagnostics.
    /// - Parameter redirectedBy: The address of the server whose redirect led to `url`.
    package func addresses(of url: String, redirectedBy: String? = nil) throws(ArtworkError) -> [String] {
        let parsed = try ArtworkURL(parsing: url)
        let previous = redirectedBy.flatMap { try? SocketAddress(ipAddress: $0, port: 80) }
        return try ArtworkResolver.checkedAddresses(
            host: parsed.host, port: parsed.port, url: parsed, policy: self, previous: previous
        ).map(ArtworkAddressPolicy.text)
    }
}
