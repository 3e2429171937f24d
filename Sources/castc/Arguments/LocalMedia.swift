import CastClient

#if canImport(Glibc)
    import Glibc
#endif

/// A file on this machine that castc casts: opened here, with the caller's permissions, and
/// handed to castd as an open descriptor (castd never opens a path: `CastdFileHandover`).
struct LocalFile {
    /// The path as given, for messages.
    var path: String
    var descriptor: Int32
    /// The last path component: castd's name for it (content type, title).
    var name: String
}

enum LocalMedia {
    /// castc's exit status when a local file cannot be cast: it does not exist, cannot be read
    /// or is not a file (sysexits' EX_NOINPUT).
    static let exitNoInput: Int32 = 66

    /// Whether `text` names a file on this machine rather than a URL for the device: a
    /// file:// URL, or anything without a URL's scheme (`movie.mp4`, `./a/b.mkv`, `/srv/x.mp3`).
    static func isLocal(_ text: String) -> Bool {
        if text.lowercased().hasPrefix("file:") { return true }
        // A scheme: a letter, then letters, digits, +, - or ., then a colon (RFC 3986).
        guard let colon = text.firstIndex(of: ":"), let first = text.first, first.isASCII, first.isLetter else {
            return true
        }
        return !text[..<colon].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }

    /// The path a local argument names: a file:// URL's path, percent-decoded, or the text.
    static func path(_ text: String) throws(CastcExit) -> String {
        guard text.lowercased().hasPrefix("file:") else { return text }
        var rest = Substring(text.dropFirst("file:".count))
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            // file://HOST/path: only this machine's files.
            let host = rest.prefix { $0 != "/" }
            guard host.isEmpty || host == "localhost" else {
                throw CastcExit(
                    line: "castc: \(text) names a file on \(host); castc casts files on this machine only",
                    code: exitNoInput)
            }
            rest = rest.dropFirst(host.count)
        }
        guard let decoded = percentDecoded(rest), !decoded.isEmpty else {
            throw CastcExit(line: "castc: \(text) is not a file URL castc can read", code: exitNoInput)
        }
        return decoded
    }

    /// Opens the file `text` names for reading; why not, in a line naming the path.
    static func open(_ text: String) throws(CastcExit) -> LocalFile {
        let path = try path(text)
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            var line = "castc: cannot open \(path): \(reason)"
            if errno == ENOENT, !text.hasPrefix("/"), !text.hasPrefix("."), text.contains("/") {
                line += " (a URL needs its scheme: https://\(text))"
            }
            throw CastcExit(line: line, code: exitNoInput)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            let what = info.st_mode & S_IFMT == S_IFDIR ? "a folder (castc queue load FOLDER plays one)" : "not a file"
            throw CastcExit(line: "castc: cannot cast \(path): it is \(what)", code: exitNoInput)
        }
        // Opened without blocking (a FIFO would have waited for a writer); reads may block.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return LocalFile(path: path, descriptor: fd, name: name)
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
                    let high = hexValue(utf8[first]), let low = hexValue(utf8[utf8.index(after: first)])
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

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// What an item of `castc load` or `castc queue load|add` plays: a URL the device fetches, or a
/// file here that castd serves.
enum MediaSource: Equatable {
    case url(String)
    case file(String)
}

extension LocalMedia {
    /// File extensions castc queues from a folder: what Cast devices play (or castd may serve).
    static let playableExtensions: Set<String> = [
        "mp4", "m4v", "mov", "webm", "mkv", "mp3", "m4a", "aac", "ogg", "oga", "opus", "flac", "wav",
    ]

    /// The arguments as media sources, each folder replaced by the playable files in it (not in
    /// folders below it), in natural order: track 2 before track 10.
    static func sources(_ arguments: [String]) throws(CastcExit) -> [MediaSource] {
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
    /// opened; a folder castc cannot read counts as one (running says why).
    static func itemCount(_ arguments: [String]) -> Int {
        (try? sources(arguments).count) ?? arguments.count
    }

    static func playableFiles(in folder: String) throws(CastcExit) -> [String] {
        guard let directory = opendir(folder) else {
            throw CastcExit(
                line: "castc: cannot read the folder \(folder): \(String(cString: strerror(errno)))", code: exitNoInput)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard !name.hasPrefix("."), let dot = name.lastIndex(of: "."),
                playableExtensions.contains(name[name.index(after: dot)...].lowercased())
            else { continue }
            names.append(name)
        }
        guard !names.isEmpty else {
            throw CastcExit(
                line:
                    "castc: the folder \(folder) holds nothing castc can play (files ending in \(playableExtensions.sorted().joined(separator: ", ")))",
                code: exitNoInput)
        }
        return names.sorted(by: naturalOrder)
    }

    /// "Track 2" before "Track 10": runs of digits compare as numbers, the rest without case.
    static func naturalOrder(_ a: String, _ b: String) -> Bool {
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

    /// Opens the files among `sources`, hands them to castd over one connection, and runs
    /// `body` with a handle for each file (nil for a URL), the connection open until `body`
    /// returns (castd lets go of handles no call took when it closes). Files are opened and
    /// handed over a batch at a time, so that a queue of thousands needs few descriptors here.
    static func withHandles<T>(
        _ sources: [MediaSource], socket: String?, _ body: ([String?]) async throws -> T
    ) async throws -> T {
        let paths = sources.compactMap { source -> String? in
            if case .file(let path) = source { return path }
            return nil
        }
        guard !paths.isEmpty else { return try await body(sources.map { _ in nil }) }
        // Connected once the first files are open: a file castc cannot open is reported before
        // castd is asked anything.
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
            sources.map { source in
                guard case .file = source else { return nil }
                return next.popFirst()
            })
        withExtendedLifetime(handover) {}
        return result
    }
}
