/// The bus name of a device's player: `org.mpris.MediaPlayer2.castd.<id>`, the device's id
/// made into one valid element of a bus name.
public enum MPRISBusName {
    public static let prefix = "org.mpris.MediaPlayer2.castd."
    /// A bus name is at most 255 bytes.
    static let maximumElementLength = 255 - prefix.utf8.count

    /// An element holds only `[A-Za-z0-9_-]` and must not start with a digit. Letters and digits
    /// stay; any other byte becomes `_` and two hex digits (`:` → `_3a`), so distinct ids give
    /// distinct names; a leading digit gets a `_` before it. Device ids are 32 hex digits, or
    /// `host:port` for a device given by address.
    public static func element(forDeviceID id: String) -> String {
        var element = ""
        for byte in id.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                element.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16)
                element += "_" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        if element.isEmpty || element.first!.isNumber { element = "_" + element }
        return String(element.prefix(maximumElementLength))
    }

    public static func name(forDeviceID id: String) -> String {
        prefix + element(forDeviceID: id)
    }
}
