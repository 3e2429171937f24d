import CastdSupport
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The device certificate key each device id first authenticated with (trust on first use), kept
/// in `pinned-keys.json` in the state directory. mDNS lets any host announce any id; device
/// authentication proves only that the answer comes from some genuine Cast device. With the pin,
/// a genuine device (or one whose certificate leaked) announcing another's id is refused
/// (``CastSenderLink/DeviceAuthenticationFailure/Check/keyChanged``) until a person forgets the pin
/// (`castc devices forget`).
public final class DeviceKeyPins: Sendable {
    public struct Pin: Codable, Sendable, Equatable {
        /// `sha256:…` of the device certificate's SubjectPublicKeyInfo.
        public var key: String
        /// The device certificate's subject when it was pinned, for people.
        public var deviceCertificate: String
        /// Milliseconds since the Unix epoch.
        public var pinnedAt: Int64
    }

    private struct FileContents: Codable {
        var version: Int
        var pins: [String: Pin]
    }

    /// The largest file read, and the most pins kept (one per device id ever authenticated).
    public static let maximumFileSize = 1 << 20
    public static let maximumPins = 4_096

    public let file: URL?
    private let logger: Logger
    private let pins = Locked<[String: Pin]>([:])
    /// The file could not be read: pins are kept in memory only, never written over it.
    private let unreadable: Bool

    /// `directory` nil: pins live as long as the process (tests, or `--state-directory ''`).
    public init(directory: URL?, logger: Logger) {
        let file = directory?.appendingPathComponent("pinned-keys.json")
        self.file = file
        self.logger = logger.subsystem("State")
        unreadable = !Self.load(file, into: pins, logger: self.logger)
    }

    public func key(for deviceID: String) -> String? { pins.withLock { $0[deviceID]?.key } }

    /// Pins `key` for `deviceID` unless a key is pinned already; true if it pinned.
    @discardableResult
    public func pinIfNew(deviceID: String, key: String, deviceCertificate: String, now: Date = Date()) -> Bool {
        guard !key.isEmpty else { return false }
        return pins.withLock { pins in
            guard pins[deviceID] == nil, pins.count < Self.maximumPins else { return false }
            pins[deviceID] = Pin(
                key: key, deviceCertificate: deviceCertificate,
                pinnedAt: Int64((now.timeIntervalSince1970 * 1000).rounded()))
            save(pins)
            logger.info("pinned the device's key", metadata: ["device.id": "\(deviceID)", "key": "\(key)"])
            return true
        }
    }

    /// Forgets the pin of `deviceID`; returns the key that was pinned.
    @discardableResult
    public func forget(deviceID: String) -> String? {
        pins.withLock { pins in
            guard let old = pins.removeValue(forKey: deviceID) else { return nil }
            save(pins)
            logger.notice(
                "forgot the device's pinned key", metadata: ["device.id": "\(deviceID)", "key": "\(old.key)"])
            return old.key
        }
    }

    /// Reads a pins file's bytes: throws unless it is a version-1 pins file; drops pins that are
    /// not a device id and a `sha256:` key.
    public static func decode(_ data: Data) throws -> [String: Pin] {
        let contents = try JSONDecoder().decode(FileContents.self, from: data)
        guard contents.version == 1 else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "version \(contents.version)"))
        }
        return contents.pins.filter { id, pin in
            !id.isEmpty && id.utf8.count <= 256 && pin.key.hasPrefix("sha256:") && pin.key.utf8.count == 71
                && pin.deviceCertificate.utf8.count <= 1024
        }.prefix(maximumPins).reduce(into: [:]) { $0[$1.key] = $1.value }
    }

    /// Reads the file into `pins`; false when it exists and cannot be read.
    private static func load(_ file: URL?, into pins: Locked<[String: Pin]>, logger: Logger) -> Bool {
        guard let file else { return true }
        do {
            guard let data = try BoundedFile.read(file.path, limit: maximumFileSize) else { return true }
            let loaded = try decode(data)
            pins.withLock { $0 = loaded }
            return true
        } catch {
            // Neither set aside nor written over: that would forget every pin. castd pins in
            // memory only, and says so.
            logger.error(
                "cannot read the pinned device keys; pins are kept in memory only until the file is fixed or removed",
                metadata: ["file": "\(file.path)", "error": "\(error)"])
            return false
        }
    }

    private func save(_ pins: [String: Pin]) {
        guard let file, !unreadable else { return }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try AtomicFile.write(try encoder.encode(FileContents(version: 1, pins: pins)), to: file)
        } catch {
            logger.error("cannot save the pinned device keys", metadata: ["file": "\(file.path)", "error": "\(error)"])
        }
    }
}
