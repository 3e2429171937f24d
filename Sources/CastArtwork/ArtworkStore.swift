#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The artwork cache on disk: one directory, one file per image named by the SHA-256 of its URL
/// and its format (`<64 hex digits>.png`), shared by every castd client of the user (castc,
/// cast-mpris), each of which may store and evict at any time. So nothing here is kept in
/// memory: the directory is the state, and every operation tolerates another process's.
///
/// - A file appears whole or not at all: it is written under a temporary name in the same
///   directory (`.tmp-<pid>-<random>`) and renamed.
/// - Recency is the file's modification time, set from the precise clock (file systems stamp
///   files with a coarse one, a tick of several milliseconds) when a file is stored or served.
/// - Plain POSIX calls: no Foundation, which castc does not link.
struct ArtworkStore: Sendable {
    let directory: String

    /// Temporary files older than this are a crashed writer's whatever their pid says (a pid
    /// from another PID namespace, or reused).
    static let staleTemporaryAge: Int = 600

    /// `$XDG_CACHE_HOME/castd/artwork`, else `$HOME/.cache/castd/artwork`; nil without either
    /// (the XDG base directory specification ignores a relative XDG_CACHE_HOME).
    static func defaultDirectory(environment: [String: String]) -> String? {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/castd/artwork" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.cache/castd/artwork" }
        return nil
    }

    /// Opens the directory, making it (and its missing parents) with mode 0700.
    init(directory: String) throws(ArtworkError) {
        let path = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        guard path.hasPrefix("/") else { throw .cache(path: directory, reason: "the path is not absolute") }
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw .cache(path: path, reason: "cannot make \(prefix): \(Self.errorText())")
            }
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw .cache(path: path, reason: Self.errorText()) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .cache(path: path, reason: "it is not a directory") }
        guard info.st_uid == geteuid() else { throw .cache(path: path, reason: "it belongs to another user") }
        if info.st_mode & 0o077 != 0 { _ = chmod(path, 0o700) }
        self.directory = path
    }

    func path(key: String, format: ArtworkFormat) -> String { "\(directory)/\(key).\(format.fileExtension)" }

    /// The stored image for `key`, made the most recently used; nil if there is none.
    func lookup(key: String) -> ArtworkFile? {
        for format in ArtworkFormat.allCases {
            let path = path(key: key, format: format)
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            guard info.st_size > 0 else {
                unlink(path)  // not written by this code; never served
                continue
            }
            Self.touch(path: path)
            return ArtworkFile(path: path, byteCount: Int(info.st_size), format: format)
        }
        return nil
    }

    /// Writes `bytes` as the image for `key`, replacing any other format stored for it.
    func store(_ bytes: [UInt8], format: ArtworkFormat, key: String) throws(ArtworkError) -> ArtworkFile {
        let final = path(key: key, format: format)
        let temporary =
            "\(directory)/\(Self.temporaryPrefix)\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else {
            throw .cache(path: directory, reason: "cannot create a file: \(Self.errorText())")
        }
        var failure: String?
        var written = 0
        bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else {
                    failure = "cannot write: \(Self.errorText())"
                    return
                }
                written += count
            }
        }
        if failure == nil {
            var times = [Self.now(), Self.now()]
            _ = futimens(descriptor, &times)
        }
        if close(descriptor) != 0 && failure == nil { failure = "cannot write: \(Self.errorText())" }
        if failure == nil && rename(temporary, final) != 0 { failure = "cannot rename: \(Self.errorText())" }
        if let failure {
            unlink(temporary)
            throw .cache(path: directory, reason: failure)
        }
        for other in ArtworkFormat.allCases where other != format { unlink(path(key: key, format: other)) }
        return ArtworkFile(path: final, byteCount: bytes.count, format: format)
    }

    struct Entry {
        var name: String
        var size: Int
        /// Seconds and nanoseconds: compared as a pair.
        var modified: (Int, Int)
    }

    /// The names in the directory, as they are now.
    func names() -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            names.append(
                withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
        }
        return names
    }

    /// The regular files among `names`, with their sizes and modification times.
    func entries(_ names: [String]) -> [Entry] {
        names.compactMap { name in
            var info = stat()
            guard lstat("\(directory)/\(name)", &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            return Entry(
                name: name, size: Int(info.st_size), modified: (Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)))
        }
    }

    static let temporaryPrefix = ".tmp-"

    /// Removes the least recently used images until they take at most `bound` bytes, never
    /// `keeping` (the image just stored, even when it alone is over the bound).
    /// - Returns: How many files and bytes went.
    @discardableResult
    func evict(toFit bound: Int, keeping: String? = nil) -> (files: Int, bytes: Int) {
        let images = entries(names().filter(Self.isImageName)).sorted {
            ($0.modified.0, $0.modified.1, $0.name) < ($1.modified.0, $1.modified.1, $1.name)
        }
        var total = images.reduce(0) { $0 + $1.size }
        var removed = (files: 0, bytes: 0)
        for image in images where total > bound {
            let path = "\(directory)/\(image.name)"
            guard path != keeping else { continue }
            // Another process may have removed it first; it is gone either way.
            if unlink(path) == 0 { removed = (removed.files + 1, removed.bytes + image.size) }
            total -= image.size
        }
        return removed
    }

    /// Removes temporary files their writer left: a process that no longer runs, or a file
    /// older than ``staleTemporaryAge``.
    /// - Returns: How many went.
    @discardableResult
    func removeStaleTemporaries() -> Int {
        let now = Self.now().tv_sec
        var removed = 0
        for temporary in entries(names().filter { $0.hasPrefix(Self.temporaryPrefix) }) {
            let pidText = temporary.name.dropFirst(Self.temporaryPrefix.count).prefix { $0 != "-" }
            let writerGone = Int32(pidText).map { kill($0, 0) != 0 && errno == ESRCH } ?? true
            guard writerGone || now - temporary.modified.0 > Self.staleTemporaryAge else { continue }
            if unlink("\(directory)/\(temporary.name)") == 0 { removed += 1 }
        }
        return removed
    }

    /// `<64 lowercase hex digits>.<a format's extension>`
    static func isImageName(_ name: String) -> Bool {
        guard let dot = name.firstIndex(of: "."), name.distance(from: name.startIndex, to: dot) == 64 else {
            return false
        }
        let hex = name[..<dot].utf8.allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
        }
        return hex && ArtworkFormat(fileExtension: name[name.index(after: dot)...]) != nil
    }

    /// Marks `path` as used now.
    static func touch(path: String) {
        var times = [now(), now()]
        _ = utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
    }

    static func now() -> timespec {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return time
    }

    static func errorText() -> String { String(cString: strerror(errno)) }
}
