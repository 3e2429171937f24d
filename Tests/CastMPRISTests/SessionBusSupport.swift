import CastMPRIS
import CastTestSupport
import CastdSupport
import Foundation
import Testing

/// A private session bus (`dbus-daemon --session`) for one test, with cast-mpris and playerctl
/// on it: the real parts a desktop has, none of them the machine's own.
final class SessionBus: Sendable {
    let address: String
    let systemAddress: String
    let directory: String
    private let started = Locked<[ChildProcess]>([])

    private init(address: String, systemAddress: String, directory: String) {
        self.address = address
        self.systemAddress = systemAddress
        self.directory = directory
    }

    static let playerctl = "/usr/bin/playerctl"
    static let dbusDaemon = "/usr/bin/dbus-daemon"
    static let dbusMonitor = "/usr/bin/dbus-monitor"
    static let dbusSend = "/usr/bin/dbus-send"

    /// Why these tests cannot run here, if they cannot: the tools they drive are missing.
    static var missingTools: String? {
        let missing = [playerctl, dbusDaemon, dbusMonitor, dbusSend].filter {
            !FileManager.default.isExecutableFile(atPath: $0)
        }
        return missing.isEmpty ? nil : "missing \(missing.joined(separator: ", ")) (apt-get install playerctl dbus)"
    }

    /// Starts a session bus for `body`, and stops it (and whatever `body` launched) afterwards.
    static func with<T>(_ body: (SessionBus) async throws -> T) async throws -> T {
        if let missingTools { Issue.record("cannot test cast-mpris: \(missingTools)") }
        return try await withTemporaryDirectory { directory in
            // Two buses: the session's, and one that stands for the system bus, which playerctl
            // also lists (and without which `playerctl -l` fails); the machine's own is not used.
            var daemons: [ChildProcess] = []
            var bus: SessionBus?
            do {
                var addresses: [String] = []
                for _ in 0..<2 {
                    let daemon = try ChildProcess(
                        dbusDaemon, ["--session", "--nofork", "--nopidfile", "--print-address=1"], directory: directory)
                    daemons.append(daemon)
                    var address = ""
                    try await eventually(timeout: .seconds(10), "dbus-daemon to print its address") {
                        address = daemon.stdout.split(separator: "\n").first.map(String.init) ?? ""
                        return !address.isEmpty
                    }
                    addresses.append(address)
                }
                let started = SessionBus(address: addresses[0], systemAddress: addresses[1], directory: directory)
                bus = started
                let result = try await body(started)
                await started.stopAll()
                for daemon in daemons { await daemon.stop() }
                return result
            } catch {
                await bus?.stopAll()
                for daemon in daemons { await daemon.stop() }
                throw error
            }
        }
    }

    /// Starts `executable` with this bus's environment; stopped when the bus is.
    func launch(_ executable: String, _ arguments: [String], _ environment: [String: String] = [:]) throws
        -> ChildProcess
    {
        var merged = self.environment
        for (key, value) in environment { merged[key] = value }
        let child = try ChildProcess(executable, arguments, directory: directory, environment: merged)
        started.withLock { $0.append(child) }
        return child
    }

    private func stopAll() async {
        for child in started.withLock({ $0 }).reversed() { await child.stop() }
    }

    var environment: [String: String] {
        [
            "DBUS_SESSION_BUS_ADDRESS": address, "DBUS_SYSTEM_BUS_ADDRESS": systemAddress,
            "XDG_CACHE_HOME": directory + "/cache",
        ]
    }

    /// Starts cast-mpris on this bus, for castd at `socket`.
    func startBridge(socket: String, arguments: [String] = []) throws -> ChildProcess {
        try launch("cast-mpris", ["--socket", socket, "--log-level", "debug"] + arguments, environment)
    }

    /// Runs playerctl on this bus.
    func playerctl(_ arguments: [String]) async throws -> CommandResult {
        try await run(Self.playerctl, arguments, environment: environment)
    }

    /// The players playerctl lists.
    func players() async throws -> [String] {
        let result = try await playerctl(["--list-all"])
        return result.stdout.split(separator: "\n").map(String.init)
    }

    /// Waits until playerctl lists `player` (or, with `present` false, until it does not).
    func waitForPlayer(_ player: String, present: Bool = true, bridge: ChildProcess) async throws {
        try await eventually(timeout: .seconds(20), "playerctl to \(present ? "list" : "no longer list") \(player)") {
            #expect(bridge.isRunning, "cast-mpris exited: \(bridge.stderr)")
            return try await players().contains(player) == present
        }
    }

    /// Watches the bus's signals from MPRIS players, as a desktop's shell would.
    func monitor() throws -> ChildProcess {
        try launch(
            Self.dbusMonitor,
            [
                "--address", address,
                "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'",
                "type='signal',interface='org.mpris.MediaPlayer2.Player',member='Seeked'",
            ], [:])
    }

    /// playerctl's name for device `id`'s player (its bus name without org.mpris.MediaPlayer2.).
    static func playerName(deviceID id: String) -> String {
        String(MPRISBusName.name(forDeviceID: id).dropFirst("org.mpris.MediaPlayer2.".count))
    }
}

/// What an emulated device received, from its message log (`--log`): the payloads of one
/// namespace, in order.
struct EmulatorMessages {
    let path: String

    static let media = "urn:x-cast:com.google.cast.media"
    static let receiver = "urn:x-cast:com.google.cast.receiver"

    func received(_ namespace: String, type: String) -> [[String: Any]] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line -> [String: Any]? in
            guard let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                entry["direction"] as? String == "in", entry["namespace"] as? String == namespace,
                let payload = entry["payload"] as? [String: Any], payload["type"] as? String == type
            else { return nil }
            return payload
        }
    }
}
