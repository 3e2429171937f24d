import CAvahi

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A pointer to an avahi object (poll, client, browser, resolver, entry group, timeout).
///
/// `@unchecked Sendable`: the handle is only an address. The object behind it is only used on the
/// poll thread of the `AvahiClientLoop` that owns it (avahi callbacks), by another thread that
/// holds that poll's lock, or after the poll thread has stopped; the loop enforces this.
struct AvahiHandle: @unchecked Sendable, Hashable {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }
}

/// Small conversions between avahi's C types and Swift.
enum Avahi {
    static let unspecifiedInterface = AvahiIfIndex(AVAHI_IF_UNSPEC)
    static let unspecifiedProtocol = AvahiProtocol(AVAHI_PROTO_UNSPEC)

    /// avahi's text for an error code, e.g. "Daemon not running" for -26.
    static func errorString(_ code: Int32) -> String {
        guard let text = avahi_strerror(code) else { return "avahi error \(code)" }
        return String(cString: text)
    }

    /// The raw TXT strings of a list as avahi-client hands it over. avahi-client builds the list
    /// by prepending, so it is reversed here to give the strings in the order they were published.
    static func txtEntries(_ list: UnsafeMutablePointer<AvahiStringList>?) -> [[UInt8]] {
        var entries: [[UInt8]] = []
        var node = list
        while let current = node {
            let size = avahi_string_list_get_size(current)
            if size > 0, let text = avahi_string_list_get_text(current) {
                entries.append(Array(UnsafeBufferPointer(start: text, count: size)))
            } else {
                entries.append([])
            }
            node = avahi_string_list_get_next(current)
        }
        return entries.reversed()
    }

    /// A TXT string list of "key=value" pairs in key order; free it with `avahi_string_list_free`.
    static func makeStringList(_ txt: [String: String]) -> UnsafeMutablePointer<AvahiStringList>? {
        var list: UnsafeMutablePointer<AvahiStringList>?
        // avahi_string_list_add_pair prepends: add in descending order to get ascending order.
        for (key, value) in txt.sorted(by: { $0.key > $1.key }) {
            list = avahi_string_list_add_pair(list, key, value)
        }
        return list
    }

    /// The numeric form of a resolved address. IPv6 link-local addresses get `%interface` so that
    /// they can be connected to.
    static func numericHost(_ address: UnsafePointer<AvahiAddress>, interface: AvahiIfIndex) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard avahi_address_snprint(&buffer, buffer.count, address) != nil else { return "" }
        let host = string(nulTerminated: buffer)
        guard address.pointee.proto == AvahiProtocol(AVAHI_PROTO_INET6),
            host.lowercased().hasPrefix("fe80:"),
            interface >= 0
        else { return host }
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(UInt32(interface), &name) != nil else { return host }
        return host + "%" + string(nulTerminated: name)
    }

    private static func string(nulTerminated buffer: [CChar]) -> String {
        String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The absolute time `interval` from now, as avahi's poll API wants it.
    static func time(after interval: Duration) -> timeval {
        var now = timeval()
        gettimeofday(&now, nil)
        let (seconds, attoseconds) = max(interval, .zero).components
        var usec = Int(now.tv_usec) + Int(attoseconds / 1_000_000_000_000)
        var sec = Int(now.tv_sec) + Int(seconds) + usec / 1_000_000
        usec %= 1_000_000
        if sec < 0 { sec = 0 }
        return timeval(tv_sec: time_t(sec), tv_usec: suseconds_t(usec))
    }
}

extension CastTXTRecord {
    /// The strings of a TXT record's RDATA as it travels (each a length byte, then that many
    /// bytes), split by avahi as avahi-client splits what it receives; nil when avahi refuses
    /// the bytes. For fuzzing and tests: castd itself gets the strings from avahi-client.
    package static func entries(wireFormat bytes: [UInt8]) -> [[UInt8]]? {
        var list: UnsafeMutablePointer<AvahiStringList>?
        let result = bytes.withUnsafeBytes { avahi_string_list_parse($0.baseAddress, $0.count, &list) }
        defer { avahi_string_list_free(list) }
        guard result == 0 else { return nil }
        return Avahi.txtEntries(list)
    }
}
