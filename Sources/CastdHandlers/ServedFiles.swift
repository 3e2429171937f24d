import CastdAPI
import CastdMediaServer
import CastdServer
import CastdSupport
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The files castd serves to devices: a load that names handed-over files (`media.file`, an
/// image's `file`, a text track's `file`) takes them, publishes them on castd's media server at
/// the address the device reaches castd at, and loads their URLs. A device's files stay served
/// while they are its media: until the next load on it, or its session ends
/// (`CastdService.followSessions`).
public final class ServedFiles: Sendable {
    let server: MediaServer
    let files: HandedFiles
    let logger: Logger
    /// The address offered to every device (`http.address`); nil: the one castd reaches each
    /// device from.
    public let fixedAddress: String?
    /// The tokens serving each device's media, by device id.
    private let byDevice = Locked<[String: [MediaToken]]>([:])
    /// The largest subtitles file castd converts to WebVTT and holds while it is served.
    static let maximumSubtitlesBytes = WebVTT.maximumInputBytes

    public init(server: MediaServer, files: HandedFiles, fixedAddress: String? = nil, logger: Logger) {
        self.server = server
        self.fixedAddress = fixedAddress
        self.files = files
        self.logger = logger
    }

    /// Takes the files `media` names (handed over by `uid`: its own, its images' and its text
    /// tracks') and serves them on `address`: `media` then names their URLs, with a content type
    /// and a title if it had none. The tokens are for `adopt` once the device has taken the
    /// media, or `revoke` if it has not.
    func serve(_ media: inout CastdMediaInformation, uid: UInt32, address: String) async throws -> [MediaToken] {
        var tokens: [MediaToken] = []
        do {
            let port: Int
            do {
                port = try await server.listen(on: address)
            } catch {
                throw CastdError(
                    .unavailable,
                    "castd cannot serve files on \(address), the address the device reaches it at: \(error)")
            }
            if !media.file.isEmpty {
                let file = try files.take(media.file, uid: uid)
                let sniffed = MediaServer.sniff(descriptor: file.descriptor, name: file.name)
                let url = try publish(file, contentType: sniffed, address: address, into: &tokens)
                media.file = ""
                media.contentID = url
                media.contentURL = url
                if media.contentType.isEmpty { media.contentType = sniffed ?? "application/octet-stream" }
                if media.metadata.title.isEmpty, (sniffed ?? "").hasPrefix("audio/"),
                    let tags = MediaTags.read(descriptor: file.descriptor)
                {
                    Self.apply(tags, to: &media.metadata)
                }
                if media.metadata.title.isEmpty, !file.name.isEmpty {
                    media.metadata.title = Self.title(fromName: file.name)
                }
                logger.info(
                    "serving a file",
                    metadata: ["media.token": "\(tokens[0])", "http.address": "\(address)", "http.port": "\(port)"])
            }
            for index in media.metadata.images.indices where !media.metadata.images[index].file.isEmpty {
                let file = try files.take(media.metadata.images[index].file, uid: uid)
                guard let type = MediaServer.sniff(descriptor: file.descriptor, name: file.name),
                    type.hasPrefix("image/")
                else {
                    files.discard(file)
                    throw CastdError(
                        .invalidArgument, "the image file '\(file.name)' is not a JPEG, PNG, WebP or GIF image")
                }
                media.metadata.images[index].url = try publish(file, contentType: type, address: address, into: &tokens)
                media.metadata.images[index].file = ""
            }
            for index in media.tracks.indices where !media.tracks[index].file.isEmpty {
                let file = try files.take(media.tracks[index].file, uid: uid)
                let converted = try subtitles(file)
                let token = server.publish(descriptor: converted, name: "subtitles.vtt", contentType: "text/vtt")
                tokens.append(token)
                guard let url = server.url(for: token, host: address) else { throw Self.noURL }
                media.tracks[index].file = ""
                media.tracks[index].contentID = url
                media.tracks[index].contentType = "text/vtt"
                if media.tracks[index].name.isEmpty { media.tracks[index].name = Self.title(fromName: file.name) }
            }
        } catch {
            revoke(tokens)
            throw error
        }
        return tokens
    }

    static let noURL = CastdError(.internal, "castd's media server gave no URL for a file it serves")

    /// Publishes a taken file (the server closes it, and says so to `files`); its URL.
    private func publish(
        _ file: HandedFile, contentType: String?, address: String, into tokens: inout [MediaToken]
    ) throws(CastdError) -> String {
        let files = self.files
        let token = server.publish(
            descriptor: file.descriptor, name: file.name, contentType: contentType, closed: { files.released() })
        tokens.append(token)
        guard let url = server.url(for: token, host: address) else { throw Self.noURL }
        return url
    }

    /// A subtitles file as WebVTT, in a file of castd's own (unlinked: it goes when the media
    /// server closes it); the handed-over file is closed.
    private func subtitles(_ file: HandedFile) throws(CastdError) -> Int32 {
        defer { files.discard(file) }
        let bytes: [UInt8]
        do {
            bytes = try FileBytes.read(descriptor: file.descriptor, limit: Self.maximumSubtitlesBytes)
        } catch {
            throw CastdError(.invalidArgument, "the subtitles file '\(file.name)' cannot be read: \(error)")
        }
        let vtt: [UInt8]
        do {
            vtt = try WebVTT.convert(bytes)
        } catch {
            throw CastdError(.invalidArgument, "the subtitles file '\(file.name)' \(Self.reason(error))")
        }
        do {
            return try FileBytes.unlinkedFile(holding: vtt)
        } catch {
            throw CastdError(.resourceExhausted, "castd cannot hold the subtitles of '\(file.name)': \(error)")
        }
    }

    /// Why a subtitles file could not be converted, after its name.
    static func reason(_ error: WebVTT.ConversionError) -> String {
        switch error {
        case .tooLarge(_, let limit): "is larger than \(limit >> 20) MiB, more than subtitles take"
        case .tooManyCues(let limit): "has more than \(limit) cues"
        case .noCues: "holds no subtitles: it is neither WebVTT nor SubRip (.srt) with a cue in it"
        }
    }

    /// An audio file's tags as its metadata (the caller gave no title): a music track's fields.
    static func apply(_ tags: MediaTags, to metadata: inout CastdMediaMetadata) {
        guard !tags.isEmpty else { return }
        if metadata.metadataType == .generic {
            metadata.metadataType = .musicTrack
        }
        if let title = tags.title { metadata.title = title }
        if metadata.artist.isEmpty, let artist = tags.artist { metadata.artist = artist }
        if metadata.albumName.isEmpty, let album = tags.album { metadata.albumName = album }
        if metadata.albumArtist.isEmpty, let albumArtist = tags.albumArtist { metadata.albumArtist = albumArtist }
        if metadata.trackNumber == 0, let track = tags.trackNumber, (1...9999).contains(track) {
            metadata.trackNumber = UInt32(track)
        }
        if metadata.discNumber == 0, let disc = tags.discNumber, (1...999).contains(disc) {
            metadata.discNumber = UInt32(disc)
        }
        if metadata.releaseDate.isEmpty, let date = tags.date { metadata.releaseDate = date }
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

    /// Items left the device's queue: the files among `urls` are no longer served.
    func release(urls: [String], deviceID: String) {
        let gone = Set(urls.compactMap(MediaToken.init(url:)))
        guard !gone.isEmpty else { return }
        let revoked = byDevice.withLock { served -> [MediaToken] in
            guard let tokens = served[deviceID] else { return [] }
            served[deviceID] = tokens.filter { !gone.contains($0) }
            if served[deviceID]?.isEmpty == true { served[deviceID] = nil }
            return tokens.filter { gone.contains($0) }
        }
        revoke(revoked)
    }

    /// Whether castd serves files for `deviceID`'s media.
    func serves(deviceID: String) -> Bool { byDevice.withLock { $0[deviceID] != nil } }

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
        for token in tokens { server.revoke(token) }
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

extension CastdMediaInformation {
    /// The URLs of the media, its images and its tracks: those castd serves among them.
    var urls: [String] {
        [contentID, contentURL] + metadata.images.map(\.url) + tracks.map(\.contentID)
    }

    /// Whether the media, one of its images or one of its tracks names a handed-over file.
    var namesFiles: Bool {
        !file.isEmpty || metadata.images.contains { !$0.file.isEmpty } || tracks.contains { !$0.file.isEmpty }
    }
}
