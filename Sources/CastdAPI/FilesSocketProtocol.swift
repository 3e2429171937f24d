/// The files socket's wire (rpc.proto, "The files socket"), for castd and its clients alike: its
/// frames' 4-byte big-endian length and the bounds castd holds clients to.
public enum FilesSocketProtocol {
    /// Descriptors one request may carry.
    public static let descriptorsPerRequest = 64
    /// Handles one connection may hold that no call has taken yet.
    public static let untakenPerConnection = 4096
    /// Handed-over files castd holds open at once, taken or not.
    public static let openInCastd = 16384
    /// The largest FileHandover a request carries.
    public static let requestBytes = 64 * 1024

    /// The 4-byte big-endian length before a frame of `count` bytes.
    public static func prefix(_ count: Int) -> [UInt8] {
        let length = UInt32(truncatingIfNeeded: count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
    }

    /// The length a frame's first 4 bytes give.
    public static func length<Bytes: RandomAccessCollection<UInt8>>(_ header: Bytes) -> Int {
        header.prefix(4).reduce(0) { $0 << 8 | Int($1) }
    }
}
