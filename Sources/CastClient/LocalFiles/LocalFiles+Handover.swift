import CastdAPI

#if canImport(Glibc)
    import Glibc
#endif

/// The handles castd gave for one item's files (`LocalItemFiles`).
public struct LocalItemHandles: Sendable, Equatable {
    public struct Subtitles: Sendable, Equatable {
        public var handle: String
        public var language: String
        public var name: String

        public init(handle: String, language: String, name: String) {
            self.handle = handle
            self.language = language
            self.name = name
        }
    }

    public var media: String?
    public var subtitles: [Subtitles] = []
    public var cover: String?

    public init(media: String? = nil, subtitles: [Subtitles] = [], cover: String? = nil) {
        self.media = media
        self.subtitles = subtitles
        self.cover = cover
    }

    /// Names the files in `media`: its own file, a text track for each subtitles file (ids after
    /// the tracks it has) and the cover as its image if it has none. The new tracks' ids.
    @discardableResult
    public func apply(to media: inout CastdMediaInformation) -> [Int64] {
        if let handle = self.media { media.file = handle }
        var next = (media.tracks.map(\.trackID).max() ?? 0) + 1
        var added: [Int64] = []
        for subtitles in self.subtitles {
            var track = CastdMediaTrack(
                subtitlesID: next, url: "", language: subtitles.language, name: subtitles.name, contentType: "text/vtt")
            track.file = subtitles.handle
            media.tracks.append(track)
            added.append(next)
            next += 1
        }
        if let cover, media.metadata.images.isEmpty {
            var image = CastdImage()
            image.file = cover
            media.metadata.images = [image]
        }
        return added
    }

    /// A queue item of `media` with these files named in it, its first subtitles shown.
    public func queueItem(_ media: CastdMediaInformation = CastdMediaInformation()) -> CastdQueueItem {
        var media = media
        let subtitles = apply(to: &media)
        var item = CastdQueueItem(media: media)
        item.activeTrackIds = Array(subtitles.prefix(1))
        return item
    }
}

extension LocalFiles {
    /// Opens the files of `items`, hands them to castd over one connection, and runs `body`
    /// with the handles of each item, the connection open until `body` returns (castd lets go
    /// of handles no call took when it closes). Files are opened and handed over a batch at a
    /// time, so that a queue of thousands needs few descriptors here. Past castd's bound on the
    /// handles one connection holds (`CastdFileHandover.maximumUntaken`), the items' own files
    /// go first, and the files beside them only while the bound allows.
    public static func withHandles<T>(
        _ items: [LocalItemFiles], socket: String?, _ body: ([LocalItemHandles]) async throws -> T
    ) async throws -> T {
        let items = withinBound(items)
        let paths = items.flatMap(\.paths)
        guard !paths.isEmpty else { return try await body(items.map { _ in LocalItemHandles() }) }
        // Connected once the first files are open: a file that cannot be opened is reported
        // before castd is asked anything.
        var handover: CastdFileHandover?
        var handles: [String] = []
        var start = 0
        while start < paths.count {
            var batch: [LocalFile] = []
            defer { for file in batch { close(file.descriptor) } }
            for path in paths[start..<min(start + CastdFileHandover.batch, paths.count)] {
                batch.append(try open(path))
            }
            let connection = try handover ?? CastdFileHandover.connect(socketPath: socket)
            handover = connection
            handles += try connection.handOver(batch.map { ($0.descriptor, $0.name) })
            start += batch.count
        }
        var next = handles[...]
        let result = try await body(
            items.map { item in
                LocalItemHandles(
                    media: item.media.flatMap { _ in next.popFirst() },
                    subtitles: item.subtitles.compactMap { subtitles in
                        next.popFirst().map {
                            LocalItemHandles.Subtitles(handle: $0, language: subtitles.language, name: subtitles.name)
                        }
                    },
                    cover: item.cover.flatMap { _ in next.popFirst() })
            })
        withExtendedLifetime(handover) {}
        return result
    }

    /// `items` with the files beside them left out where all would pass castd's bound.
    static func withinBound(_ items: [LocalItemFiles]) -> [LocalItemFiles] {
        var budget = CastdFileHandover.maximumUntaken - items.filter { $0.media != nil }.count
        return items.map { item in
            var item = item
            let beside = item.subtitles.count + (item.cover == nil ? 0 : 1)
            if beside > max(budget, 0) {
                item.subtitles = []
                item.cover = nil
            } else {
                budget -= beside
            }
            return item
        }
    }
}
