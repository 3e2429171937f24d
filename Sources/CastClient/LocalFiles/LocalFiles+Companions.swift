import CastdAPI

/// A subtitles file to offer with a video: its path and language (BCP-47, or "").
public struct LocalSubtitles: Sendable, Equatable {
    public var path: String
    public var language: String
    /// The track's name on the device; "" lets castd take the file's name.
    public var name: String

    public init(path: String, language: String = "", name: String = "") {
        self.path = path
        self.language = language
        self.name = name
    }
}

/// The local files of one item of a load or a queue: its own (nil for a URL) and those it is
/// offered with: subtitles, and a cover image.
public struct LocalItemFiles: Sendable, Equatable {
    public var media: String?
    public var subtitles: [LocalSubtitles]
    public var cover: String?

    public init(media: String?, subtitles: [LocalSubtitles] = [], cover: String? = nil) {
        self.media = media
        self.subtitles = subtitles
        self.cover = cover
    }

    var paths: [String] { (media.map { [$0] } ?? []) + subtitles.map(\.path) + (cover.map { [$0] } ?? []) }
}

extension LocalFiles {
    /// Subtitles files offered beside a video: at most this many.
    public static let maximumSidecars = 16
    /// Cover images beside an audio file, in the order they are preferred (any case).
    public static let coverNames = [
        "cover.jpg", "cover.jpeg", "cover.png", "folder.jpg", "folder.jpeg", "folder.png",
        "front.jpg", "front.jpeg", "front.png",
    ]

    /// The items for `sources`, each local file with the files beside it: for a video, the
    /// subtitles named like it (`movie.srt`, `movie.en.vtt`, `movie.pt-BR.srt`); for an audio
    /// file, `cover.jpg`, `folder.jpg` or `front.png` in its folder. A folder that cannot be
    /// listed offers nothing beside.
    public static func items(_ sources: [MediaSource], companions: Bool = true) -> [LocalItemFiles] {
        var listings: [String: [String]] = [:]
        return sources.map { source in
            guard case .file(let path) = source else { return LocalItemFiles(media: nil) }
            guard companions, let ext = fileExtension(name(of: path)) else { return LocalItemFiles(media: path) }
            let folder = folder(of: path)
            let names = listings[folder] ?? (try? Self.names(in: folder)) ?? []
            listings[folder] = names
            var item = LocalItemFiles(media: path)
            let prefix = folder == "." && !path.hasPrefix("./") ? "" : folder == "/" ? "/" : folder + "/"
            if videoExtensions.contains(ext) {
                item.subtitles = sidecarSubtitles(for: name(of: path), among: names).map {
                    LocalSubtitles(path: prefix + $0.path, language: $0.language, name: $0.name)
                }
            } else if audioExtensions.contains(ext) {
                item.cover = cover(among: names).map { prefix + $0 }
            }
            return item
        }
    }

    /// The subtitles among `names` that go with the video `video`: STEM.srt or STEM.vtt first,
    /// then STEM.LABEL.srt|vtt in natural order, where LABEL's last part is the language when it
    /// looks like one (en, fra, pt-BR) and the label is the track's name.
    static func sidecarSubtitles(for video: String, among names: [String]) -> [LocalSubtitles] {
        guard let dot = video.lastIndex(of: "."), dot != video.startIndex else { return [] }
        let stem = video[..<dot].lowercased()
        var plain: [LocalSubtitles] = []
        var labelled: [LocalSubtitles] = []
        for name in names {
            guard let ext = fileExtension(name), ext == "srt" || ext == "vtt" else { continue }
            let base = name.dropLast(ext.count + 1)
            guard base.lowercased().hasPrefix(stem) else { continue }
            let rest = base.dropFirst(stem.count)
            if rest.isEmpty {
                plain.append(LocalSubtitles(path: name))
            } else if rest.first == "." {
                let label = String(rest.dropFirst())
                let last = label.split(separator: ".").last.map(String.init) ?? label
                labelled.append(LocalSubtitles(path: name, language: isLanguageTag(last) ? last : "", name: label))
            }
        }
        plain.sort { naturalOrder($0.path, $1.path) }
        labelled.sort { naturalOrder($0.path, $1.path) }
        return Array((plain + labelled).prefix(maximumSidecars))
    }

    /// en, fra, pt-BR, zh-Hant: 2 or 3 lowercase letters (as files are named: SDH is a label),
    /// then subtags of 2 to 8 letters or digits.
    static func isLanguageTag(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard let primary = parts.first, (2...3).contains(primary.count),
            primary.allSatisfy({ $0.isASCII && $0.isLowercase })
        else { return false }
        return parts.dropFirst().allSatisfy { part in
            (2...8).contains(part.count) && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }
    }

    /// The cover image among a folder's `names`, by `coverNames`' order.
    static func cover(among names: [String]) -> String? {
        let byLowercased = Dictionary(names.map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        return coverNames.lazy.compactMap { byLowercased[$0] }.first
    }
}
