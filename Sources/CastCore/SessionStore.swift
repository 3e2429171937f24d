import CastSync
import CastdAPI
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What castd needs to rejoin a session after it restarts: the device and where it was, the
/// session and its transport. Never enough to relaunch anything, on purpose: a saved session
/// the device no longer runs is dropped.
public struct SavedSession: Codable, Sendable, Hashable {
    public var deviceID: String
    public var deviceName: String
    public var host: String
    public var port: Int
    public var sessionID: String
    public var appID: String
    public var displayName: String
    public var transportID: String
    public var namespaces: [String]
    public var appType: String
    public var joined: Bool
    /// Unix ms.
    public var savedAt: Int64

    public init(_ session: CastdSession, endpoint: DeviceEndpoint, savedAt: Date = Date()) {
        deviceID = session.deviceID
        deviceName = session.deviceName
        host = endpoint.host
        port = endpoint.port
        sessionID = session.sessionID
        appID = session.appID
        displayName = session.displayName
        transportID = session.transportID
        namespaces = session.namespaces
        appType = session.appType
        joined = session.joined
        self.savedAt = Int64((savedAt.timeIntervalSince1970 * 1000).rounded())
    }

    /// The session as castd holds it after a restart: suspended until the device answers.
    var suspendedSession: CastdSession {
        var session = CastdSession()
        session.deviceID = deviceID
        session.deviceName = deviceName
        session.sessionID = sessionID
        session.appID = appID
        session.displayName = displayName
        session.transportID = transportID
        session.namespaces = namespaces
        session.appType = appType
        session.joined = joined
        session.state = .suspended
        session.reason = "castd restarted; rejoining"
        return session
    }

    var endpoint: DeviceEndpoint { DeviceEndpoint(host: host, port: port) }
}

/// The sessions castd holds, one per device, kept in `sessions.json` in the state directory so
/// that a castd killed without warning (SIGKILL, a crash, power) rejoins them when it starts again.
///
/// Every change rewrites the file atomically: a temporary file in the same directory, written
/// and fsync'd, renamed over the old one, and the directory fsync'd, so that after a crash the
/// file is the old version or the new one, never a torn mix. Writes happen in the order of the
/// changes, under a lock (session changes are rare; a write is a few hundred bytes).
public final class SessionStore: Sendable {
    public let file: URL?
    private let logger: Logger
    private let sessions = Locked<[String: SavedSession]>([:])

    /// `directory` nil: nothing is saved (tests, or `--state-directory ''`).
    public init(directory: URL?, logger: Logger) {
        self.file = directory?.appendingPathComponent("sessions.json")
        self.logger = logger.subsystem("State")
    }

    private struct FileContents: Codable {
        var version: Int
        var sessions: [SavedSession]
    }

    /// Reads the saved sessions. A missing file is no sessions; an unreadable or corrupt one is
    /// logged and set aside (renamed `.corrupt`) rather than stopping castd.
    public func load() -> [SavedSession] {
        guard let file else { return [] }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch CocoaError.fileReadNoSuchFile {
            return []
        } catch let error as NSError where error.domain == NSPOSIXErrorDomain && error.code == Int(ENOENT) {
            return []
        } catch {
            logger.warning("cannot read saved sessions", metadata: ["file": "\(file.path)", "error": "\(error)"])
            return []
        }
        do {
            let contents = try JSONDecoder().decode(FileContents.self, from: data)
            sessions.withLock {
                $0 = Dictionary(contents.sessions.map { ($0.deviceID, $0) }, uniquingKeysWith: { _, last in last })
            }
            return contents.sessions
        } catch {
            let aside = file.appendingPathExtension("corrupt")
            _ = rename(file.path, aside.path)
            logger.warning(
                "saved sessions are corrupt; set aside, starting without them",
                metadata: ["file": "\(aside.path)", "error": "\(error)"])
            return []
        }
    }

    /// Records `session` as the one castd holds on its device (nil: none), and rewrites the file
    /// if that changed anything.
    public func record(deviceID: String, _ session: SavedSession?) {
        sessions.withLock { sessions in
            var comparable = session
            comparable?.savedAt = sessions[deviceID]?.savedAt ?? 0
            guard sessions[deviceID] != comparable else { return }
            sessions[deviceID] = session
            write(sessions.values.sorted { $0.deviceID < $1.deviceID })
        }
    }

    public func saved() -> [SavedSession] {
        sessions.withLock { $0.values.sorted { $0.deviceID < $1.deviceID } }
    }

    private func write(_ all: [SavedSession]) {
        guard let file else { return }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(FileContents(version: 1, sessions: all))
            try AtomicFile.write(data, to: file)
        } catch {
            logger.error("cannot save sessions; a restart will not rejoin them", metadata: ["file": "\(file.path)", "error": "\(error)"])
        }
    }
}

/// Writes a file so that a crash at any moment leaves either its old or its new contents.
public enum AtomicFile {
    public struct Failure: Error, CustomStringConvertible {
        public var step: String
        public var path: String
        public var errno: Int32
        public var description: String { "\(step) \(path): \(String(cString: strerror(errno)))" }
    }

    /// temp file (same directory) → write → fsync → rename over `url` → fsync the directory.
    /// The directory is created (mode 0700) if missing; the file is mode 0600.
    public static func write(_ data: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent().path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = directory + "/." + url.lastPathComponent + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(step: "create", path: temporary, errno: errno) }
        var closed = false
        defer {
            if !closed { close(fd) }
        }
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    let error = errno
                    unlink(temporary)
                    throw Failure(step: "write", path: temporary, errno: error)
                }
                offset += written
            }
        }
        guard fsync(fd) == 0 else {
            let error = errno
            unlink(temporary)
            throw Failure(step: "fsync", path: temporary, errno: error)
        }
        closed = true
        close(fd)
        guard rename(temporary, url.path) == 0 else {
            let error = errno
            unlink(temporary)
            throw Failure(step: "rename to", path: url.path, errno: error)
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw Failure(step: "open directory", path: directory, errno: errno) }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw Failure(step: "fsync directory", path: directory, errno: errno) }
    }
}
