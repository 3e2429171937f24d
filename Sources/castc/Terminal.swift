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
///
/// Everything castc writes passes through ``visible(_:)``: names, titles and messages come from
/// devices, mDNS announcements and receiver apps, and must not drive the user's terminal.
enum Terminal {
    /// Prints `text` and a newline on stdout.
    static func line(_ text: String) {
        print(visible(text))
    }

    /// `text` with every control character but newline and tab written out as `\u001b`:
    /// C0 (escape, bell, carriage return, backspace…), DEL, and C1 (U+0080–U+009F, where some
    /// terminals read U+009B as the start of an escape sequence). The same spelling is a valid
    /// escape inside a JSON string, so `--json` output stays valid JSON.
    static func visible(_ text: String) -> String {
        func isControl(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x0A, 0x09: false
            case 0x00..<0x20, 0x7F..<0xA0: true
            default: false
            }
        }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                let hex = String(scalar.value, radix: 16)
                result.append(contentsOf: "\\u\(String(repeating: "0", count: 4 - hex.count))\(hex)".unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// Prints a line and flushes it at once, for output that streams (`watch`), even into a pipe.
    /// Returns false once stdout is gone (the reader of a pipe exited): SIGPIPE does not end
    /// castc, because NIO ignores it for the whole process.
    @discardableResult
    static func streamLine(_ text: String) -> Bool {
        print(visible(text))
        return flush()
    }

    @discardableResult
    static func flush() -> Bool {
        fflush(nil) == 0  // every output stream; naming `stdout` is not concurrency-safe in Swift 6
    }

    static func writeError(_ text: String) {
        var bytes = Array(visible(text).utf8)[...]
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
