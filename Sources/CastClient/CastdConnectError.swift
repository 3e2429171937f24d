import CastdAPI
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a client could not connect to castd, for people: the path, the reason, and the command
/// that starts the castd meant (``startHint(path:euid:)``).
enum CastdConnectError {
    /// Why connecting to `path` failed, for people.
    static func make(_ error: any Error, path: String) -> CastdError {
        switch error {
        case let error as IOError:
            make(errno: error.errnoCode, path: path)
        case SocketAddressError.unixDomainSocketPathTooLong:
            make(why: "the path is too long for a Unix socket", path: path)
        default:
            make(why: "\(error)", path: path)
        }
    }

    /// What connect(2) failing with `errno` means for the caller.
    static func make(errno code: Int32, path: String) -> CastdError {
        let reason = String(cString: strerror(code))
        if code == EACCES || code == EPERM {
            return CastdError(
                .permissionDenied,
                "cannot connect to castd at \(path): \(reason) — ask for access to castd's socket (its group), or use one you own with --socket / CASTD_SOCKET"
            )
        }
        return make(why: reason, path: path)
    }

    static func make(why: String, path: String) -> CastdError {
        CastdError(
            .unavailable, "cannot connect to castd at \(path): \(why) — \(startHint(path: path, euid: geteuid()))")
    }

    /// The command that starts the castd at `path` for the user `euid`: the machine's (its
    /// socket unit; for root alone, a user-mode castd at the machine's path, since castd will not
    /// run as root in system mode), or the user's own.
    static func startHint(path: String, euid: uid_t) -> String {
        guard path == CastdSocketPath.system else {
            return
                "is castd running? (start yours with `castd`, or `systemctl --user enable --now castd.socket`; or set --socket / CASTD_SOCKET)"
        }
        if euid == 0 {
            return
                "is castd running? (start the machine's with `systemctl enable --now castd.socket`, or one for root alone with `castd --mode user --socket \(path)`)"
        }
        return
            "is castd running? (start the machine's with `sudo systemctl enable --now castd.socket`, or your own with `castd` in a session that sets XDG_RUNTIME_DIR; or set --socket / CASTD_SOCKET)"
    }
}
