import CastdAPI
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Who is at the other end of a connection, as the kernel says (`SO_PEERCRED`,
/// `SO_PEERGROUPS`): nothing the client sends can change it.
public struct PeerCredentials: Sendable, Equatable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// Supplementary groups; empty when the kernel could not say.
    public var groups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    /// The primary group and every supplementary group.
    public var allGroups: Set<UInt32> { Set(groups).union([gid]) }

    public var description: String {
        "uid \(uid)\(Self.userName(uid).map { " (\($0))" } ?? "") pid \(pid)"
    }

    static func userName(_ uid: UInt32) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, let found = result else { return nil }
        return String(cString: found.pointee.pw_name)
    }
}

/// Who may call castd: the daemon's own uid and root control it; members of `controlGroups`
/// control it; members of `readGroups` may only call the methods that change nothing
/// (`CastdMethod.requiredAccess`); everyone else is refused before anything they send is read.
public struct CastdAccessPolicy: Sendable, Equatable {
    public var ownerUID: UInt32
    public var controlGroups: Set<UInt32>
    public var readGroups: Set<UInt32>

    public init(ownerUID: UInt32 = getuid(), controlGroups: Set<UInt32> = [], readGroups: Set<UInt32> = []) {
        self.ownerUID = ownerUID
        self.controlGroups = controlGroups
        self.readGroups = readGroups
    }

    /// The peer's access; `.unspecified` means refused.
    public func access(for peer: PeerCredentials) -> Castd_V1_Access {
        if peer.uid == ownerUID || peer.uid == 0 { return .control }
        let groups = peer.allGroups
        if !groups.isDisjoint(with: controlGroups) { return .control }
        if !groups.isDisjoint(with: readGroups) { return .read }
        return .unspecified
    }

    /// The socket file's mode and group that let in exactly whom this policy may let in (the
    /// peer check decides the rest): owner only (0600) with no groups; 0660 and that group
    /// with one; 0666 with several, since a file has one group.
    public var socketPermissions: (mode: mode_t, group: UInt32?) {
        let groups = controlGroups.union(readGroups)
        switch groups.count {
        case 0: return (0o600, nil)
        case 1: return (0o660, groups.first)
        default: return (0o666, nil)
        }
    }
}

extension Castd_V1_Access {
    public var name: String {
        switch self {
        case .control: "control"
        case .read: "read"
        default: "none"
        }
    }
}

enum PeerCredentialsError: Error, CustomStringConvertible {
    case unavailable(String)
    var description: String {
        switch self {
        case .unavailable(let why): "cannot read the peer's credentials: \(why)"
        }
    }
}

extension PeerCredentials {
    /// The credentials of a connected Unix socket's peer. Run on the channel's event loop (as a
    /// child channel initializer does), the futures are already complete.
    static func of(_ channel: any Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(PeerCredentialsError.unavailable("not a socket"))
        }
        let credentials: EventLoopFuture<PeerCred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(peerCredOption))
        return credentials.flatMap { cred in
            // SO_PEERGROUPS (Linux 4.13): the peer's supplementary groups as of connect(2).
            let groups: EventLoopFuture<PeerGroupList> = provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(peerGroupsOption))
            return groups.map { list in
                PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid, groups: list.groups)
            }.flatMapErrorThrowing { _ in
                // More groups than fit, or an old kernel: decide on the uid and primary group.
                PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid)
            }
        }
    }

    /// The credentials of a connected Unix socket's peer, read from its descriptor (the files
    /// socket, which NIO does not serve); nil if the kernel does not say.
    static func of(descriptor fd: Int32) -> PeerCredentials? {
        var cred = PeerCred()
        var length = socklen_t(MemoryLayout<PeerCred>.size)
        guard getsockopt(fd, SOL_SOCKET, peerCredOption, &cred, &length) == 0 else { return nil }
        var list = PeerGroupList(storage: .init(repeating: 0))
        length = socklen_t(MemoryLayout<PeerGroupList>.size)
        guard getsockopt(fd, SOL_SOCKET, peerGroupsOption, &list, &length) == 0 else {
            return PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid)
        }
        return PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid, groups: list.groups)
    }

    // Linux's values; Glibc's module exports neither (they need _GNU_SOURCE).
    private static let peerCredOption: CInt = 17  // SO_PEERCRED
    private static let peerGroupsOption: CInt = 59  // SO_PEERGROUPS
}

/// `struct ucred` (pid, uid, gid), which Glibc's module does not export.
struct PeerCred: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// Room for 256 supplementary groups, filled by `getsockopt(SO_PEERGROUPS)` from zeroed memory.
struct PeerGroupList: Sendable {
    var storage: InlineArray<256, UInt32>

    /// The groups. NIO passes zeroed storage and drops the returned length, so zeros are
    /// skipped: the root group (0) cannot be told from unused room, and so a policy cannot
    /// name it (root itself always controls).
    var groups: [UInt32] {
        var result: [UInt32] = []
        for index in storage.indices where storage[index] != 0 {
            result.append(storage[index])
        }
        return result
    }
}

/// The socket file's mode and group, checked against the access policy when systemd binds the
/// socket (castd sets them itself when it binds it: `SelfBoundSocket`).
public enum SocketPermissions {
    /// What is wrong with an existing socket's mode and group for `policy`: it lets in more than
    /// the policy would (the peer check still refuses them), or keeps out someone the policy
    /// lets in. Empty when it matches.
    public static func check(path: String, against policy: CastdAccessPolicy) -> [String] {
        var info = stat()
        guard stat(path, &info) == 0 else { return ["cannot inspect \(path): \(String(cString: strerror(errno)))"] }
        let mode = info.st_mode & 0o777
        let expected = policy.socketPermissions
        var problems: [String] = []
        let octal = { (m: mode_t) in "0" + String(m, radix: 8) }
        if mode & 0o006 != 0, expected.mode & 0o006 == 0 {
            problems.append(
                "\(path) is mode \(octal(mode)): anyone may connect, though castd refuses all but its policy's users (SocketMode=\(octal(expected.mode)) would match it)"
            )
        }
        let groups = policy.controlGroups.union(policy.readGroups)
        if groups.count == 1, let group = groups.first {
            if info.st_gid != group || mode & 0o060 != 0o060, mode & 0o006 != 0o006 {
                problems.append(
                    "members of \(CastdServer.groupNames([group])) may use castd but cannot open \(path) (mode \(octal(mode)), group \(info.st_gid)); set SocketGroup= and SocketMode=0660"
                )
            }
        } else if groups.count > 1, mode & 0o006 != 0o006 {
            problems.append(
                "several groups may use castd, but \(path) is mode \(octal(mode)); only SocketMode=0666 lets them all reach it (castd checks each peer)"
            )
        }
        return problems
    }
}
