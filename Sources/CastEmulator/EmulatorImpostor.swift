/// Ways an emulated device fails CastV2 device authentication, so that a sender's checks can be
/// tested: each variant breaks exactly one thing a sender must check and keeps the rest genuine
/// (the chain still leads to the emulator's trusted root unless the variant is about the chain).
///
/// `cast-emulator --impostor NAME` picks one; ``EmulatorConfiguration/impostor`` in code.
public enum EmulatorImpostor: String, Sendable, CaseIterable, Hashable {
    /// The device certificate chains to a root generated for this process and never written
    /// anywhere, so no sender trusts it.
    case untrustedRoot = "untrusted-root"
    /// The answer echoes, and its signature covers, a nonce other than the one sent: an answer
    /// recorded from another challenge.
    case wrongNonce = "wrong-nonce"
    /// The signature covers another TLS certificate than the one this connection presents: an
    /// answer relayed from another connection.
    case signatureOverOtherCertificate = "signature-over-other-certificate"
    /// The TLS certificate expired yesterday.
    case expiredTLSCertificate = "expired-tls-certificate"
    /// The TLS certificate becomes valid tomorrow.
    case futureTLSCertificate = "future-tls-certificate"
    /// The TLS certificate is valid for a year (senders allow at most 4 days).
    case longLivedTLSCertificate = "long-lived-tls-certificate"
    /// The device key is RSA-1024 (senders require at least 2048 bits).
    case shortRSAKey = "short-rsa-key"
    /// The answer is signed with SHA-1 even when the challenge asks for SHA-256.
    case sha1
    /// The answer carries no intermediate certificate, so the chain cannot be built.
    case noIntermediate = "no-intermediate"
    /// The device certificate expired yesterday.
    case expiredDeviceCertificate = "expired-device-certificate"
    /// The device certificate's key usage does not allow signing (keyEncipherment only).
    case noDigitalSignature = "no-digital-signature"
    /// Every challenge is answered with an AuthError (INTERNAL_ERROR).
    case authError = "auth-error"
    /// Every challenge is answered with bytes that are not a DeviceAuthMessage.
    case garbageReply = "garbage-reply"
    /// Challenges are never answered.
    case noReply = "no-reply"

    /// One line for `--help`.
    public var summary: String {
        switch self {
        case .untrustedRoot: "the device certificate chains to a root nobody trusts"
        case .wrongNonce: "the answer echoes and signs another nonce than the one sent"
        case .signatureOverOtherCertificate: "the signature covers another TLS certificate than this connection's"
        case .expiredTLSCertificate: "the TLS certificate expired yesterday"
        case .futureTLSCertificate: "the TLS certificate becomes valid tomorrow"
        case .longLivedTLSCertificate: "the TLS certificate is valid for a year (senders allow 4 days)"
        case .shortRSAKey: "the device key is RSA-1024 (senders require 2048 bits)"
        case .sha1: "the answer is signed with SHA-1 even when SHA-256 is asked for"
        case .noIntermediate: "the answer carries no intermediate certificate"
        case .expiredDeviceCertificate: "the device certificate expired yesterday"
        case .noDigitalSignature: "the device certificate's key usage does not allow signing"
        case .authError: "every challenge is answered with an AuthError"
        case .garbageReply: "every challenge is answered with bytes that are not a DeviceAuthMessage"
        case .noReply: "challenges are never answered"
        }
    }
}
