#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Open descriptors passed over a Unix stream socket with the bytes of one message (`SCM_RIGHTS`
/// ancillary data, `unix(7)`). Glibc's CMSG_* macros do not reach Swift, so the control buffer
/// is laid out here: a `cmsghdr` (length, level, type), then the descriptors as C ints.
public enum UnixRights {
    /// The kernel's limit on descriptors in one message (`SCM_MAX_FD`).
    public static let kernelLimit = 253

    /// Sends `bytes` with `descriptors` attached to their first byte, in one `sendmsg(2)`;
    /// returns how many bytes went (the descriptors go with the first, whatever the count).
    /// The caller keeps its own descriptors: the receiver gets duplicates.
    public static func send(_ socket: Int32, _ bytes: [UInt8], descriptors: [Int32]) -> Result<Int, Errno> {
        precondition(descriptors.count <= kernelLimit && !bytes.isEmpty)
        var control = [UInt8](repeating: 0, count: space(descriptors.count))
        if !descriptors.isEmpty {
            control.withUnsafeMutableBytes { raw in
                var header = cmsghdr()
                header.cmsg_len = length(descriptors.count)
                header.cmsg_level = SOL_SOCKET
                header.cmsg_type = Int32(SCM_RIGHTS)
                raw.storeBytes(of: header, as: cmsghdr.self)
                for (index, fd) in descriptors.enumerated() {
                    raw.storeBytes(of: fd, toByteOffset: headerSpace + index * 4, as: Int32.self)
                }
            }
        }
        var bytes = bytes
        let sent = bytes.withUnsafeMutableBytes { body in
            control.withUnsafeMutableBytes { control in
                var vector = iovec(iov_base: body.baseAddress, iov_len: body.count)
                return withUnsafeMutablePointer(to: &vector) { vector in
                    var message = msghdr()
                    message.msg_iov = vector
                    message.msg_iovlen = 1
                    if !descriptors.isEmpty {
                        message.msg_control = control.baseAddress
                        message.msg_controllen = control.count
                    }
                    return sendmsg(socket, &message, Int32(MSG_NOSIGNAL))
                }
            }
        }
        return sent < 0 ? .failure(Errno.current) : .success(sent)
    }

    /// What one `recvmsg(2)` brought.
    public struct Received: Sendable {
        public var bytes: [UInt8]
        /// Received descriptors, close-on-exec, now the caller's to close.
        public var descriptors: [Int32]
        /// More descriptors came than `maximumDescriptors`: the kernel closed the rest.
        public var descriptorsTruncated: Bool
    }

    /// Reads up to `maximumBytes` and the descriptors that came with them (at most
    /// `maximumDescriptors`; the kernel drops any beyond). Zero bytes: the peer closed.
    public static func receive(
        _ socket: Int32, maximumBytes: Int, maximumDescriptors: Int, flags: Int32 = 0
    ) -> Result<Received, Errno> {
        var bytes = [UInt8](repeating: 0, count: maximumBytes)
        var control = [UInt8](repeating: 0, count: space(max(maximumDescriptors, 1)))
        var controlLength = 0
        var messageFlags: Int32 = 0
        let count = bytes.withUnsafeMutableBytes { body in
            control.withUnsafeMutableBytes { control in
                var vector = iovec(iov_base: body.baseAddress, iov_len: body.count)
                return withUnsafeMutablePointer(to: &vector) { vector in
                    var message = msghdr()
                    message.msg_iov = vector
                    message.msg_iovlen = 1
                    message.msg_control = control.baseAddress
                    message.msg_controllen = control.count
                    let count = recvmsg(socket, &message, flags | Int32(MSG_CMSG_CLOEXEC))
                    controlLength = message.msg_controllen
                    messageFlags = message.msg_flags
                    return count
                }
            }
        }
        guard count >= 0 else { return .failure(Errno.current) }
        bytes.removeSubrange(count...)
        var descriptors: [Int32] = []
        control.withUnsafeBytes { raw in
            // One SCM_RIGHTS header at most (the only ancillary data on a socket without
            // SO_PASSCRED); walked all the same, each header by its own length.
            var offset = 0
            while offset + headerSpace <= controlLength {
                let header = raw.loadUnaligned(fromByteOffset: offset, as: cmsghdr.self)
                let total = Int(header.cmsg_len)
                guard total >= headerSpace, offset + total <= controlLength else { break }
                if header.cmsg_level == SOL_SOCKET, header.cmsg_type == Int32(SCM_RIGHTS) {
                    let n = (total - headerSpace) / 4
                    for index in 0..<n {
                        descriptors.append(
                            raw.loadUnaligned(fromByteOffset: offset + headerSpace + index * 4, as: Int32.self))
                    }
                }
                offset += align(total)
            }
        }
        return .success(
            Received(
                bytes: bytes, descriptors: descriptors,
                descriptorsTruncated: messageFlags & Int32(MSG_CTRUNC) != 0))
    }

    static func align(_ n: Int) -> Int { (n + MemoryLayout<Int>.size - 1) & ~(MemoryLayout<Int>.size - 1) }
    static var headerSpace: Int { align(MemoryLayout<cmsghdr>.size) }
    static func length(_ descriptors: Int) -> Int { headerSpace + descriptors * 4 }
    static func space(_ descriptors: Int) -> Int { headerSpace + align(descriptors * 4) }
}

/// An `errno` value, with its text.
public struct Errno: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: Int32
    public init(_ code: Int32) { self.code = code }
    public static var current: Errno { Errno(errno) }
    public var description: String { String(cString: strerror(code)) }
}
