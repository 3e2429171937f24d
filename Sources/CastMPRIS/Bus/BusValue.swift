import CSystemd

/// A D-Bus value of the few types MPRIS2 uses, with its signature. Strings are made valid for
/// D-Bus as they are built (see ``BusText``): sd-bus refuses a string with a NUL or bad UTF-8,
/// and a device's metadata may hold either.
public indirect enum BusValue: Equatable, Sendable {
    case bool(Bool)
    case int32(Int32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case strings([String])
    /// `a{sv}`: MPRIS's Metadata, and the changed properties of PropertiesChanged.
    case dictionary([(String, BusValue)])

    /// The value's D-Bus signature.
    public var signature: String {
        switch self {
        case .bool: "b"
        case .int32: "i"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .strings: "as"
        case .dictionary: "a{sv}"
        }
    }

    public static func == (lhs: BusValue, rhs: BusValue) -> Bool {
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): a == b
        case (.int32(let a), .int32(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.uint64(let a), .uint64(let b)): a == b
        case (.double(let a), .double(let b)): a == b || (a.isNaN && b.isNaN)
        case (.string(let a), .string(let b)): a == b
        case (.objectPath(let a), .objectPath(let b)): a == b
        case (.strings(let a), .strings(let b)): a == b
        case (.dictionary(let a), .dictionary(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }
}

/// Appends values to an sd-bus message. sd-bus's own `sd_bus_message_append` takes C varargs,
/// which Swift cannot call, so values go in one basic value or container at a time.
struct BusMessageWriter {
    let message: OpaquePointer

    /// Appends `value` as itself (not in a variant).
    func append(_ value: BusValue) throws(BusError) {
        switch value {
        case .bool(let value):
            var int: Int32 = value ? 1 : 0
            try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &int), "append a boolean")
        case .int32(var value):
            try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "i")), &value), "append an int32")
        case .int64(var value):
            try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "x")), &value), "append an int64")
        case .uint64(var value):
            try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "t")), &value), "append a uint64")
        case .double(var value):
            try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "d")), &value), "append a double")
        case .string(let value):
            try appendString(value, type: "s")
        case .objectPath(let value):
            try appendString(value, type: "o")
        case .strings(let values):
            try open("a", "s")
            for value in values { try appendString(value, type: "s") }
            try close()
        case .dictionary(let entries):
            try open("a", "{sv}")
            for (key, value) in entries {
                try open("e", "sv")
                try appendString(key, type: "s")
                try appendVariant(value)
                try close()
            }
            try close()
        }
    }

    /// Appends `value` in a variant (`v`).
    func appendVariant(_ value: BusValue) throws(BusError) {
        try open("v", value.signature)
        try append(value)
        try close()
    }

    func open(_ type: Character, _ contents: String) throws(BusError) {
        let code = contents.withCString { sd_bus_message_open_container(message, CChar(type.asciiValue!), $0) }
        try check(code, "open a container \(type) of \(contents)")
    }

    func close() throws(BusError) {
        try check(sd_bus_message_close_container(message), "close a container")
    }

    private func appendString(_ value: String, type: Character) throws(BusError) {
        let text = type == "s" ? BusText.valid(value) : value
        let code = text.withCString { sd_bus_message_append_basic(message, CChar(type.asciiValue!), $0) }
        try check(code, "append a string of \(text.utf8.count) bytes")
    }
}

/// Reads the arguments of a method call, one basic value or container at a time.
struct BusMessageReader {
    let message: OpaquePointer

    func readString() throws(BusError) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &pointer), "read a string")
        return pointer.map { String(cString: $0) } ?? ""
    }

    func readObjectPath() throws(BusError) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "o")), &pointer), "read an object path")
        return pointer.map { String(cString: $0) } ?? ""
    }

    func readInt64() throws(BusError) -> Int64 {
        var value: Int64 = 0
        try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "x")), &value), "read an int64")
        return value
    }

    /// Reads a variant holding a basic value: `b`, `d`, `s`, `i`, `x`. Anything else is refused
    /// with the D-Bus error InvalidArgs.
    func readVariant() throws(BusError) -> BusValue {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>? = nil
        try check(sd_bus_message_peek_type(message, &type, &contents), "peek at a variant")
        guard type == CChar(UInt8(ascii: "v")), let contents else {
            throw BusError.invalidArguments("a variant was expected")
        }
        let signature = String(cString: contents)
        try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "v")), contents), "enter a variant")
        let value: BusValue
        switch signature {
        case "b":
            var int: Int32 = 0
            try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &int), "read a boolean")
            value = .bool(int != 0)
        case "d":
            var double: Double = 0
            try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "d")), &double), "read a double")
            value = .double(double)
        case "s":
            value = .string(try readString())
        case "i":
            var int: Int32 = 0
            try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "i")), &int), "read an int32")
            value = .int32(int)
        case "x":
            value = .int64(try readInt64())
        default:
            throw BusError.invalidArguments("a value of type \(signature) is not accepted here")
        }
        try check(sd_bus_message_exit_container(message), "leave a variant")
        return value
    }
}

