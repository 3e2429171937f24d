import CastClient
import CastdAPI
import Logging

/// Where a player's artwork comes from: the image to show for the media's images, and its
/// cached file. ``MPRISBridge`` publishes Metadata at once without `mpris:artUrl`, and again
/// with it once ``fetch(_:)`` has the file.
public protocol MPRISArtworkSource: Sendable {
    /// The URL of the image to show, of `images`; nil for none.
    func choose(_ images: [Castd_V1_Image]) -> String?
    /// The cached file for `url`, if it is on disk already (no download).
    func cachedPath(for url: String) async -> String?
    /// Downloads `url` into the cache; the file's path, or nil (the source logs why).
    func fetch(_ url: String) async -> String?
}

/// cast-mpris: follows castd (a Watch) and keeps one MPRIS2 player on the session bus for each
/// device that has a media session, and runs what D-Bus clients ask of the players as castd
/// calls. When castd goes, the players go; the bridge reconnects with backoff, and they come
/// back.
public actor MPRISBridge {
    public struct Options: Sendable {
        /// castd's socket; nil finds it by the usual rules (`$CASTD_SOCKET`, the session's, the
        /// system's).
        public var socketPath: String?
        /// The deadline of each castd call a D-Bus client's call makes.
        public var callTimeout: Duration = .seconds(10)
        /// The wait before reconnecting to castd: doubles after each failed attempt up to the
        /// maximum, and starts again from the minimum once connected.
        public var reconnectMinimum: Duration = .milliseconds(250)
        public var reconnectMaximum: Duration = .seconds(5)

        public init(socketPath: String? = nil) { self.socketPath = socketPath }
    }

    private let options: Options
    private let loop: BusLoop
    private let players: MPRISPlayerSet
    private let artwork: (any MPRISArtworkSource)?
    private let logger: Logger

    private var client: CastdClient?
    /// castd's state, folded from Watch by the rule castd itself keeps it with.
    private var state = CastdState()
    /// Per device: the media whose artwork was looked for (by ``ArtworkKey``), the URL chosen
    /// (nil: none to show), and its file once cached.
    private var artworkFiles: [String: (key: ArtworkKey, url: String?, path: String?)] = [:]
    /// Per device: the artwork search under way, at most one. A newer media's search cancels
    /// the one before (and so its download), as does the player going.
    private var artworkSearches: [String: Task<Void, Never>] = [:]

    /// What makes a new search for artwork: another media session, queue item or image list. A
    /// failed download is tried again when one of them changes, not at every status.
    struct ArtworkKey: Equatable {
        var mediaSessionID: Int64
        var itemID: Int64
        var contentID: String
        var images: [Castd_V1_Image]

        init(_ status: CastdMediaStatus) {
            mediaSessionID = status.mediaSessionID
            itemID = status.currentItemID
            contentID = status.media.contentID
            images = status.media.metadata.images
        }
    }

    public init(options: Options, loop: BusLoop, artwork: (any MPRISArtworkSource)?, logger: Logger) {
        self.options = options
        self.loop = loop
        self.artwork = artwork
        self.logger = logger
        players = MPRISPlayerSet(loop: loop, logger: logger)
    }

    /// Follows castd until the task is cancelled.
    public func run() async {
        players.setPerform { [weak self] action, deviceID, reply in
            guard let self else { return reply.fail(.failed("cast-mpris is stopping")) }
            Task { await self.execute(action, on: deviceID, reply: reply) }
        }
        var watch = CastdStateWatch.Options(socketPath: options.socketPath)
        watch.reconnectMinimum = options.reconnectMinimum
        watch.reconnectMaximum = options.reconnectMaximum
        await CastdStateWatch(options: watch).run { update in
            switch update {
            case .connected(let client):
                self.client = client
                logger.info("connected to castd at \(client.socketPath)")
            case .changed(let state, let devices, _):
                self.state = state
                for id in devices { sync(id) }
            case .disconnected(let reason, let failures):
                self.client = nil
                if failures == 0 {
                    logger.warning("lost castd: \(reason); reconnecting")
                } else if failures == 1 {
                    // Said once, then quietly: castd may be down for a while.
                    logger.warning("cannot reach castd: \(reason); trying again with backoff")
                } else {
                    logger.debug("cannot reach castd (attempt \(failures)): \(reason)")
                }
                forgetAll()
            }
        }
        forgetAll()
    }

    // MARK: castd's state

    /// Brings device `id`'s player in line with castd's state: there while the device has a
    /// session with media; gone otherwise.
    private func sync(_ id: String) {
        guard let device = state.devices[id], state.sessions[id] != nil, let status = state.media[id] else {
            artworkFiles[id] = nil
            artworkSearches.removeValue(forKey: id)?.cancel()
            players.set(id, nil)
            return
        }
        players.set(id, MPRISPlayerSnapshot(device: device, media: status, artworkPath: artworkPath(id, status)))
    }

    /// The artwork file to show now for `status`, starting its download if it is not cached.
    private func artworkPath(_ id: String, _ status: CastdMediaStatus) -> String? {
        guard let artwork else { return nil }
        let key = ArtworkKey(status)
        if let known = artworkFiles[id], known.key == key { return known.path }
        artworkSearches.removeValue(forKey: id)?.cancel()
        guard let url = artwork.choose(key.images) else {
            artworkFiles[id] = (key, nil, nil)
            return nil
        }
        artworkFiles[id] = (key, url, nil)
        artworkSearches[id] = Task {
            let path: String?
            if let cached = await artwork.cachedPath(for: url) {
                path = cached
            } else {
                path = await artwork.fetch(url)
            }
            artworkReady(id, key: key, path: path)
        }
        return nil
    }

    private func artworkReady(_ id: String, key: ArtworkKey, path: String?) {
        // Still the same media? A failed download leaves the entry without a file: tried again
        // when the media changes.
        guard let known = artworkFiles[id], known.key == key else { return }
        artworkSearches[id] = nil
        guard let path else { return }
        artworkFiles[id] = (key, known.url, path)
        sync(id)
    }

    private func forgetAll() {
        state = CastdState()
        artworkFiles.removeAll()
        for search in artworkSearches.values { search.cancel() }
        artworkSearches.removeAll()
        players.removeAll()
    }

    // MARK: D-Bus calls → castd

    private func execute(_ action: MPRISAction, on deviceID: String, reply: BusReply) async {
        guard let client else {
            loop.post { reply.fail(BusError(name: "org.castd.Error.UNAVAILABLE", message: "castd is not reachable")) }
            return
        }
        let timeout = options.callTimeout
        do {
            switch action {
            case .play:
                _ = try await client.unary(CastdMethods.play, Self.mediaRequest(deviceID), timeout: timeout)
            case .pause:
                _ = try await client.unary(CastdMethods.pause, Self.mediaRequest(deviceID), timeout: timeout)
            case .stop:
                _ = try await client.unary(CastdMethods.stop, Self.mediaRequest(deviceID), timeout: timeout)
            case .next, .previous:
                var request = Castd_V1_QueueUpdateRequest()
                request.device = deviceID
                request.jump = action == .next ? 1 : -1
                _ = try await client.unary(CastdMethods.queueUpdate, request, timeout: timeout)
            case .seek(let seconds):
                var request = Castd_V1_SeekRequest()
                request.device = deviceID
                request.position = seconds
                _ = try await client.unary(CastdMethods.seek, request, timeout: timeout)
            case .load(let url):
                var request = Castd_V1_LoadRequest()
                request.device = deviceID
                request.media = CastdMediaInformation(url: url)
                _ = try await client.unary(CastdMethods.load, request, timeout: timeout)
            case .loadFile(let path):
                try await loadFile(path, on: deviceID, client: client)
            case .setRepeatMode(let mode):
                var request = Castd_V1_QueueUpdateRequest()
                request.device = deviceID
                request.repeatMode = mode
                _ = try await client.unary(CastdMethods.queueUpdate, request, timeout: timeout)
            case .setRate(let rate):
                var request = Castd_V1_SetPlaybackRateRequest()
                request.device = deviceID
                request.rate = rate
                _ = try await client.unary(CastdMethods.setPlaybackRate, request, timeout: timeout)
            case .setVolume(let level):
                var request = Castd_V1_SetVolumeRequest()
                request.device = deviceID
                request.level = level
                _ = try await client.unary(CastdMethods.setVolume, request, timeout: timeout)
            }
            loop.post { reply.succeed() }
        } catch let error as LocalFileError {
            logger.info("\(deviceID): \(action) failed: \(error)")
            loop.post { reply.fail(BusError(name: "org.castd.Error.CANNOT_OPEN", message: error.message)) }
        } catch let error as CastdError {
            logger.info("\(deviceID): \(action) failed: \(error)")
            loop.post { reply.fail(BusError(name: "org.castd.Error.\(error.code.name)", message: error.message)) }
        } catch {
            loop.post { reply.fail(.failed("\(error)")) }
        }
    }

    /// Casts a file (with the subtitles or cover beside it), or queues a folder's playable
    /// files, opened here with the user's permissions and handed to castd.
    private func loadFile(_ path: String, on deviceID: String, client: CastdClient) async throws {
        let sources = try LocalFiles.sources([path])
        let timeout = options.callTimeout
        try await LocalFiles.withHandles(LocalFiles.items(sources), socket: client.socketPath) { handles in
            let items = handles.map { $0.queueItem() }
            if items.count == 1 {
                var request = Castd_V1_LoadRequest()
                request.device = deviceID
                request.media = items[0].media
                request.activeTrackIds = items[0].activeTrackIds
                _ = try await client.unary(CastdMethods.load, request, timeout: timeout)
            } else {
                var request = Castd_V1_QueueLoadRequest()
                request.device = deviceID
                request.items = items
                _ = try await client.unary(CastdMethods.queueLoad, request, timeout: timeout)
            }
        }
    }

    private static func mediaRequest(_ deviceID: String) -> Castd_V1_MediaRequest {
        var request = Castd_V1_MediaRequest()
        request.device = deviceID
        return request
    }
}

