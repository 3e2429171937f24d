import CastdAPI
import CastdSupport
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The images of what plays, as local files: fetched once, then served from disk, for every
/// castd client of the user (castc, cast-mpris) through one directory.
///
/// ```swift
/// let cache = try ArtworkCache(logger: logger)
/// let file = try await cache.file(for: status.media, hint: .thumbnail)
/// metadata["mpris:artUrl"] = file.fileURL
/// ```
///
/// - The directory is `$XDG_CACHE_HOME/castd/artwork` (else `$HOME/.cache/castd/artwork`), made
///   with mode 0700; files are named by the SHA-256 of their URL, with their format's extension.
/// - A request whose image is on disk is answered from disk (``cachedFile(for:)``), and that
///   makes it the most recently used. Other requests fetch (``ArtworkFetcher``: at most 10 MiB,
///   10 s, 5 redirects, images only), store, and then evict the least recently used images of
///   the whole directory, whoever stored them, until they take at most ``maximumTotalBytes``.
/// - Requests for a URL already being fetched wait for that fetch; a failed fetch is not
///   remembered (the next request tries again), and leaves no file.
/// - A caller's cancellation does not end a fetch others may be waiting for; a fetch whose every
///   caller was cancelled is cancelled too (its connection closed: a player whose media changed
///   stops fetching the old artwork). Every fetch ends by its timeout.
///
/// To time a cache hit (a benchmark's "artwork from the cache"), fetch once, then time
/// ``cachedFile(for:)``, which is what ``file(for:)`` does first, or `file(for:)` itself:
///
/// ```swift
/// let cache = try ArtworkCache(directory: directory)
/// _ = try await cache.file(for: url)  // the fetch
/// let clock = ContinuousClock()
/// let elapsed = clock.measure { for _ in 0..<1000 { _ = cache.cachedFile(for: url) } }
/// ```
public actor ArtworkCache {
    /// The cache's directory (absolute).
    public nonisolated let directory: String
    /// What the images may take together.
    public nonisolated let maximumTotalBytes: Int
    /// How images are fetched; its `maximumBytes` is at most ``maximumTotalBytes``.
    public nonisolated let fetcher: ArtworkFetcher
    private nonisolated let store: ArtworkStore
    private nonisolated let logger: Logger

    /// Fetches under way, by key: each with how many requests wait for it, and its number.
    private var fetches: [String: Fetch] = [:]
    private var fetchCount: UInt64 = 0

    private struct Fetch {
        var task: Task<Result<ArtworkFile, ArtworkError>, Never>
        var waiters: Int
        var number: UInt64
    }

    /// Opens (or makes) the cache, and removes what crashed writers left in it.
    ///
    /// - Parameters:
    ///   - directory: nil: `$XDG_CACHE_HOME/castd/artwork`, else `$HOME/.cache/castd/artwork`.
    ///   - maximumTotalBytes: The bound on all images together: 64 MiB unless given.
    ///   - fetcher: Its limits and event loops; its image limit is lowered to the total bound.
    ///   - logger: Fetches and stores at info (a URL with a query string is logged without it);
    ///     hits and evictions at debug. Nothing by default.
    public init(
        directory: String? = nil,
        maximumTotalBytes: Int = 64 << 20,
        fetcher: ArtworkFetcher = ArtworkFetcher(),
        logger: Logger = Logger(label: "castd.artwork", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(ArtworkError) {
        guard let path = directory ?? ArtworkStore.defaultDirectory(environment: Self.environment) else {
            throw .cache(path: "~/.cache/castd/artwork", reason: "neither XDG_CACHE_HOME nor HOME is set")
        }
        store = try ArtworkStore(directory: path)
        self.directory = store.directory
        self.maximumTotalBytes = maximumTotalBytes
        var fetcher = fetcher
        fetcher.maximumBytes = min(fetcher.maximumBytes, maximumTotalBytes)
        self.fetcher = fetcher
        self.logger = logger
        let stale = store.removeStaleTemporaries()
        if stale > 0 { logger.debug("removed temporary files a crashed writer left", metadata: ["count": "\(stale)"]) }
    }

    /// The image at `url` as a local file: from disk if it is there, else fetched and stored.
    public func file(for url: String) async throws(ArtworkError) -> ArtworkFile {
        let key = SHA256.hex(url)
        if let file = cachedFile(key: key) { return file }
        let fetch: Fetch
        if var joined = fetches[key] {
            joined.waiters += 1
            fetches[key] = joined
            fetch = joined
        } else {
            fetchCount += 1
            let number = fetchCount
            fetch = Fetch(
                task: Task { await self.fetchAndStore(url, key: key, number: number) }, waiters: 1, number: number)
            fetches[key] = fetch
        }
        let result = await withTaskCancellationHandler {
            await fetch.task.value
        } onCancel: {
            Task { await self.leave(key, number: fetch.number) }
        }
        return try result.get()
    }

    /// A caller of fetch `number` was cancelled: once none waits for it, it is cancelled too,
    /// and the next request for its URL starts a fetch of its own.
    private func leave(_ key: String, number: UInt64) {
        guard var fetch = fetches[key], fetch.number == number else { return }  // over, or another fetch now
        fetch.waiters -= 1
        if fetch.waiters > 0 {
            fetches[key] = fetch
        } else {
            fetches[key] = nil
            fetch.task.cancel()
        }
    }

    /// The image at `url` if it is on disk, made the most recently used; never fetches. Callable
    /// from any thread: it reads the directory only.
    public nonisolated func cachedFile(for url: String) -> ArtworkFile? {
        cachedFile(key: SHA256.hex(url))
    }

    private nonisolated func cachedFile(key: String) -> ArtworkFile? {
        let file = store.lookup(key: key)
        if let file { logger.debug("artwork from the cache", metadata: ["file": "\(file.path)"]) }
        return file
    }

    /// The image ``ArtworkPicker`` picks among the media's for `hint`, as a local file.
    /// - Throws: ``ArtworkError/noImage`` if the media has no image with a URL.
    public func file(for media: CastdMediaInformation, hint: ArtworkHint = .thumbnail) async throws(ArtworkError)
        -> ArtworkFile
    {
        guard let image = ArtworkPicker.pick(media.metadata.images, hint: hint) else { throw .noImage }
        return try await file(for: image.url)
    }

    /// How many requests wait for the fetch of `url` (0: none under way), for tests.
    func waiters(for url: String) -> Int { fetches[SHA256.hex(url)]?.waiters ?? 0 }

    private func fetchAndStore(_ url: String, key: String, number: UInt64) async -> Result<ArtworkFile, ArtworkError> {
        defer { if fetches[key]?.number == number { fetches[key] = nil } }
        let shown = ArtworkURL.redacted(url)
        do throws(ArtworkError) {
            let download = try await fetcher.fetch(url)
            let (store, bound) = (self.store, maximumTotalBytes)
            // Writing up to 10 MiB and reading the directory block: on a thread of their own,
            // not one of the cooperative pool's.
            let stored = await onThread { () -> Result<(ArtworkFile, (files: Int, bytes: Int)), ArtworkError> in
                do throws(ArtworkError) {
                    let file = try store.store(download.bytes, format: download.format, key: key)
                    return .success((file, store.evict(toFit: bound, keeping: file.path)))
                } catch {
                    return .failure(error)
                }
            }
            let (file, evicted) = try stored.get()
            logger.info(
                "fetched artwork",
                metadata: [
                    "url": "\(shown)", "bytes": "\(file.byteCount)", "format": "\(file.format.rawValue)",
                    "redirects": "\(download.redirects)",
                ])
            if evicted.files > 0 {
                logger.debug(
                    "evicted the least recently used artwork",
                    metadata: ["files": "\(evicted.files)", "bytes": "\(evicted.bytes)"])
            }
            return .success(file)
        } catch {
            logger.info("cannot fetch artwork", metadata: ["url": "\(shown)", "error": "\(error)"])
            return .failure(error)
        }
    }

    /// The two variables the default directory depends on, read without Foundation.
    private static var environment: [String: String] {
        var environment: [String: String] = [:]
        for name in ["XDG_CACHE_HOME", "HOME"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return environment
    }
}
