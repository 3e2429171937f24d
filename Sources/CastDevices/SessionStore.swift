import CastdSupport
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

    /// Why castd would not rejoin this session from a state file, or nil. The file is castd's
    /// own, but it outlives castd's checks: what it holds is checked as anything from outside.
    public var problem: String? {
        func bounded(_ text: String, _ what: String, required: Bool = true) -> String? {
            if required && text.isEmpty { return "no \(what)" }
            if text.utf8.count > 256 { return "\(what) longer than 256 bytes" }
            if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                return "\(what) holds control characters"
            }
            return nil
        }
        if let problem = bounded(deviceID, "device id") ?? bounded(deviceName, "device name", required: false)
            ?? bounded(sessionID, "session id") ?? bounded(appID, "app id") ?? bounded(transportID, "transport id")
            ?? bounded(displayName, "display name", required: false) ?? bounded(appType, "app type", required: false)
        {
            return problem
        }
        guard (1...65_535).contains(port) else { return "port \(port) is not 1 to 65535" }
        guard !host.isEmpty, host.utf8.count <= 253,
            host.unicodeScalars.allSatisfy({
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || ".-:%_[]".unicodeScalars.contains($0))
            })
        else { return "host \(host.debugDescription.prefix(80)) is not a host name or an address" }
        guard namespaces.count <= 64 else { return "\(namespaces.count) namespaces (at most 64)" }
        for namespace in namespaces where !namespace.hasPrefix("urn:x-cast:") || namespace.utf8.count > 256 {
            return "namespace \(namespace.debugDescription.prefix(80)) is not a urn:x-cast: name"
        }
        return nil
    }
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

    /// The largest sessions.json castd reads: one session is a few hundred bytes.
    public static let maximumFileSize = 1 << 20
    /// The most sessions castd restores from the file.
    public static let maximumSessions = 1_000

    /// What a state file holds: the sessions that pass ``SavedSession/problem``, and why each of
    /// the others was left out.
    public struct Contents: Sendable, Equatable {
        public var sessions: [SavedSession]
        public var dropped: [String]
    }

    /// Reads a state file's bytes. Throws when they are not a version-1 sessions file at all;
    /// a session that does not pass ``SavedSession/problem`` (a port out of range, a host that
    /// is not a host name or an address) is dropped, with the reason.
    public static func decode(_ data: Data) throws -> Contents {
        guard data.count <= maximumFileSize else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "\(data.count) bytes, over the \(maximumFileSize)-byte limit"))
        }
        let file = try JSONDecoder().decode(FileContents.self, from: data)
        guard file.version == 1 else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "version \(file.version); this castd reads version 1"))
        }
        var contents = Contents(sessions: [], dropped: [])
        for (index, session) in file.sessions.enumerated() {
            if index >= maximumSessions {
                contents.dropped.append("more than \(maximumSessions) sessions")
                break
            }
            if let problem = session.problem {
                contents.dropped.append("session \(index + 1): \(problem)")
            } else {
                contents.sessions.append(session)
            }
        }
        return contents
    }

    /// Reads the saved sessions. A missing file is no sessions; an unreadable or corrupt one is
    /// logged and set aside (renamed `.corrupt`) rather than stopping castd.
    public func load() -> [SavedSession] {
        guard let file else { return [] }
        let data: Data
        do {
            guard let read = try BoundedFile.read(file.path, limit: Self.maximumFileSize) else { return [] }
            data = read
        } catch {
            logger.warning("cannot read saved sessions", metadata: ["file": "\(file.path)", "error": "\(error)"])
            if error.kind == .tooLarge { setAside(file, because: "\(error)") }
            return []
        }
        do {
            let contents = try Self.decode(data)
            for reason in contents.dropped {
                logger.warning(
                    "a saved session is invalid; not rejoined",
                    metadata: ["file": "\(file.path)", "error": "\(reason)"])
            }
            sessions.withLock {
                $0 = Dictionary(contents.sessions.map { ($0.deviceID, $0) }, uniquingKeysWith: { _, last in last })
            }
            return contents.sessions
        } catch {
            setAside(file, because: "\(error)")
            return []
        }
    }

    private func setAside(_ file: URL, because reason: String) {
        let aside = file.appendingPathExtension("corrupt")
        _ = rename(file.path, aside.path)
        logger.warning(
            "saved sessions are corrupt; set aside, starting without them",
            metadata: ["file": "\(aside.path)", "error": "\(reason)"])
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
            logger.error(
                "cannot save sessions; a restart will not rejoin them",
                metadata: ["file": "\(file.path)", "error": "\(error)"])
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
        // A fresh name, created exclusively, never through a symbolic link: whatever stands at
        // a name castd picks is not written through.
        let suffix = String(UInt64.random(in: .min ... .max), radix: 36)
        let temporary = directory + "/." + url.lastPathComponent + ".\(suffix).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
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

/// Reads a whole file that castd keeps or is given (its state, its configuration) with a bound on
/// its size, without following a symbolic link at its last component.
public enum BoundedFile {
    public struct Failure: Error, CustomStringConvertible {
        public enum Kind: Sendable { case open, tooLarge, read }
        public var kind: Kind
        public var path: String
        public var detail: String
        public var description: String { "\(path): \(detail)" }
    }

    /// The file's bytes; nil when it does not exist. Throws when it cannot be opened or read, is
    /// a symbolic link or not a regular file, or is over `limit` bytes.
    public static func read(_ path: String, limit: Int, followLinks: Bool = false) throws(Failure) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | (followLinks ? 0 : O_NOFOLLOW))
        if fd < 0 {
            let error = errno
            if error == ENOENT { return nil }
            let detail = error == ELOOP ? "is a symbolic link" : String(cString: strerror(error))
            throw Failure(kind: .open, path: path, detail: detail)
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw Failure(kind: .read, path: path, detail: String(cString: strerror(errno)))
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw Failure(kind: .open, path: path, detail: "not a regular file")
        }
        guard status.st_size <= limit else {
            throw Failure(kind: .tooLarge, path: path, detail: "\(status.st_size) bytes, over the \(limit)-byte limit")
        }
        var data = Data(count: limit + 1)
        var total = 0
        while total <= limit {
            let count = data.withUnsafeMutableBytes { raw in
                Glibc.read(fd, raw.baseAddress! + total, limit + 1 - total)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(kind: .read, path: path, detail: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            total += count
        }
        guard total <= limit else {
            throw Failure(kind: .tooLarge, path: path, detail: "over the \(limit)-byte limit")
        }
        return Data(data.prefix(total))
    }
}
