import Foundation

/// What CastV2 device authentication concluded about one connection.
public struct DeviceAuthentication: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        /// The device proved it holds a key certified by a trusted Cast root.
        case verified
        /// It could not, and castd refused the link (policy ``DeviceAuthenticationPolicy/require``).
        case refused
        /// It could not, and the link goes on anyway, with a warning
        /// (policy ``DeviceAuthenticationPolicy/warn``).
        case unverified
    }

    public var state: State
    /// Why it failed; for a verified device, what was flagged (SHA-1), else empty.
    public var detail: String
    /// The failed check, when it failed.
    public var failure: DeviceAuthenticationFailure?
    /// SHA-1 signs the device certificate or one of its intermediates (accepted, but flagged).
    public var sha1: Bool
    /// The device certificate's subject (`CN=…`), when it could be read.
    public var deviceCertificate: String
    /// The common name (else the subject) of the trusted root the chain leads to, when it does.
    public var root: String
    /// `sha256:` and the hex SHA-256 of the device certificate's SubjectPublicKeyInfo, when the
    /// device proved it holds that key (verified).
    public var keyFingerprint: String = ""
    public var checkedAt: Date

    public init(
        state: State, detail: String = "", failure: DeviceAuthenticationFailure? = nil, sha1: Bool = false,
        deviceCertificate: String = "", root: String = "", checkedAt: Date = Date()
    ) {
        self.state = state
        self.detail = detail
        self.failure = failure
        self.sha1 = sha1
        self.deviceCertificate = deviceCertificate
        self.root = root
        self.checkedAt = checkedAt
    }

    /// The outcome of a failed check under `policy`.
    public init(_ failure: DeviceAuthenticationFailure, policy: DeviceAuthenticationPolicy, checkedAt: Date = Date()) {
        self.init(
            state: policy == .require ? .refused : .unverified, detail: failure.message, failure: failure,
            deviceCertificate: failure.deviceCertificate, checkedAt: checkedAt)
    }
}

/// A device that failed authentication, and why, in words a user can act on.
public struct DeviceAuthenticationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which check failed.
    public enum Check: String, Sendable, Equatable, CaseIterable {
        /// No answer to the challenge before the connect deadline.
        case noReply
        /// The device answered with an AuthError.
        case authError
        /// The answer is not a DeviceAuthMessage holding an AuthResponse.
        case malformedReply
        /// The answer echoes a nonce other than the one sent: it answers another challenge.
        case nonceMismatch
        /// A certificate of the answer cannot be parsed.
        case unreadableCertificate
        /// The device certificate's key is not RSA, or is shorter than 2048 bits (checked for
        /// every certificate of the chain).
        case weakKey
        /// The answer carries more intermediate certificates than a device sends
        /// (``DeviceAuthenticator/maximumIntermediates``).
        case tooManyIntermediates
        /// A certificate of the answer holds an RSA key longer than any Cast certificate's
        /// (``DeviceAuthenticator/maximumRSAKeyBits``): each signature it checks costs more.
        case oversizedKey
        /// The answer could not be checked by the connect deadline.
        case verificationTimedOut
        /// The device proved it is a Cast device, but with another key than the one castd
        /// pinned for its id when it first authenticated: another device answering for it.
        case keyChanged
        /// The device certificate or an intermediate is expired or not yet valid.
        case certificateNotValidNow
        /// No chain from the device certificate through the intermediates to a trusted root.
        case untrustedChain
        /// The device certificate may not sign challenges (key usage, extended key usage) or
        /// has no common name.
        case deviceCertificateUsage
        /// The answer is signed with SHA-1 although SHA-256 was asked for: a downgrade.
        case hashDowngrade
        /// The answer uses a signature scheme castd does not accept (only RSASSA-PKCS1-v1_5).
        case unsupportedSignatureAlgorithm
        /// The signature does not verify over nonce ‖ TLS certificate with the device's key
        /// (a signature over another certificate, another nonce, or by another key).
        case badSignature
        /// The TLS certificate could not be had or read.
        case noTLSCertificate
        /// The TLS certificate's validity starts in the future.
        case tlsCertificateNotYetValid
        /// The TLS certificate has expired.
        case tlsCertificateExpired
        /// The TLS certificate is valid for longer than a device's short-lived one may be.
        case tlsCertificateTooLongLived
    }

    public var check: Check
    /// The reason, without the "device authentication failed" prefix.
    public var message: String
    /// The device certificate's subject, when it could be read.
    public var deviceCertificate: String

    public init(_ check: Check, _ message: String, deviceCertificate: String = "") {
        self.check = check
        self.message = message
        self.deviceCertificate = deviceCertificate
    }

    public var description: String { "device authentication failed: \(message)" }
}

/// What castd does with a device that fails authentication.
public enum DeviceAuthenticationPolicy: String, Sendable, Equatable, CaseIterable {
    /// Refuse the link: requests for the device fail with the reason. The default.
    case require
    /// Log a warning and use the device anyway; it is reported as unverified.
    case warn
}

/// How a link authenticates its device.
public struct DeviceAuthenticationSettings: Sendable, Equatable {
    /// The roots a device certificate must chain to. Default: Google's Cast roots.
    public var trustedRoots: CastTrustRoots = .cast
    public var policy: DeviceAuthenticationPolicy = .require
    /// The key fingerprint (``DeviceAuthentication/keyFingerprint``) this device id
    /// authenticated with before; a device that proves another key fails
    /// ``DeviceAuthenticationFailure/Check/keyChanged``. nil: none pinned yet.
    public var pinnedKey: String?

    public init(trustedRoots: CastTrustRoots = .cast, policy: DeviceAuthenticationPolicy = .require) {
        self.trustedRoots = trustedRoots
        self.policy = policy
    }
}
