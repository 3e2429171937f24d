import CastdAPI
import CastdMediaServer
import CastdServer
import CastdSupport
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The files castd serves to devices: a load that names a handed-over file (`media.file`)
/// takes it, publishes it on castd's media server at the address the device reaches castd at,
/// and loads that URL. A device's files stay served while they are its media: until the next
/// load on it, or its session ends (`CastdService.followSessions`).
public final class ServedFiles: Sendable {
    let server: MediaServer
    let files: HandedFiles
    let logger: Logger
    /// The address offered to every device (`http.address`); nil: the one castd reaches each
    /// device from.
    public let fixedAddress: String?
    /// The tokens serving each device's media, by device id.
    private let byDevice = Locked<[String: [MediaToken]]>([:])

    public init(server: MediaServer, files: HandedFiles, fixedAddress: String? = nil, logger: Logger) {
        self.server = server
        self.fixedAddress = fixedAddress
        self.files = files
        self.logger = logger
    }

    /// Takes the file `media.file` names (handed over by `uid`) and serves it on `address`:
    /// `media` then names the URL, with a content type and a title if it had none. The token
    /// is for `adopt` once the device has taken the media, or `revoke` if it has not.
    func serve(_ media: inout CastdMediaInformation, uid: UInt32, address: String) async throws -> MediaToken {
        let file = try files.take(media.file, uid: uid)
        let port: Int
        do {
            port = try await server.listen(on: address)
        } catch {
            files.discard(file)
            throw CastdError(
                .unavailable, "castd cannot serve files on \(address), the address the device reaches it at: \(error)")
        }
        var head = [UInt8](repeating: 0, count: 64)
        let count = head.withUnsafeMutableBytes { pread(file.descriptor, $0.baseAddress, $0.count, 0) }
        head.removeSubrange(max(count, 0)...)
        let sniffed = MediaContentType.sniff(head: head, name: file.name)
        let token = server.publish(descriptor: file.descriptor, name: file.name, contentType: sniffed)
        guard let url = server.url(for: token, host: address) else {
            revoke([token])
            throw CastdError(.internal, "castd's media server gave no URL for a file it serves")
        }
        media.file = ""
        media.contentID = url
        media.contentURL = url
        if media.contentType.isEmpty { media.contentType = sniffed ?? "application/octet-stream" }
        if media.metadata.title.isEmpty, !file.name.isEmpty {
            media.metadata.title = Self.title(fromName: file.name)
        }
        logger.info(
            "serving a file",
            metadata: ["media.token": "\(token)", "http.address": "\(address)", "http.port": "\(port)"])
        return token
    }

    /// `tokens` now serve `deviceID`'s media, in place of what did before (revoked).
    func adopt(_ tokens: [MediaToken], deviceID: String, replacing: Bool) {
        let old = byDevice.withLock { served in
            let old = replacing ? served[deviceID] ?? [] : []
            served[deviceID] = (replacing ? [] : served[deviceID] ?? []) + tokens
            if served[deviceID]?.isEmpty == true { served[deviceID] = nil }
            return old
        }
        revoke(old)
    }

    /// The device's media left it (its session ended): its files are no longer served.
    public func release(deviceID: String) {
        revoke(byDevice.withLock { $0.removeValue(forKey: deviceID) ?? [] })
    }

    /// The session moved from one device to another: the files go with it.
    public func move(from: String, to: String) {
        byDevice.withLock { served in
            guard let tokens = served.removeValue(forKey: from) else { return }
            served[to, default: []] += tokens
        }
    }

    func revoke(_ tokens: [MediaToken]) {
        for token in tokens {
            server.revoke(token)
            files.released()
        }
    }

    /// The devices whose media castd serves files for.
    public var deviceIDs: [String] { byDevice.withLock { Array($0.keys) } }

    /// Files served now, for status and tests.
    public var servedCount: Int { byDevice.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// "Holiday 2024" for "Holiday 2024.mp4": the name without its extension.
    static func title(fromName name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }
}
