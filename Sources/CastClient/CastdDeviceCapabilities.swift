import CastdAPI

/// What a device can do: the bits of `CastdDevice.capabilities` (its mDNS "ca" record), as a set.
///
/// ```swift
/// let speakers = try await client.listDevices(capabilities: .audioOut)
/// if device.capabilitySet.contains(.videoOut) { … }
/// ```
public struct CastdDeviceCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    public static let videoOut = CastdDeviceCapabilities(rawValue: UInt32(Castd_V1_Capability.videoOut.rawValue))
    public static let videoIn = CastdDeviceCapabilities(rawValue: UInt32(Castd_V1_Capability.videoIn.rawValue))
    public static let audioOut = CastdDeviceCapabilities(rawValue: UInt32(Castd_V1_Capability.audioOut.rawValue))
    public static let audioIn = CastdDeviceCapabilities(rawValue: UInt32(Castd_V1_Capability.audioIn.rawValue))
    public static let devMode = CastdDeviceCapabilities(rawValue: UInt32(Castd_V1_Capability.devMode.rawValue))
    /// A multizone (speaker) group.
    public static let multizoneGroup = CastdDeviceCapabilities(
        rawValue: UInt32(Castd_V1_Capability.multizoneGroup.rawValue))
}

extension CastdDevice {
    /// `capabilities` as a set.
    public var capabilitySet: CastdDeviceCapabilities { CastdDeviceCapabilities(rawValue: capabilities) }
}
