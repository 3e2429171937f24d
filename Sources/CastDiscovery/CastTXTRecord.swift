/// The TXT record of a `_googlecast._tcp` service.
///
/// Keys are case-insensitive (RFC 6763 §6.4): `values` holds every key lowercased. Known keys:
/// `id` (device id), `fn` (friendly name), `md` (model), `ca` (capabilities, decimal), `st`
/// (0 idle, 1 busy), `rs` (status text), `ic` (icon path); others (`ve`, `cd`, `rm`, `bs`, `nf`,
/// `ct`, …) are only in `values`. Parsing never fails: whatever a device sends is kept as well as
/// it can be.
public struct CastTXTRecord: Sendable, Hashable {
    /// `id`; nil when missing or empty.
    public var id: String?
    /// `fn`; nil when missing or empty.
    public var friendlyName: String?
    /// `md`.
    public var model: String?
    /// `ca`; empty when missing or not a decimal number.
    public var capabilities: CastCapabilities
    /// `st`: 0 idle, 1 busy; nil when missing or not a number.
    public var status: Int?
    /// `rs`: what the device is doing ("Casting: …"), often empty.
    public var statusText: String?
    /// `ic`: the icon's path on the device's HTTP server (port 8008).
    public var iconPath: String?
    /// Every key (lowercased) and its value. A key without `=` has the value "".
    public var values: [String: String]

    /// Parses raw TXT strings ("key=value", as on the wire).
    ///
    /// A string without `=` is a key with the value "". The first occurrence of a key wins
    /// (RFC 6763 §6.4); empty strings and strings with an empty key are ignored. Bytes that are
    /// not UTF-8 are decoded lossily (U+FFFD).
    public init(entries: [[UInt8]]) {
        var values: [String: String] = [:]
        for entry in entries {
            let separator = entry.firstIndex(of: UInt8(ascii: "="))
            let keyBytes = entry[..<(separator ?? entry.endIndex)]
            guard !keyBytes.isEmpty else { continue }
            let key = String(decoding: keyBytes, as: UTF8.self).lowercased()
            guard values[key] == nil else { continue }
            let valueBytes = separator.map { entry[entry.index(after: $0)...] } ?? []
            values[key] = String(decoding: valueBytes, as: UTF8.self)
        }
        self.init(lowercasedValues: values)
    }

    /// Builds a record from a key→value map (keys are lowercased; if two keys differ only in
    /// case, the one already in lower case wins, else the first in byte order).
    public init(values: [String: String]) {
        var lowercased: [String: String] = [:]
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            let lower = key.lowercased()
            if key == lower || lowercased[lower] == nil {
                lowercased[lower] = value
            }
        }
        self.init(lowercasedValues: lowercased)
    }

    private init(lowercasedValues values: [String: String]) {
        self.values = values
        self.id = values["id"].flatMap { $0.isEmpty ? nil : $0 }
        self.friendlyName = values["fn"].flatMap { $0.isEmpty ? nil : $0 }
        self.model = values["md"]
        self.capabilities =
            values["ca"].flatMap { UInt32(Self.trimmed($0)) }.map(CastCapabilities.init(rawValue:)) ?? []
        self.status = values["st"].flatMap { Int(Self.trimmed($0)) }
        self.statusText = values["rs"]
        self.iconPath = values["ic"]
    }

    private static func trimmed(_ string: String) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let start = string.firstIndex(where: { !isSpace($0) }) ?? string.endIndex
        let end = string.lastIndex(where: { !isSpace($0) }).map(string.index(after:)) ?? start
        return string[start..<max(start, end)]
    }
}
