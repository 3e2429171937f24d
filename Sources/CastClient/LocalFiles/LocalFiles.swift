import CastdSupport
#if canImport(Glibc)
    import Glibc
#endif

/// A file on this machine that a client casts: opened here, with the caller's permissions, and
/// handed to castd as an open descriptor (castd never opens a path: `CastdFileHandover`).
public struct LocalFile: Sendable {
    /// The path as given, for messages.
    public var path: String
    public var descriptor: Int32
    /// The last path component: castd's name for it (content type, title).
    public var name: String
}

/// Why a local file cannot be cast, in words that name the path: it does not exist, cannot be
/// read, is not a file, or a folder holds nothing playable. castc exits 66 (EX_NOINPUT) with it.
public struct LocalFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Files and folders on this machine as media: which arguments name them, opening them, the
/// playable files of a folder in natural order, the files beside them (subtitles, a cover) and
/// handing them all to castd (`LocalFiles+Handover.swift`).
public enum LocalFiles {
    /// Whether `text` names a file on this machine rather than a URL for the device: a
    /// file:// URL, or anything without a URL's scheme (`movie.mp4`, `./a/b.mkv`, `/srv/x.mp3`).
    public static func isLocal(_ text: String) -> Bool {
        if text.lowercased().hasPrefix("file:") { return true }
        // A scheme: a letter, then letters, digits, +, - or ., then a colon (RFC 3986).
        guard let colon = text.firstIndex(of: ":"), let first = text.first, first.isASCII, first.isLetter else {
            return true
        }
        return !text[..<colon].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }

    /// The path a local argument names: a file:// URL's path, percent-decoded, or the text.
    public static func path(_ text: String) throws(LocalFileError) -> String {
        guard text.lowercased().hasPrefix("file:") else { return text }
        var rest = Substring(text.dropFirst("file:".count))
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            // file://HOST/path: only this machine's files.
            let host = rest.prefix { $0 != "/" }
            guard host.isEmpty || host == "localhost" else {
                throw LocalFileError("\(text) names a file on \(host); only files on this machine can be cast")
            }
            rest = rest.dropFirst(host.count)
        }
        guard let decoded = percentDecoded(rest), !decoded.isEmpty else {
            throw LocalFileError("\(text) is not a file URL that can be read")
        }
        return decoded
    }

    /// Opens the file `text` names for reading; why not, in a line naming the path.
    public static func open(_ text: String) throws(LocalFileError) -> LocalFile {
        let path = try path(text)
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            var line = "cannot open \(path): \(reason)"
            if errno == ENOENT, !text.hasPrefix("/"), !text.hasPrefix("."), text.contains("/") {
                line += " (a URL needs its scheme: https://\(text))"
            }
            throw LocalFileError(line)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            let what = info.st_mode & S_IFMT == S_IFDIR ? "a folder (castc queue load FOLDER plays one)" : "not a file"
            throw LocalFileError("cannot cast \(path): it is \(what)")
        }
        // Opened without blocking (a FIFO would have waited for a writer); reads may block.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return LocalFile(path: path, descriptor: fd, name: name(of: path))
    }

    /// The last component of `path`.
    static func name(of path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// The folder `path` is in ("." for a bare name).
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first < utf8.endIndex, utf8.index(after: first) < utf8.endIndex,
                    let high = HexDigit.value(utf8[first]), let low = HexDigit.value(utf8[utf8.index(after: first)])
                else { return nil }
                bytes.append(high << 4 | low)
                index = utf8.index(first, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// What an item of a load or a queue plays: a URL the device fetches, or a file here that castd
/// serves.
public enum MediaSource: Equatable, Sendable {
    case url(String)
    case file(String)
}

extension LocalFiles {
    /// File extensions queued from a folder: what Cast devices play (or castd may serve).
    public static let playableExtensions: Set<String> = audioExtensions.union(videoExtensions)
    /// Audio files: a cover image beside one becomes its image.
    public static let audioExtensions: Set<String> = ["mp3", "m4a", "aac", "ogg", "oga", "opus", "flac", "wav"]
    /// Video files: subtitles beside one become its text tracks.
    public static let videoExtensions: Set<String> = ["mp4", "m4v", "mov", "webm", "mkv"]

    /// The lowercased extension of `name`, if it has one.
    static func fileExtension(_ name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return name[name.index(after: dot)...].lowercased()
    }

    /// The arguments as media sources, each folder replaced by the playable files in it (not in
    /// folders below it), in natural order: track 2 before track 10.
    public static func sources(_ arguments: [String]) throws(LocalFileError) -> [MediaSource] {
        var sources: [MediaSource] = []
        for argument in arguments {
            guard isLocal(argument) else {
                sources.append(.url(argument))
                continue
            }
            let path = try path(argument)
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                let files = try playableFiles(in: path)
                sources += files.map { .file(path.hasSuffix("/") ? path + $0 : path + "/" + $0) }
            } else {
                sources.append(.file(path))
            }
        }
        return sources
    }

    /// How many items `arguments` make, for checking per-item options before anything is
    /// opened; a folder that cannot be read counts as one (running says why).
    public static func itemCount(_ arguments: [String]) -> Int {
        (try? sources(arguments).count) ?? arguments.count
    }

    /// The names in `folder` (not hidden ones), unsorted.
    static func names(in folder: String) throws(LocalFileError) -> [String] {
        guard let directory = opendir(folder) else {
            throw LocalFileError("cannot read the folder \(folder): \(String(cString: strerror(errno)))")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names
    }

    public static func playableFiles(in folder: String) throws(LocalFileError) -> [String] {
        let names = try names(in: folder).filter { fileExtension($0).map(playableExtensions.contains) == true }
        guard !names.isEmpty else {
            throw LocalFileError(
                "the folder \(folder) holds nothing castc can play (files ending in \(playableExtensions.sorted().joined(separator: ", ")))"
            )
        }
        return names.sorted(by: naturalOrder)
    }

    /// "Track 2" before "Track 10": runs of digits compare as numbers, the rest without case.
    public static func naturalOrder(_ a: String, _ b: String) -> Bool {
        let left = chunks(a)
        let right = chunks(b)
        for (x, y) in zip(left, right) {
            if let m = UInt64(x), let n = UInt64(y) {
                if m != n { return m < n }
                continue
            }
            let (lx, ly) = (x.lowercased(), y.lowercased())
            if lx != ly { return lx < ly }
        }
        // Alike but for case or leading zeros: by length, then as written.
        return left.count != right.count ? left.count < right.count : a < b
    }

    private static func chunks(_ text: String) -> [String] {
        var chunks: [String] = []
        var current = ""
        var inDigits = false
        for character in text {
            let digit = character.isASCII && character.isNumber
            if !current.isEmpty, digit != inDigits {
                chunks.append(current)
                current = ""
            }
            inDigits = digit
            current.append(character)
        }
        if !current.isEmpty { chunks.append(current) }
        return chunks
    }
}
