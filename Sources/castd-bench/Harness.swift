import CastdSupport
import CastClient
import CastEmulator
import CastProtocol
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Where things are, and how hard to try.
struct BenchEnvironment: Sendable {
    /// castd and castc (release builds).
    var binDirectory: String
    /// Sockets, logs, the emulators' authority; removed at the end unless kept.
    var workDirectory: String
    /// The Python of the peers' virtualenv (pychromecast, catt), if prepared.
    var python: String?
    var catt: String?
    var peersScript: String
    var quick: Bool
    /// The address for the emulator that peers reach on the ports of a real device.
    var peerHost: String

    var castd: String { binDirectory + "/castd" }
    var castc: String { binDirectory + "/castc" }
    var authorityDirectory: String { workDirectory + "/authority" }
    var rootPEM: String { authorityDirectory + "/root.pem" }
    /// An empty castd.toml, so that no configuration on this machine changes what is measured.
    var emptyConfig: String { workDirectory + "/castd.toml" }

    /// `full` runs, or `quick` ones for a smoke run.
    func runs(_ full: Int, quick few: Int) -> Int { quick ? few : full }
}

/// Messages the in-process emulators passed, stamped with `monotonicNanos()` as their taps saw
/// them: received once decoded, sent as written to TLS. Transport namespaces (heartbeat, device
/// authentication, connection) are left out.
final class TapLog: Sendable {
    struct Entry: Sendable {
        var time: UInt64
        var direction: EmulatorMessageDirection
        var connection: Int
        var namespace: String
        var payload: String

        var isMedia: Bool { namespace == "urn:x-cast:com.google.cast.media" }

        /// The `type` of the JSON payload, cheaply.
        var type: String? {
            guard let json = try? JSONValue.parse(payload), case .object(let fields) = json,
                case .string(let type)? = fields["type"]
            else { return nil }
            return type
        }

        /// `status[0].playerState` of a MEDIA_STATUS.
        var playerState: String? {
            guard let json = try? JSONValue.parse(payload), case .object(let fields) = json,
                case .array(let statuses)? = fields["status"], case .object(let first)? = statuses.first,
                case .string(let state)? = first["playerState"]
            else { return nil }
            return state
        }
    }

    private let entries = Locked<[Entry]>([])

    var tap: EmulatorMessageTap {
        { [self] direction, connection, message in
            let time = monotonicNanos()
            guard !message.namespace.hasPrefix("urn:x-cast:com.google.cast.tp.") else { return }
            let entry = Entry(
                time: time, direction: direction, connection: connection, namespace: message.namespace,
                payload: message.payloadUtf8)
            entries.withLock { $0.append(entry) }
        }
    }

    func since(_ time: UInt64) -> [Entry] {
        entries.withLock { $0.filter { $0.time >= time } }
    }

    func clear() {
        entries.withLock { $0.removeAll(keepingCapacity: true) }
    }

    /// When the first PAUSE after `time` reached the device.
    func firstPause(after time: UInt64) -> UInt64? {
        since(time).first {
            $0.direction == .received && $0.isMedia && $0.payload.contains("\"PAUSE\"") && $0.type == "PAUSE"
        }?
        .time
    }
}

/// An emulated device in this process, on its own port, with a tap.
final class HostedEmulator: Sendable {
    let emulator: CastDeviceEmulator
    let endpoints: EmulatorEndpoints
    /// What its tap saw (nothing if started untapped).
    let log: TapLog
    private let runner: Locked<Task<Void, Never>?> = Locked(nil)

    var address: String { "\(endpoints.host):\(endpoints.port)" }
    var deviceID: String { emulator.configuration.deviceID }

    private init(emulator: CastDeviceEmulator, endpoints: EmulatorEndpoints, log: TapLog) {
        self.emulator = emulator
        self.endpoints = endpoints
        self.log = log
    }

