/// The capability bits a Cast device advertises in the `ca` TXT key (a decimal number).
///
/// Devices set more bits than the ones named here (for example 0x800, 0x10000); they are kept in
/// `rawValue` so nothing is lost.
public struct CastCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    public static let videoOut = CastCapabilities(rawValue: 1 << 0)
    public static let videoIn = CastCapabilities(rawValue: 1 << 1)
    public static let audioOut = CastCapabilities(rawValue: 1 << 2)
    public static let audioIn = CastCapabilities(rawValue: 1 << 3)
    public static let devMode = CastCapabilities(rawValue: 1 << 4)
    /// Set by speaker groups ("Google Cast Group").
    public static let multizoneGroup = CastCapabilities(rawValue: 1 << 5)
}

extension CastCapabilities: CustomStringConvertible {
    public var description: String {
        let names: [(CastCapabilities, String)] = [
            (.videoOut, "videoOut"), (.videoIn, "videoIn"), (.audioOut, "audioOut"),
            (.audioIn, "audioIn"), (.devMode, "devMode"), (.multizoneGroup, "multizoneGroup"),
        ]
        var parts = names.filter { contains($0.0) }.map(\.1)
        let known = names.reduce(into: UInt32(0)) { $0 |= $1.0.rawValue }
        let other = rawValue & ~known
        if other != 0 {
            parts.append("0x" + String(other, radix: 16))
        }
        return "[" + parts.joined(separator: ", ") + "]"
    }
}
