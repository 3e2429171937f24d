import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP socket bound but not listening, made by the emulator itself so that it is
/// close-on-exec (NIO's are not: a process spawned meanwhile would inherit the listener and keep
/// it listening after the emulator closed it). The CastV2 listener listens on it (NIO's
/// `bind(_:)` takes it over); while the listener is down (a restart) a new one holds the port:
/// connections to it are refused, as by a device whose network is down, and the port stays the
/// emulator's, so that it can come back on it.
struct BoundSocket: Sendable {
    let descriptor: CInt
    /// The port it is bound to (the one picked when asked for 0).
    let port: Int

    /// Binds a socket to `host`:`port`, with SO_REUSEADDR as listeners have (links just closed on
    /// the port do not stand in the way).
    static func make(host: String, port: Int) throws -> BoundSocket {
        let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        #if canImport(Glibc)
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
            let type = SOCK_STREAM
        #endif
        let descriptor = socket(address.protocol.rawValue, type, 0)
        guard descriptor >= 0 else {
            throw EmulatorError(.bind, "cannot make a socket for \(host):\(port) (errno \(errno))")
        }
        var one: CInt = 1
        let bound =
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size)) == 0
            && address.withSockAddr { bind(descriptor, $0, socklen_t($1)) } == 0
        guard bound else {
            let error = errno
            close(descriptor)
            throw EmulatorError(
                .bind, "cannot bind \(host):\(port) (errno \(error): \(String(cString: strerror(error))))")
        }
        return BoundSocket(descriptor: descriptor, port: localPort(descriptor) ?? port)
    }

    /// The port `descriptor` is bound to, from getsockname.
    private static func localPort(_ descriptor: CInt) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { return nil }
        return withUnsafePointer(to: &storage) { pointer -> Int? in
            switch CInt(pointer.pointee.ss_family) {
            case AF_INET:
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin_port))
                }
            case AF_INET6:
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            default: nil
            }
        }
    }

    /// Closes the socket (unless a listener took it over).
    func release() {
        close(descriptor)
    }
}