/// The players on the bus, by device id. Its methods may be called from anywhere; the players
/// themselves are created, changed and closed on the loop's thread.
final class MPRISPlayerSet: @unchecked Sendable {
    private let loop: BusLoop
    private let logger: Logger
    /// Touched only on the loop's thread.
    private var players: [String: MPRISPlayer] = [:]
    private var perform: MPRISPlayer.Perform = { _, _, reply in reply.fail(.failed("not ready")) }

    init(loop: BusLoop, logger: Logger) {
        self.loop = loop
        self.logger = logger
    }

    func setPerform(_ perform: @escaping @Sendable (MPRISAction, String, BusReply) -> Void) {
        loop.post { self.perform = perform }
    }

    /// Shows `snapshot` as device `id`'s player, creating it; nil removes it.
    func set(_ id: String, _ snapshot: MPRISPlayerSnapshot?) {
        loop.post { self.apply(id, snapshot) }
    }

    func removeAll() {
        loop.post {
            for (id, _) in self.players { self.apply(id, nil) }
        }
    }

    private func apply(_ id: String, _ snapshot: MPRISPlayerSnapshot?) {
        guard let snapshot else {
            if let player = players.removeValue(forKey: id) {
                player.close()
                logger.info("\(player.busName): left the session bus (\(id) has no media session)")
            }
            return
        }
        if let player = players[id] {
            player.update(snapshot)
            return
        }
        do {
            players[id] = try MPRISPlayer(loop: loop, snapshot: snapshot, logger: logger) { [weak self] in
                self?.perform($0, $1, $2)
            }
        } catch {
            logger.error("\(MPRISBusName.name(forDeviceID: id)): cannot join the session bus: \(error)")
        }
    }
}
