import Foundation

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
        FileHandle.standardError.write(Data(text.utf8))
    }
}
