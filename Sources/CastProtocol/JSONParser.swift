/// Reads JSON text (RFC 8259) straight into a ``JSONValue``, in one pass over the UTF-8 bytes.
///
/// castd reads every message a device sends, the media status of every request among them, so
/// this is on its hottest path, where Foundation's JSONDecoder driven through `Decodable` (each
/// value tried as every type in turn, each failed try building an error) is too slow to keep up
/// with a busy device (figures: BENCHMARKS.md).
///
/// What it accepts is what JSONDecoder accepted: any value at the top level, surrounded by
/// whitespace; a comma after the last member of an array or object; no comments, NaN or
/// Infinity; numbers that fit a finite Double;
/// strings of valid UTF-8 with no unescaped control characters and no lone surrogates. A key
/// given twice keeps its first value.
///
/// At most ``maximumDepth`` arrays and objects deep, where JSONDecoder allowed 512: this parser
/// recurses once a level, and so does every walk of the value after it (printing, comparing,
/// freeing). At 512 levels a sanitized build needed over 1 MiB of stack, and a thread's stack
/// is the system's to choose (glibc gives 2 MiB where `ulimit -s` is unlimited): a hostile
/// device's message could crash the process. No Cast message comes near: those captured from
/// real devices nest 9 deep.
struct JSONParser {
    static let maximumDepth = 64

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes)
        // A UTF-8 byte order mark, which JSONDecoder skipped too.
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { parser.index = 3 }
        parser.skipWhitespace()
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("unexpected text after the JSON value") }
        return value
    }

    private func failure(_ what: String) -> Failure {
        Failure(description: "\(what) at byte \(index)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func value() throws(Failure) -> JSONValue {
        guard index < bytes.count else { throw failure("the text ends where a value should be") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try number())
        default:
            throw failure("unexpected character '\(Unicode.Scalar(bytes[index]))'")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("the text ends inside '\(word)'") }
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: count)
        for offset in 0..<count where bytes[index + offset] != expected[offset] {
            throw failure("expected '\(word)'")
        }
        index += count
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw failure("more than \(Self.maximumDepth) arrays and objects nested")
        }
    }

    private mutating func object() throws(Failure) -> JSONValue {
        try enter()
        index += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            // A comma before the closing brace, which JSONDecoder let pass.
            if index < bytes.count && bytes[index] == UInt8(ascii: "}") && !members.isEmpty {
                index += 1
                depth -= 1
                return .object(members)
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a key") }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            let member = try value()
            if members[key] == nil { members[key] = member }
            skipWhitespace()
            guard index < bytes.count else { throw failure("the text ends inside an object") }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(members)
            default:
                throw failure("expected ',' or '}'")
            }
        }
    }

    private mutating func array() throws(Failure) -> JSONValue {
        try enter()
        index += 1  // [
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            // A comma before the closing bracket, which JSONDecoder let pass.
            if index < bytes.count && bytes[index] == UInt8(ascii: "]") && !items.isEmpty {
                index += 1
                depth -= 1
                return .array(items)
            }
            items.append(try value())
            skipWhitespace()
            guard index < bytes.count else { throw failure("the text ends inside an array") }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(items)
            default:
                throw failure("expected ',' or ']'")
            }
        }
    }

    /// A number as JSON spells it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    private mutating func number() throws(Failure) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw failure("expected a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("expected a digit after '.'") }
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("expected a digit in the exponent") }
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        let text = Substring(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let number = Double(text), number.isFinite else {
            throw Failure(description: "number \(text) does not fit a Double, at byte \(start)")
        }
        return number
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// A string, from its opening quote past its closing one.
    private mutating func string() throws(Failure) -> String {
        index += 1  // "
        let start = index
        // The common case: no escapes; the bytes are the string.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = try utf8(start..<index)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw failure("unescaped control character in a string") }
            index += 1
        }
        var text = try utf8(start..<index)
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw failure("the text ends inside an escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): text.append("\"")
                case UInt8(ascii: "\\"): text.append("\\")
                case UInt8(ascii: "/"): text.append("/")
                case UInt8(ascii: "b"): text.append("\u{08}")
                case UInt8(ascii: "f"): text.append("\u{0C}")
                case UInt8(ascii: "n"): text.append("\n")
                case UInt8(ascii: "r"): text.append("\r")
                case UInt8(ascii: "t"): text.append("\t")
                case UInt8(ascii: "u"): text.unicodeScalars.append(try unicodeEscape())
                default: throw failure("invalid escape '\\\(Unicode.Scalar(escape))'")
                }
            default:
                guard byte >= 0x20 else { throw failure("unescaped control character in a string") }
                let run = index
                while index < bytes.count {
                    let next = bytes[index]
                    if next == UInt8(ascii: "\"") || next == UInt8(ascii: "\\") || next < 0x20 { break }
                    index += 1
                }
                text += try utf8(run..<index)
            }
        }
        throw failure("the text ends inside a string")
    }

    private func utf8(_ range: Range<Int>) throws(Failure) -> String {
        guard let text = String(validating: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) else {
            throw Failure(description: "invalid UTF-8 in a string at byte \(range.lowerBound)")
        }
        return text
    }

    /// After `\u`: four hex digits, and for a high surrogate the `\uDC00`-`\uDFFF` that must follow.
    private mutating func unicodeEscape() throws(Failure) -> Unicode.Scalar {
        let first = try hex4()
        switch first {
        case 0xD800...0xDBFF:
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw failure("a high surrogate without its low surrogate") }
            index += 2
            let second = try hex4()
            guard (0xDC00...0xDFFF).contains(second) else {
                throw failure("a high surrogate without its low surrogate")
            }
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
        case 0xDC00...0xDFFF:
            throw failure("a low surrogate without its high surrogate")
        default:
            return Unicode.Scalar(first)!
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("the text ends inside a \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("invalid hex digit in a \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