    static func start(
        name: String, host: String = "127.0.0.1", port: Int = 0, httpPort: Int? = nil, httpsPort: Int? = nil,
        authority: EmulatorDeviceAuthority, tapped: Bool = true, fetchMedia: Bool = false
    ) async throws -> HostedEmulator {
        var configuration = EmulatorConfiguration()
        configuration.name = name
        configuration.fetchMedia = fetchMedia
        configuration.host = host
        configuration.port = port
        configuration.httpPort = httpPort
        configuration.httpsPort = httpsPort
        configuration.deviceAuthority = authority
        let log = TapLog()
        if tapped { configuration.messageTap = log.tap }
        let emulator = CastDeviceEmulator(
            configuration: configuration, logger: Logger(label: "emulator", factory: { _ in SwiftLogNoOpLogHandler() }))
        let endpoints = try await emulator.start()
        let hosted = HostedEmulator(emulator: emulator, endpoints: endpoints, log: log)
        // Unstructured: the emulator serves across figures, until `shutdown()` (which makes run()
        // return, ending the task).
        let task = Task { _ = try? await emulator.run() }
        hosted.runner.withLock { $0 = task }
        return hosted
    }

    func shutdown() async {
        await emulator.shutdown()
        let task = runner.withLock { $0 }
        await task?.value
    }
}

/// castd as a process of its own, as users run it.
final class Daemon: Sendable {
    let process: LongProcess
    let socketPath: String

    private init(process: LongProcess, socketPath: String) {
        self.process = process
        self.socketPath = socketPath
    }

    var pid: pid_t { process.pid }

    /// Starts castd on `WORK/NAME.sock` with no state, no configuration file and the emulators'
    /// root trusted, plus `arguments`; returns once its socket accepts connections.
    static func start(_ environment: BenchEnvironment, name: String, arguments: [String]) async throws -> Daemon {
        let socket = environment.workDirectory + "/\(name).sock"
        let process = try LongProcess(
            [
                environment.castd, "--mode", "user", "--config", environment.emptyConfig, "--socket", socket,
                "--state-directory", "",
                "--trust-root", environment.rootPEM,
            ] + arguments,
            log: environment.workDirectory + "/\(name).log")
        let daemon = Daemon(process: process, socketPath: socket)
        let deadline = monotonicNanos() + 20_000_000_000
        while !SocketProbe.accepts(socket) {
            guard process.isRunning else {
                throw BenchError(
                    "castd exited with \(process.exitStatus ?? -1) before listening:\n\(process.logTail())")
            }
            guard monotonicNanos() < deadline else {
                await process.stop()
                throw BenchError("castd did not listen on \(socket) within 20 s:\n\(process.logTail())")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return daemon
    }

    func connect() async throws -> CastdClient {
        try await CastdClient.connect(socketPath: socketPath)
    }

    func stop() async {
        await process.stop()
    }

    var rssKiB: Int? { Proc.statusValue(pid, "VmRSS") }
    var peakRSSKiB: Int? { Proc.statusValue(pid, "VmHWM") }
    var threads: Int? { Proc.statusValue(pid, "Threads") }
    /// The CPU time (user and system) castd has used, in seconds, read from /proc with the
    /// kernel's own clock tick (`Proc.ticksPerSecond`). A failed read throws: a figure made
    /// from it would be wrong, not zero.
    func cpuSeconds() throws -> Double {
        guard let ticks = Proc.cpuTicks(pid) else {
            throw BenchError("cannot read castd's CPU time from /proc/\(pid)/stat")
        }
        return Double(ticks) / Double(Proc.ticksPerSecond)
    }
}

/// Whether something accepts connections on a Unix socket path.
enum SocketProbe {
    static func accepts(_ path: String) -> Bool {
        let fd = connectUnix(path)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }

    /// A connected SOCK_STREAM socket to `path`, or -1.
    static func connectUnix(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            return -1
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            close(fd)
            return -1
        }
        return fd
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Waits until `condition` holds, checking every `poll`; throws after `timeout`.
func waitUntil(
    _ what: String, timeout: Duration = .seconds(20), poll: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while !(try await condition()) {
        guard ContinuousClock.now < deadline else { throw BenchError("timed out after \(timeout) waiting for \(what)") }
        try await Task.sleep(for: poll)
    }
}
