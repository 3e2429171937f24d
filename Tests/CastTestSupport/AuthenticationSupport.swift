import CastChannel
import CastEmulator

extension CastTrustRoots {
    /// The root of this process's emulators (``EmulatorDeviceAuthority/shared()``), besides
    /// Google's: what a test sender trusts so that emulated devices authenticate.
    public static func castAndEmulators() throws -> CastTrustRoots {
        CastTrustRoots.cast.adding(try CastTrustRoots(pem: EmulatorDeviceAuthority.shared().rootCertificatePEM))
    }
}

extension CastLinkConfiguration {
    /// The default configuration, trusting this process's emulators too (see
    /// ``CastTrustRoots/castAndEmulators()``), with `policy` for devices that fail.
    public static func trustingEmulators(policy: DeviceAuthenticationPolicy = .require) -> CastLinkConfiguration {
        var configuration = CastLinkConfiguration()
        // The shared authority is made in memory; a failure to make it fails every emulator
        // test anyway, with its own error.
        configuration.authentication = DeviceAuthenticationSettings(
            trustedRoots: (try? CastTrustRoots.castAndEmulators()) ?? .cast, policy: policy)
        return configuration
    }
}
