import CastdAPI
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How castd runs: for one desktop session, or for the whole system. The mode chooses the
/// defaults for where castd listens, keeps its state and reads its configuration, and whom it
/// lets in.
public enum DaemonMode: String, CaseIterable, Sendable {
    /// A desktop session's daemon, running as that user: `$XDG_RUNTIME_DIR/castd/castd.sock`,
    /// state under `$XDG_STATE_HOME`, configuration under `$XDG_CONFIG_HOME`; only the user
    /// (and root) may use it.
    case user
    /// The machine's daemon, running as its own `castd` user: `/run/castd/castd.sock`, state in
    /// `/var/lib/castd`, configuration in `/etc/castd`; members of the group `castd` may
    /// control it.
    case system

    /// The mode when none is given: `user` in a login session (`$XDG_RUNTIME_DIR` is set),
    /// else `system`.
    public static func detect(environment: [String: String]) -> DaemonMode {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return .user }
        return .system
    }
}

/// Where things are by default, in a mode and an environment.
public struct DaemonPaths: Sendable, Equatable {
    public var mode: DaemonMode
    public var environment: [String: String]
    public var isRoot: Bool
    /// Groups that may control castd unless the configuration says otherwise: `castd` for the
    /// system daemon (if the group exists), none for a user's.
    public var defaultControlGroups: [String]

    public init(mode: DaemonMode, environment: [String: String], isRoot: Bool = getuid() == 0) {
        self.mode = mode
        self.environment = environment
        self.isRoot = isRoot
        defaultControlGroups = mode == .system ? ["castd"] : []
    }

    private func value(_ name: String) -> String? {
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }

    private var home: String? { value("HOME").flatMap { $0.hasPrefix("/") ? $0 : nil } }

    /// The socket: `$CASTD_SOCKET`, else the mode's: `$XDG_RUNTIME_DIR/castd/castd.sock` for a
    /// user, `/run/castd/castd.sock` for the system. A user daemon without `$XDG_RUNTIME_DIR`
    /// has none (it must be given).
    public var socket: String? {
        if let explicit = value("CASTD_SOCKET") { return explicit }
        switch mode {
        case .user: return value("XDG_RUNTIME_DIR").map { $0 + "/castd/castd.sock" }
        case .system: return CastdSocketPath.system
        }
    }

    /// The state directory: systemd's `$STATE_DIRECTORY` (StateDirectory=; the first if it
    /// lists several), else `$XDG_STATE_HOME/castd` or `~/.local/state/castd` for a user, and
    /// `/var/lib/castd` for the system.
    public var stateDirectory: String? {
        if let systemd = value("STATE_DIRECTORY") {
            return String(systemd.split(separator: ":").first ?? Substring(systemd))
        }
        switch mode {
        case .system: return "/var/lib/castd"
        case .user:
            if let xdg = value("XDG_STATE_HOME"), xdg.hasPrefix("/") { return xdg + "/castd" }
            if let home { return home + "/.local/state/castd" }
            return isRoot ? "/var/lib/castd" : nil
        }
    }

    /// The configuration file read when none is given: in systemd's `$CONFIGURATION_DIRECTORY`
    /// (ConfigurationDirectory=), else `$XDG_CONFIG_HOME/castd/castd.toml` or
    /// `~/.config/castd/castd.toml` for a user, and `/etc/castd/castd.toml` for the system.
    public var configFile: String? {
        if let systemd = value("CONFIGURATION_DIRECTORY") {
            return String(systemd.split(separator: ":").first ?? Substring(systemd)) + "/castd.toml"
        }
        switch mode {
        case .system: return "/etc/castd/castd.toml"
        case .user:
            if let xdg = value("XDG_CONFIG_HOME"), xdg.hasPrefix("/") { return xdg + "/castd/castd.toml" }
            return home.map { $0 + "/.config/castd/castd.toml" }
        }
    }

}
