/// An image in the artwork cache: a local file a program can show or hand on (MPRIS's
/// `mpris:artUrl` takes ``fileURL``).
public struct ArtworkFile: Sendable, Hashable {
    /// The absolute path of the file.
    public var path: String
    public var byteCount: Int
    public var format: ArtworkFormat

    public init(path: String, byteCount: Int, format: ArtworkFormat) {
        self.path = path
        self.byteCount = byteCount
        self.format = format
    }

    /// `file:///home/me/.cache/castd/artwork/….png`, every byte outside RFC 3986's unreserved
    /// characters and `/` percent-encoded (a cache directory may have spaces in its path).
    public var fileURL: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var bytes = Array("file://".utf8)
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
