#if canImport(Glibc)
    import Glibc
#endif

/// Whole small files through descriptors: reading one castd was handed, bounded, and holding
/// bytes castd made in a file of its own that no path names.
public enum FileBytes {
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case tooLarge(limit: Int)
        case system(Errno)

        public var description: String {
            switch self {
            case .tooLarge(let limit): "it is larger than \(limit / 1024) KiB"
            case .system(let errno): errno.description
            }
        }
    }

    /// The bytes of the open file `descriptor`, from its start (pread: its offset is not
    /// moved), at most `limit` of them: a longer file is refused, however it grows while read.
    public static func read(descriptor: Int32, limit: Int) throws(Failure) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(bytes.count)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system(.current)
            }
            if count == 0 { return bytes }
            guard bytes.count + count <= limit else { throw .tooLarge(limit: limit) }
            bytes += chunk[..<count]
        }
    }

    /// A new file holding `bytes`, open for reading and writing at offset 0, in the temporary
    /// directory ($TMPDIR, else /tmp) and unlinked at once: it goes when its descriptor closes.
    public static func unlinkedFile(holding bytes: [UInt8]) throws(Failure) -> Int32 {
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/castd-XXXXXX").utf8CString)
        // mkstemp, then close-on-exec (Glibc's module has no mkostemp): castd spawns only
        // through posix_spawn with the descriptors it passes (Spawn).
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw .system(.current) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        unlink(template.withUnsafeBufferPointer { $0.baseAddress! })
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let failure = Errno.current
                close(descriptor)
                throw .system(failure)
            }
            written += count
        }
        return descriptor
    }
}
