import CastSenderLink
import CastdAPI
import Foundation

/// Device authentication in the device's record: what each link found out, the key pinned for
/// the device, and what requests get when castd refuses a device that failed. The device's
/// controller owns it.
struct DeviceTrust: Sendable {
    let deviceID: String
    /// The key each device id first authenticated with; nil: no pinning.
    let keyPins: DeviceKeyPins?
    let store: CastdStateStore

    /// The key the device must prove on the next link, if one is pinned.
    var pinnedKey: String? { keyPins?.key(for: deviceID) }

    /// Records the outcome of device authentication on the link just made.
    func record(_ outcome: DeviceAuthentication?) {
        guard let outcome else { return }
        if outcome.state == .verified {
            keyPins?.pinIfNew(
                deviceID: deviceID, key: outcome.keyFingerprint, deviceCertificate: outcome.deviceCertificate)
        }
        let pinned = pinnedKey ?? ""
        store.updateKnownDevice(id: deviceID) {
            $0.authentication = Castd_V1_DeviceAuthentication(outcome)
            $0.authentication.pinnedKey = pinned
        }
    }

    /// Forgets the key pinned for the device: whatever key it proves next is pinned. Returns
    /// whether one was pinned.
    func forgetPinnedKey() -> Bool {
        let forgotten = keyPins?.forget(deviceID: deviceID)
        store.updateKnownDevice(id: deviceID) { $0.authentication.pinnedKey = "" }
        return forgotten != nil
    }

    /// When `error` is castd refusing the device for failing authentication: records the outcome
    /// and returns true.
    func recordRefusal(_ error: any Error) -> Bool {
        guard let error = error as? CastLinkError, error.code == .authenticationFailed,
            let outcome = error.authentication
        else { return false }
        record(outcome)
        return true
    }

    /// What requests waiting for the link get when it could not be made.
    ///
    /// A refused device is FAILED_PRECONDITION, not UNAVAILABLE: it was reached, and trying again
    /// will not help until the configuration changes (another trusted root, or
    /// `--device-auth warn`); UNAVAILABLE would tell clients to retry.
    static func linkFailure(reason: String, refused: Bool, device: String, at endpoint: DeviceEndpoint) -> CastdError {
        guard refused else {
            return CastdError(.unavailable, "cannot reach \(device) at \(endpoint): \(reason)")
        }
        return CastdError(
            .failedPrecondition,
            "castd refuses \(device) at \(endpoint): \(reason) (castd --trust-root adds a root; --device-auth warn uses such devices anyway)"
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
