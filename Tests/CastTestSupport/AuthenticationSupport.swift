import CastSenderLink
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
    ///
    /// The connect deadline is 60 s, not Chromium's 10: it covers TCP, TLS and device
    /// authentication, and authentication takes several turns of the test process's Swift
    /// concurrency pool (castd sends, the emulator answers, castd verifies), which the test
    /// suite keeps busy for tens of seconds at a time on a 2-core machine. A test about a
    /// device that does not answer sets its own deadline.
    public static func trustingEmulators(policy: DeviceAuthenticationPolicy = .require) -> CastLinkConfiguration {
        var configuration = CastLinkConfiguration()
        configuration.connectTimeout = .seconds(60)
        // The device's liveness windows (5 s, 10 s) stretch with `testTimeScale` like every
        // deadline of the suite: the emulators answering are in this process, on its threads.
        configuration.pingInterval = configuration.pingInterval.scaledForTests
        configuration.deadAfter = configuration.deadAfter.scaledForTests
        // The shared authority is made in memory; a failure to make it fails every emulator
        // test anyway, with its own error.
        configuration.authentication = DeviceAuthenticationSettings(
            trustedRoots: (try? CastTrustRoots.castAndEmulators()) ?? .cast, policy: policy)
        return configuration
    }
}
