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
        return CastdValidation.urlProblem(text) == .notAbsolute
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
