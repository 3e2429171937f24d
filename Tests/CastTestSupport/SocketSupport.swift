import CastdSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP socket listening on 127.0.0.1 that never accepts or speaks: connections to it are
/// established by the kernel and then hang (a device that never answers TLS). Returns the fd,
/// to close when done, and the port.
public func silentTCPListener() throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0, listen(fd, 8) == 0 else {
        close(fd)
        throw POSIXError(.EADDRINUSE)
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

/// A TCP port on 127.0.0.1 whose connections are refused: a socket is bound to it without
/// listening, and held until `body` returns, so no other test can take the port and a connect
/// cannot pick it as its own source port (a TCP self-connect).
public func withRefusingTCPPort<T>(_ body: (Int) async throws -> T) async throws -> T {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return try await body(Int(UInt16(bigEndian: address.sin_port)))
}

/// A Unix socket of `type` connected (`SOCK_STREAM`) or bound (`SOCK_DGRAM`) at `path`.
public func unixSocket(_ type: Int32, path: String, bindInstead: Bool = false) throws -> Int32 {
    let fd = socket(AF_UNIX, type, 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        close(fd)
        throw POSIXError(.ENAMETOOLONG)
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bindInstead
                ? bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                : connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard result == 0 else {
        let error = errno
        close(fd)
        throw POSIXError(POSIXErrorCode(rawValue: error) ?? .ECONNREFUSED)
    }
    return fd
}

/// A TCP port on 127.0.0.1 that is free, for a test that listens on a port it chose (a device
/// that restarts, a device that moves) or needs one where nothing answers. It is below the
/// kernel's ephemeral range (32768 and up): a port in that range may be taken between the choice
/// and its use, by any outgoing connection on the machine as its source port or by a listener on
/// port 0 (a CI run saw an emulator fail to bind 127.0.0.1:39813 that way). No two calls in one
/// test process get the same port.
public func freePort() throws -> Int {
    for _ in 0..<100 {
        let port = Int.random(in: 20_000..<32_000)
        guard handedOutPorts.withLock({ $0.insert(port).inserted }) else { continue }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        close(fd)
        if bound == 0 { return port }
    }
    throw POSIXError(.EADDRINUSE)
}

private let handedOutPorts = Locked<Set<Int>>([])
