import ArgumentParser
import CastArtwork
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where `castc artwork` puts the image it got: a file, replaced in one step (a status bar
/// reading it meanwhile sees the old image or the new one, never half of one), or stdout.
enum ArtworkOutput {
    /// Copies the cached image to `path` by way of a temporary file beside it.
    static func save(_ file: ArtworkFile, to path: String) throws {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]).isEmpty ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = "\(directory)/.\(name).castc-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw cannotWrite(path, errorText()) }
        var failure: String?
        do throws(CopyError) {
            try copy(file, to: descriptor)
        } catch {
            failure = error.line
        }
        if close(descriptor) != 0 && failure == nil { failure = errorText() }
        if failure == nil && rename(temporary, path) != 0 { failure = errorText() }
        if let failure {
            unlink(temporary)
            throw cannotWrite(path, failure)
        }
    }

    /// Refuses to write an image's bytes to a terminal.
    static func checkStandardOutput() throws {
        guard isatty(1) == 0 else {
            throw ValidationError("--output - writes an image, not text: redirect it to a file or a program")
        }
    }

    /// Writes the image's bytes to standard output.
    static func writeStandardOutput(from file: ArtworkFile) throws {
        do throws(CopyError) {
            try copy(file, to: 1)
        } catch {
            throw CastcExit(
                line: "castc: artwork: cannot write the image to standard output: \(error.line)\n", code: 73)
        }
    }

    /// `{"bytes":123,"format":"png","path":"/home/…/….png","url":"https://…"}`
    static func json(_ file: ArtworkFile, url: String) -> String {
        struct Output: Encodable {
            var path: String
            var format: String
            var bytes: Int
            var url: String
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let output = Output(path: file.path, format: file.format.rawValue, bytes: file.byteCount, url: url)
        return (try? encoder.encode(output)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    private struct CopyError: Error {
        var line: String
    }

    private static func copy(_ file: ArtworkFile, to output: Int32) throws(CopyError) {
        let input = open(file.path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw CopyError(line: "cannot read \(file.path): \(errorText())") }
        defer { close(input) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw CopyError(line: "cannot read \(file.path): \(errorText())") }
            if count == 0 { return }
            var written = 0
            while written < count {
                let done = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count - written) }
                if done < 0 && errno == EINTR { continue }
                guard done > 0 else { throw CopyError(line: errorText()) }
                written += done
            }
        }
    }

    private static func cannotWrite(_ path: String, _ reason: String) -> CastcExit {
        CastcExit(line: "castc: artwork: cannot write \(path): \(reason)\n", code: 73)
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}
