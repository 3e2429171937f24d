/// A request's Range header, as far as this server honours it: one byte range (RFC 9110 §14.1.2).
///
/// Anything else (another unit, several ranges, several Range headers, a malformed range, a
/// last position before the first) is ignored and the whole file served with 200, as RFC 9110
/// §14.2 allows a server to do. Positions too large for an Int are read as Int.max.
enum ByteRange: Equatable {
    /// `bytes=first-last` or `bytes=first-` (last nil).
    case from(Int, through: Int?)
    /// `bytes=-count`: the last `count` bytes.
    case suffix(Int)

    /// What to send of a file of `size` bytes.
    enum Selection: Equatable {
        case whole
        /// 206 with these bytes.
        case partial(ClosedRange<Int>)
        /// 416.
        case unsatisfiable
    }

    /// The range one Range header value asks for; nil to serve the whole file.
    init?(header values: [String]) {
        guard values.count == 1 else { return nil }
        let value = values[0].utf8
        guard let equals = value.firstIndex(of: UInt8(ascii: "=")) else { return nil }
        let unit = String(decoding: value[..<equals], as: UTF8.self).trimmingWhitespace
        guard unit.lowercased() == "bytes" else { return nil }
        let spec = String(decoding: value[value.index(after: equals)...], as: UTF8.self).trimmingWhitespace
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash].trimmingWhitespace
        let last = spec[spec.index(after: dash)...].trimmingWhitespace
        if first.isEmpty {
            guard let count = Self.position(last) else { return nil }
            self = .suffix(count)
        } else {
            guard let start = Self.position(first) else { return nil }
            if last.isEmpty {
                self = .from(start, through: nil)
            } else {
                guard let end = Self.position(last), end >= start else { return nil }
                self = .from(start, through: end)
            }
        }
    }

    /// The selection of a file of `size` bytes this range makes, or `.whole` for no range.
    static func select(_ range: ByteRange?, size: Int) -> Selection {
        switch range {
        case nil:
            return .whole
        case .from(let start, let end)?:
            guard start < size else { return .unsatisfiable }
            return .partial(start...min(end ?? Int.max, size - 1))
        case .suffix(let count)?:
            guard count > 0, size > 0 else { return .unsatisfiable }
            return .partial(max(0, size - count)...(size - 1))
        }
    }

    /// 1 or more ASCII digits, saturating at Int.max; nil for anything else.
    private static func position(_ text: String) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            value = overflow1 || overflow2 ? Int.max : sum
        }
        return value
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var trimmingWhitespace: String {
        let bytes = Array(utf8)
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let start = bytes.firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = bytes.lastIndex(where: { !isSpace($0) })!
        return String(decoding: bytes[start...end], as: UTF8.self)
    }
}
