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

/// castc's output: text on stdout (flushed per line when streaming), errors on stderr.
enum Terminal {
    /// Prints `text` and a newline on stdout.
    static func line(_ text: String) {
        print(text)
    }

    /// Prints a line and flushes it at once, for output that streams (`watch`), even into a pipe.
    /// Returns false once stdout is gone (the reader of a pipe exited): SIGPIPE does not end
    /// castc, because NIO ignores it for the whole process.
    @discardableResult
    static func streamLine(_ text: String) -> Bool {
        print(text)
        return flush()
    }

    @discardableResult
    static func flush() -> Bool {
        fflush(nil) == 0  // every output stream; naming `stdout` is not concurrency-safe in Swift 6
    }

    static func writeError(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Everything on standard input, until its end.
    static func readStandardInput() -> [UInt8] {
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return all }
            all += chunk[..<count]
        }
    }
}
