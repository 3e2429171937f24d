import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// Tells the service manager how castd is doing (sd_notify(3)): nothing happens when castd was
/// not started by one (`$NOTIFY_SOCKET` unset).
public enum SystemdNotifier {
    /// Whether a service manager listens (`$NOTIFY_SOCKET` is set): without one, nothing sent
    /// here goes anywhere.
    public static var managerListens: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Serving: the socket is listening.
    public static func ready(status: String) {
        send("READY=1\nSTATUS=\(status)")
    }

    /// A line for `systemctl status`.
    public static func status(_ text: String) {
        send("STATUS=\(text)")
    }

    /// Shutting down.
    public static func stopping(status: String) {
        send("STOPPING=1\nSTATUS=\(status)")
    }

    /// Still alive (WatchdogSec=).
    public static func watchdog() {
        send("WATCHDOG=1")
    }

    /// How often to ping the watchdog: half of `$WATCHDOG_USEC`, when the service manager
    /// watches castd (sd_watchdog_enabled(3) also checks `$WATCHDOG_PID`); nil otherwise.
    public static var watchdogInterval: Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(clamping: microseconds / 2))
    }

    /// "2 devices (1 connected), 1 session, 3 clients"
    public static func describe(devices: Int, connected: Int, sessions: Int, clients: Int) -> String {
        func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
        var text = count(devices, "device")
        if devices > 0 { text += " (\(connected) connected)" }
        return text + ", " + count(sessions, "session") + ", " + count(clients, "client")
    }

    private static func send(_ state: String) {
        _ = sd_notify(0, state)
    }
}