/// Text made valid for D-Bus, the one place every string cast-mpris puts on the bus goes
/// through (``BusMessageWriter`` for every `s`, ``BusReply`` for error names and messages).
///
/// sd-bus refuses a string (EINVAL) with a NUL, or with a code point its UTF-8 check rejects:
/// the noncharacters U+FDD0…U+FDEF and the last two of every plane (U+FFFE, U+FFFF, U+1FFFE,
/// …, U+10FFFF), which castd's JSON reader accepts (`"\uffff"`) and a device's metadata may
/// hold; a refused title would make the player's GetAll and every PropertiesChanged fail. So a
/// NUL is dropped and such a code point becomes U+FFFD. (Surrogates, the other code points
/// sd-bus refuses, cannot be in a Swift string.) And, as every MPRIS client shows a text on one
/// line of a panel, a text is at most ``maximumBytes`` bytes (cut at a character).
public enum BusText {
    public static let maximumBytes = 4096

    public static func valid(_ text: String) -> String {
        if !needsCut(text) { return text }
        var result = ""
        var bytes = 0
        for scalar in text.unicodeScalars where scalar != "\0" {
            let character = isRefused(scalar) ? "\u{FFFD}" : scalar
            let size = UTF8.width(character)
            if bytes + size > maximumBytes { break }
            result.unicodeScalars.append(character)
            bytes += size
        }
        return result
    }

    /// Whether `text` would be changed by ``valid(_:)``: what a log line reports.
    public static func needsCut(_ text: String) -> Bool {
        text.utf8.count > maximumBytes || text.unicodeScalars.contains(where: isRefused)
    }

    /// Whether sd-bus refuses `scalar` in a string: a NUL (a C string's end), U+FDD0…U+FDEF, or
    /// U+nFFFE and U+nFFFF of any plane (systemd's `unichar_is_valid`).
    public static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value == 0 || (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE
    }

    /// `name` as a valid D-Bus error name: two or more elements joined by `.`, each of
    /// `[A-Za-z0-9_]` not starting with a digit, at most 255 bytes. A valid name is kept; in
    /// another, each byte outside those is `_` and an element that is empty or starts with a
    /// digit gets a `_` first; a name of one element, or still too long, is
    /// `org.freedesktop.DBus.Error.Failed`.
    public static func errorName(_ name: String) -> String {
        let fallback = "org.freedesktop.DBus.Error.Failed"
        let elements = name.split(separator: ".", omittingEmptySubsequences: false).map { element -> String in
            var bytes = element.utf8.map { byte -> UInt8 in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                    byte
                default:
                    UInt8(ascii: "_")
                }
            }
            if bytes.first.map({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) ?? true {
                bytes.insert(UInt8(ascii: "_"), at: 0)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        let valid = elements.joined(separator: ".")
        guard elements.count >= 2, valid.utf8.count <= 255 else { return fallback }
        return valid
    }
}

/// A failure of sd-bus, or a D-Bus error to reply with.
public struct BusError: Error, CustomStringConvertible, Sendable {
    /// The D-Bus error name (`org.freedesktop.DBus.Error.InvalidArgs`, `org.castd.Error.NOT_FOUND`).
    public var name: String
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }

    static func invalidArguments(_ message: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }

    static func failed(_ message: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }
}

/// Throws for a negative (errno) return of an sd-bus or sd-event function.
func check(_ code: Int32, _ what: @autoclosure () -> String) throws(BusError) {
    guard code < 0 else { return }
    throw BusError.failed("cannot \(what()): \(String(cString: strerror(-code)))")
}
