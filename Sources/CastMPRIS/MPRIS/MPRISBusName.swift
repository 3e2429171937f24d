import CastArtwork

/// The bus name of a device's player: `org.mpris.MediaPlayer2.castd.<id>`, the device's id
/// made into one valid element of a bus name, a different one for every id.
public enum MPRISBusName {
    public static let prefix = "org.mpris.MediaPlayer2.castd."
    /// A bus name is at most 255 bytes.
    static let maximumElementLength = 255 - prefix.utf8.count
    /// Between the start of a long id's element and the hash of the whole id.
    static let hashMark = "___"

    /// An element holds only `[A-Za-z0-9_-]` and must not start with a digit. Letters and digits
    /// stay; any other byte becomes `__` and two hex digits (`:` → `__3a`); a leading digit gets
    /// one `_` before it (`0123…` → `_0123…`); an empty id is `_`. Every `_` is one of these
    /// marks and no two of them read alike, so the element can be read back into the id: two
    /// ids never share an element. An element that would pass ``maximumElementLength`` is its
    /// first bytes, `___` (which no unhashed element holds) and the SHA-256 of the whole id.
    /// Device ids are 32 hex digits, or `host:port` for a device given by address.
    public static func element(forDeviceID id: String) -> String {
        // A leading digit, or an empty id, gets a `_`.
        let leadingMark = id.utf8.first.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? true
        var element = leadingMark ? "_" : ""
        for byte in id.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                element.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16)
                element += "__" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        guard element.utf8.count > maximumElementLength else { return element }
        let hash = SHA256.hex(id)
        let kept = maximumElementLength - hashMark.utf8.count - hash.utf8.count
        return String(element.prefix(kept)) + hashMark + hash
    }

    public static func name(forDeviceID id: String) -> String {
        prefix + element(forDeviceID: id)
    }
}
