import CastSenderLink
import CastdAPI
import Foundation

/// Device authentication in the device's record: what the link found out, and what requests get
/// when castd refuses a device that failed.
extension DeviceController {
    /// Records the outcome of device authentication on the link just made.
    func recordAuthentication(_ outcome: DeviceAuthentication?) {
        guard let outcome else { return }
        if outcome.state == .verified {
            keyPins?.pinIfNew(deviceID: id, key: outcome.keyFingerprint, deviceCertificate: outcome.deviceCertificate)
        }
        let pinned = keyPins?.key(for: id) ?? ""
        store.updateKnownDevice(id: id) {
            $0.authentication = Castd_V1_DeviceAuthentication(outcome)
            $0.authentication.pinnedKey = pinned
        }
    }

    /// Forgets the key pinned for this device and tries it again now: whatever key it proves
    /// next is pinned. Returns the device as clients see it.
    func forgetPinnedKey() -> CastdDevice? {
        let forgotten = keyPins?.forget(deviceID: id)
        store.updateKnownDevice(id: id) { $0.authentication.pinnedKey = "" }
        if forgotten != nil { connectSoon() }
        return store.device(id: id)
    }

    /// When `error` is castd refusing the device for failing authentication: records the outcome
    /// and returns true.
    func recordAuthenticationRefusal(_ error: any Error) -> Bool {
        guard let error = error as? CastLinkError, error.code == .authenticationFailed,
            let outcome = error.authentication
        else { return false }
        recordAuthentication(outcome)
        return true
    }

    /// What requests waiting for the link get when it could not be made.
    ///
    /// A refused device is FAILED_PRECONDITION, not UNAVAILABLE: it was reached, and trying again
    /// will not help until the configuration changes (another trusted root, or
    /// `--device-auth warn`); UNAVAILABLE would tell clients to retry.
    func linkFailure(reason: String, authenticationRefused: Bool) -> CastdError {
        guard authenticationRefused else {
            return CastdError(.unavailable, "cannot reach \(name) at \(endpoint): \(reason)")
        }
        return CastdError(
            .failedPrecondition,
            "castd refuses \(name) at \(endpoint): \(reason) (castd --trust-root adds a root; --device-auth warn uses such devices anyway)"
        )
    }
}

extension Castd_V1_DeviceAuthentication {
    init(_ outcome: DeviceAuthentication) {
        self.init()
        switch outcome.state {
        case .verified: state = .verified
        case .refused: state = .refused
        case .unverified: state = .unverified
        }
        detail = outcome.detail
        sha1 = outcome.sha1
        deviceCertificate = outcome.deviceCertificate
        root = outcome.root
        keyFingerprint = outcome.keyFingerprint
        checkedAtMs = Int64((outcome.checkedAt.timeIntervalSince1970 * 1000).rounded())
    }
}
