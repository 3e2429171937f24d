import CastProtocol
import Crypto
import Foundation
import SwiftASN1
import _CryptoExtras

@_spi(FixedExpiryValidationTime) import X509

/// Checks a device's answer to a CastV2 AuthChallenge, as Chromium's and openscreen's senders do
/// (`cast_auth_util.cc`, `cast_cert_validator.cc`), with swift-certificates for the chain and
/// swift-crypto for RSA.
///
/// The sender sends a 16-byte random nonce; the device answers with its device certificate, the
/// intermediates up to a Cast root, and a signature, by the device certificate's key, over
/// nonce ‖ DER of the TLS certificate the device presented on this connection. The signature binds
/// the TLS connection to a certified device key; the nonce makes the answer fresh.
///
/// Checks, each with its own ``DeviceAuthenticationFailure/Check``:
/// - the answer is an AuthResponse (an AuthError or anything else fails, with what it was);
/// - the TLS certificate is valid now and expires within ``maximumTLSCertificateLifetime``;
/// - the echoed nonce, when the device echoes one, is the one sent;
/// - the answer is PKCS#1 v1.5 and uses the hash asked for (SHA-1 when SHA-256 was asked is a
///   downgrade, refused);
/// - every certificate parses, and holds an RSA key of at least 2048 bits;
/// - the device certificate and intermediates are valid now;
/// - a chain leads from the device certificate through the intermediates to a trusted root
///   (RFC 5280: signatures, basic constraints, name constraints, validity);
/// - the device certificate asserts digitalSignature, allows client authentication when it
///   limits extended key usage, and has a common name;
/// - the signature verifies with the device certificate's key.
///
/// SHA-1: castd asks for SHA-256, so a SHA-1 answer is refused as a downgrade. SHA-1 in the
/// certificates' own signatures is accepted, because genuine devices have it (first- and
/// second-generation Chromecasts' device certificates are signed with sha1WithRSAEncryption, as
/// are the Cast roots themselves), but it is flagged: ``DeviceAuthentication/sha1`` and a detail.
/// The roots' self-signatures are not relied upon and are not flagged.
///
/// Bounded work: the answer comes before the device has proved anything, from any host that
/// announces itself, so what checking it costs is bounded before any signature is checked. At
/// most ``maximumIntermediates`` intermediates, each RSA key at most ``maximumRSAKeyBits``, and
/// intermediates that repeat a subject and key already sent are dropped: with them, any two
/// certificates that share a subject and a key are each a valid parent of the other, and path
/// building tries on the order of N! paths. After that each certificate has at most one parent
/// among the intermediates, and path building takes at most one step per intermediate
/// (``ChainSearch``). ``verify(reply:nonce:requestedHash:tlsCertificateDER:deadline:now:)``
/// runs on a thread of its own (``AuthenticationExecutor``), never on the cooperative pool, and
/// is cancelled at the connect deadline.
///
/// Not checked: revocation (Chromium's CRL check is optional by default and needs Google's CRL
/// root), and the audio-only policy (it restricts what a device may do, not whether it is one).
public struct DeviceAuthenticator: Sendable {
    public var trustedRoots: CastTrustRoots
    /// How long the TLS certificate may still be valid. Chromium and openscreen refuse a peer
    /// certificate whose notAfter is more than 4 days from now (`kMaxSelfSignedCertLifetimeInDays`
    /// in cast_auth_util.cc): the TLS certificate is not chain-verified, but the device's signature
    /// covers it, so its validity is how long that signature counts. Real devices make a new one
    /// every day or two. castd uses the same 4 days.
    public var maximumTLSCertificateLifetime: Duration = .seconds(4 * 86_400)

    /// Chromium's nonce size.
    public static let nonceSize = 16
    /// The smallest RSA key accepted anywhere in the chain (Chromium's CastPathBuilderDelegate).
    public static let minimumRSAKeyBits = 2048
    /// The largest RSA key accepted anywhere in the chain. Cast roots, intermediates and device
    /// certificates hold 2048-bit keys; checking a signature costs about the square of the key's
    /// size, so a 16384-bit key would cost 64 times as much.
    public static let maximumRSAKeyBits = 4096
    /// The most intermediate certificates an answer may carry. Genuine devices send one (the
    /// intermediate between their certificate and a Cast root); a few more are allowed.
    public static let maximumIntermediates = 3

    public init(trustedRoots: CastTrustRoots) {
        self.trustedRoots = trustedRoots
    }

    /// A fresh random nonce.
    public static func makeNonce() -> [UInt8] {
        (0..<nonceSize).map { _ in UInt8.random(in: .min ... .max) }
    }

    /// The DeviceAuthMessage carrying an AuthChallenge for `nonce`: PKCS#1 v1.5, with `hash`
    /// (castd asks for SHA-256; the field's default is SHA-1).
    public static func challenge(nonce: [UInt8], hash: AuthHashAlgorithm = .sha256) -> DeviceAuthMessage {
        var message = DeviceAuthMessage()
        message.challenge.senderNonce = Data(nonce)
        message.challenge.signatureAlgorithm = .rsassaPkcs1V15
        message.challenge.hashAlgorithm = hash
        return message
    }

    /// Checks the device's answer on ``AuthenticationExecutor``'s thread, by `deadline`: at the
    /// deadline the check is cancelled (it stops at its next step) and fails with
    /// ``DeviceAuthenticationFailure/Check/verificationTimedOut``.
    public func verify(
        reply: [UInt8], nonce: [UInt8], requestedHash: AuthHashAlgorithm = .sha256, tlsCertificateDER: [UInt8],
        deadline: ContinuousClock.Instant, now: Date = Date()
    ) async throws(DeviceAuthenticationFailure) -> DeviceAuthentication {
        let result = await withTaskGroup(of: Result<DeviceAuthentication, DeviceAuthenticationFailure>?.self) { group in
            group.addTask(executorPreference: AuthenticationExecutor.shared) {
                do throws(DeviceAuthenticationFailure) {
                    return .success(
                        try await self.verify(
                            reply: reply, nonce: nonce, requestedHash: requestedHash,
                            tlsCertificateDER: tlsCertificateDER, now: now))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return nil  // the deadline, or the check finished first and cancelled this
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let result else {
            throw DeviceAuthenticationFailure(
                .verificationTimedOut,
                "the device's answer to the challenge could not be checked by the connect deadline")
        }
        return try result.get()
    }

    /// Checks the device's answer. Returns the verified outcome, or throws the failed check.
    /// Runs where it is called: castd calls
    /// ``verify(reply:nonce:requestedHash:tlsCertificateDER:deadline:now:)``. A cancelled task
    /// stops at its next step with ``DeviceAuthenticationFailure/Check/verificationTimedOut``.
    ///
    /// - Parameters:
    ///   - reply: the binary payload of the device's `tp.deviceauth` answer.
    ///   - nonce: the nonce sent.
    ///   - requestedHash: the hash the challenge asked for.
    ///   - tlsCertificateDER: the certificate the device presented in the TLS handshake.
    ///   - now: the time certificates are checked at.
    public func verify(
        reply: [UInt8], nonce: [UInt8], requestedHash: AuthHashAlgorithm = .sha256, tlsCertificateDER: [UInt8],
        now: Date = Date()
    ) async throws(DeviceAuthenticationFailure) -> DeviceAuthentication {
        let response = try Self.response(in: reply)
        try checkTLSCertificate(tlsCertificateDER, now: now)

        if response.hasSenderNonce, response.senderNonce != Data(nonce) {
            throw DeviceAuthenticationFailure(
                .nonceMismatch,
                "the answer is for another challenge (it echoes nonce \(Self.hex(response.senderNonce)), not the one sent)"
            )
        }
        if response.hasSignatureAlgorithm, response.signatureAlgorithm != .rsassaPkcs1V15 {
            throw DeviceAuthenticationFailure(
                .unsupportedSignatureAlgorithm,
                "the answer is signed with \(response.signatureAlgorithm), castd accepts only RSASSA-PKCS1-v1_5")
        }
        if response.hashAlgorithm == .sha1, requestedHash != .sha1 {
            throw DeviceAuthenticationFailure(
                .hashDowngrade, "the answer is signed with SHA-1 although SHA-256 was asked for (a downgrade)")
        }
        guard !response.signature.isEmpty else {
            throw DeviceAuthenticationFailure(.badSignature, "the answer carries no signature")
        }

        // Bounded before any certificate is parsed.
        let sent = response.intermediateCertificate.count
        guard sent <= Self.maximumIntermediates else {
            throw DeviceAuthenticationFailure(
                .tooManyIntermediates,
                "the answer carries \(sent) intermediate certificates; a device sends one, castd takes at most \(Self.maximumIntermediates)"
            )
        }

        // The certificates: each must parse and hold a strong enough RSA key.
        let device = try Self.certificate(response.clientAuthCertificate, what: "the device certificate")
        let subject = device.subject.description
        var intermediates: [Certificate] = []
        for (index, der) in response.intermediateCertificate.enumerated() {
            intermediates.append(
                try Self.certificate(der, what: "intermediate certificate \(index + 1)", deviceCertificate: subject))
        }
        guard let deviceKey = _RSA.Signing.PublicKey(device.publicKey) else {
            throw DeviceAuthenticationFailure(
                .weakKey, "the device certificate's key is not RSA (\(device.publicKey))", deviceCertificate: subject)
        }
        for (certificate, what) in [(device, "the device certificate")]
            + intermediates.enumerated().map({ ($1, "intermediate certificate \($0 + 1)") })
        {
            try Self.checkKeySize(certificate, what: what, deviceCertificate: subject)
            try Self.checkValidity(certificate, what: what, now: now, deviceCertificate: subject)
        }
        intermediates = Self.distinctIssuers(intermediates)
        try Self.checkCancellation(deviceCertificate: subject)

        // The chain to a trusted root.
        let validation = await Self.validateChain(
            device: device, intermediates: intermediates, roots: trustedRoots.certificates, now: now)
        try Self.checkCancellation(deviceCertificate: subject)
        let chain: [Certificate]
        switch validation.result {
        case .validCertificate(let validated):
            chain = Array(validated)
        case .couldNotValidate(let failures):
            throw DeviceAuthenticationFailure(
                .untrustedChain,
                Self.untrustedChainMessage(device: device, intermediates: intermediates, failures: failures),
                deviceCertificate: subject)
        }
        guard let root = chain.last else {
            throw DeviceAuthenticationFailure(.untrustedChain, "no chain", deviceCertificate: subject)
        }

        try Self.checkDeviceCertificateUsage(device, deviceCertificate: subject)

        // The signature over nonce ‖ TLS certificate, by the device certificate's key.
        let signed = Data(nonce) + Data(tlsCertificateDER)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: response.signature)
        let valid: Bool
        switch response.hashAlgorithm {
        case .sha256:
            valid = deviceKey.isValidSignature(signature, for: SHA256.hash(data: signed), padding: .insecurePKCS1v1_5)
        case .sha1:
            valid = deviceKey.isValidSignature(
                signature, for: Insecure.SHA1.hash(data: signed), padding: .insecurePKCS1v1_5)
        }
        guard valid else {
            throw DeviceAuthenticationFailure(
                .badSignature,
                "the signature does not verify over this connection's nonce and TLS certificate with the device certificate's key",
                deviceCertificate: subject)
        }

        // Flags: SHA-1 in the signatures the chain relies on (not the root's own).
        let sha1Signed = chain.dropLast().filter { $0.signatureAlgorithm == .sha1WithRSAEncryption }
        let answeredWithSHA1 = response.hashAlgorithm == .sha1
        var notes: [String] = []
        if !sha1Signed.isEmpty {
            let which = sha1Signed.map { $0 == device ? "the device certificate" : Self.commonName($0.subject) }
            notes.append("SHA-1 signs \(which.joined(separator: " and "))")
        }
        if answeredWithSHA1 { notes.append("the answer is signed with SHA-1") }
        var outcome = DeviceAuthentication(
            state: .verified, detail: notes.joined(separator: "; "), sha1: !notes.isEmpty, deviceCertificate: subject,
            root: Self.commonName(root.subject), checkedAt: now)
        outcome.keyFingerprint = Self.fingerprint(device.publicKey)
        return outcome
    }

    /// `sha256:` and the hex SHA-256 of a public key's SubjectPublicKeyInfo (DER).
    public static func fingerprint(_ key: Certificate.PublicKey) -> String {
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(key)) != nil else { return "" }
        return "sha256:" + SHA256.hash(data: serializer.serializedBytes).map { String(format: "%02x", $0) }.joined()
    }

    /// The pinned-key check: nil when `outcome` proves the key pinned for the device (or none is
    /// pinned), else the failure.
    public static func checkPin(_ outcome: DeviceAuthentication, pinned: String?) -> DeviceAuthenticationFailure? {
        guard let pinned, outcome.state == .verified, outcome.keyFingerprint != pinned else { return nil }
        return DeviceAuthenticationFailure(
            .keyChanged,
            "the device proved another key (\(outcome.keyFingerprint.prefix(23))…) than the one castd pinned for this device id when it first authenticated (\(pinned.prefix(23))…); if the device was replaced or reset, `castc devices forget` it",
            deviceCertificate: outcome.deviceCertificate)
    }

    // MARK: bounds

    /// The intermediates without those that repeat a subject and key sent before. Two such
    /// certificates (differing only in, say, a SAN) would each be a valid parent of the other.
    /// Without repeats, a certificate's signature verifies with at most one intermediate's key
    /// among those named as its issuer, so path building never branches.
    static func distinctIssuers(_ intermediates: [Certificate]) -> [Certificate] {
        struct Issuer: Hashable {
            var subject: DistinguishedName
            var key: Certificate.PublicKey
        }
        var seen: Set<Issuer> = []
        return intermediates.filter { seen.insert(Issuer(subject: $0.subject, key: $0.publicKey)).inserted }
    }

    /// Path building from `device` through `intermediates` to one of `roots` (RFC 5280), and how
    /// many steps it took (swift-certificates' diagnostic events: a partial chain searched, the
    /// candidate issuers found, a candidate that did not sign, a chain that fails the policy).
    /// With ``distinctIssuers(_:)``, a handful per certificate of the longest path.
    static func validateChain(
        device: Certificate, intermediates: [Certificate], roots: [Certificate], now: Date
    ) async -> (result: CertificateValidationResult, steps: Int) {
        final class Steps {
            var count = 0
        }
        let steps = Steps()
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: now)
        }
        let result = await verifier.validate(leaf: device, intermediates: CertificateStore(intermediates)) { _ in
            steps.count += 1
        }
        return (result, steps.count)
    }

    static func checkCancellation(deviceCertificate: String) throws(DeviceAuthenticationFailure) {
        if Task.isCancelled {
            throw DeviceAuthenticationFailure(
                .verificationTimedOut,
                "the device's answer to the challenge could not be checked by the connect deadline",
                deviceCertificate: deviceCertificate)
        }
    }

    // MARK: the checks

    /// The AuthResponse in a DeviceAuthMessage; an AuthError or anything else fails.
    static func response(in reply: [UInt8]) throws(DeviceAuthenticationFailure) -> AuthResponse {
        let message: DeviceAuthMessage
        do {
            message = try DeviceAuthMessage(serializedBytes: reply)
        } catch {
            throw DeviceAuthenticationFailure(
                .malformedReply, "the answer to the challenge is not a DeviceAuthMessage (\(reply.count) bytes)")
        }
        if message.hasError {
            throw DeviceAuthenticationFailure(
                .authError, "the device answered the challenge with an error (\(message.error.errorType))")
        }
        guard message.hasResponse else {
            throw DeviceAuthenticationFailure(.malformedReply, "the answer to the challenge holds no AuthResponse")
        }
        return message.response
    }

    /// Valid now, and not for longer than a short-lived certificate may be.
    func checkTLSCertificate(_ der: [UInt8], now: Date) throws(DeviceAuthenticationFailure) {
        guard !der.isEmpty else {
            throw DeviceAuthenticationFailure(.noTLSCertificate, "the device presented no TLS certificate")
        }
        let notBefore: Date
        let notAfter: Date
        if let certificate = try? Certificate(derEncoded: der) {
            (notBefore, notAfter) = (certificate.notValidBefore, certificate.notValidAfter)
        } else if let outline = try? CertificateOutline(derEncoded: der) {
            // swift-certificates refuses some keys (RSA under 2048 bits) that do not matter here:
            // the TLS certificate is only read for its validity.
            (notBefore, notAfter) = (outline.notValidBefore, outline.notValidAfter)
        } else {
            throw DeviceAuthenticationFailure(.noTLSCertificate, "the device's TLS certificate cannot be read")
        }
        if now < notBefore {
            throw DeviceAuthenticationFailure(
                .tlsCertificateNotYetValid, "the TLS certificate is not valid before \(Self.format(notBefore))")
        }
        if now > notAfter {
            throw DeviceAuthenticationFailure(
                .tlsCertificateExpired, "the TLS certificate expired on \(Self.format(notAfter))")
        }
        let limit = now.addingTimeInterval(TimeInterval(maximumTLSCertificateLifetime.components.seconds))
        if notAfter > limit {
            throw DeviceAuthenticationFailure(
                .tlsCertificateTooLongLived,
                "the TLS certificate is valid until \(Self.format(notAfter)), more than \(Self.days(maximumTLSCertificateLifetime)) days from now (a device's is short-lived)"
            )
        }
    }

    /// Parses one certificate of the answer. A certificate swift-certificates refuses for its key
    /// (RSA under 2048 bits) is reported as a weak key, the rest as unreadable.
    static func certificate(
        _ der: Data, what: String, deviceCertificate: String = ""
    ) throws(DeviceAuthenticationFailure) -> Certificate {
        guard !der.isEmpty else {
            throw DeviceAuthenticationFailure(
                .unreadableCertificate, "\(what) is missing", deviceCertificate: deviceCertificate)
        }
        do {
            return try Certificate(derEncoded: Array(der))
        } catch {
            if let bits = rsaKeyBits(der), bits < minimumRSAKeyBits {
                throw DeviceAuthenticationFailure(
                    .weakKey, "\(what) has a \(bits)-bit RSA key; at least \(minimumRSAKeyBits) bits are required",
                    deviceCertificate: deviceCertificate)
            }
            throw DeviceAuthenticationFailure(
                .unreadableCertificate, "\(what) cannot be read (\(error))", deviceCertificate: deviceCertificate)
        }
    }

    /// The RSA key size of a certificate swift-certificates would not parse, read with
    /// `CertificateOutline` and swift-crypto's lenient RSA initializer; nil when it has none.
    static func rsaKeyBits(_ der: Data) -> Int? {
        guard let outline = try? CertificateOutline(derEncoded: Array(der)),
            let key = try? _RSA.Signing.PublicKey(unsafeDERRepresentation: outline.subjectPublicKeyInfo)
        else { return nil }
        return key.keySizeInBits
    }

    static func checkKeySize(
        _ certificate: Certificate, what: String, deviceCertificate: String
    ) throws(DeviceAuthenticationFailure) {
        guard let key = _RSA.Signing.PublicKey(certificate.publicKey) else { return }  // not RSA: the chain decides
        guard key.keySizeInBits >= minimumRSAKeyBits else {
            throw DeviceAuthenticationFailure(
                .weakKey,
                "\(what) has a \(key.keySizeInBits)-bit RSA key; at least \(minimumRSAKeyBits) bits are required",
                deviceCertificate: deviceCertificate)
        }
        guard key.keySizeInBits <= maximumRSAKeyBits else {
            throw DeviceAuthenticationFailure(
                .oversizedKey,
                "\(what) has a \(key.keySizeInBits)-bit RSA key; castd takes at most \(maximumRSAKeyBits) bits (Cast certificates hold 2048)",
                deviceCertificate: deviceCertificate)
        }
    }

    static func checkValidity(
        _ certificate: Certificate, what: String, now: Date, deviceCertificate: String
    ) throws(DeviceAuthenticationFailure) {
        if now < certificate.notValidBefore {
            throw DeviceAuthenticationFailure(
                .certificateNotValidNow, "\(what) is not valid before \(format(certificate.notValidBefore))",
                deviceCertificate: deviceCertificate)
        }
        if now > certificate.notValidAfter {
            throw DeviceAuthenticationFailure(
                .certificateNotValidNow, "\(what) expired on \(format(certificate.notValidAfter))",
                deviceCertificate: deviceCertificate)
        }
    }

    /// What Chromium checks of the device certificate beyond the path: it may sign
    /// (digitalSignature), it may authenticate a client when it limits its use, it has a name.
    static func checkDeviceCertificateUsage(
        _ certificate: Certificate, deviceCertificate: String
    ) throws(DeviceAuthenticationFailure) {
        func fail(_ message: String) -> DeviceAuthenticationFailure {
            DeviceAuthenticationFailure(.deviceCertificateUsage, message, deviceCertificate: deviceCertificate)
        }
        let keyUsage: KeyUsage?
        let extendedKeyUsage: ExtendedKeyUsage?
        do {
            keyUsage = try certificate.extensions.keyUsage
            extendedKeyUsage = try certificate.extensions.extendedKeyUsage
        } catch {
            throw fail("the device certificate's key usage cannot be read (\(error))")
        }
        guard let keyUsage else { throw fail("the device certificate has no key usage") }
        guard keyUsage.digitalSignature else {
            throw fail("the device certificate's key may not sign (no digitalSignature key usage)")
        }
        if let extendedKeyUsage, !extendedKeyUsage.contains(.clientAuth), !extendedKeyUsage.contains(.any) {
            throw fail("the device certificate's extended key usage does not allow client authentication")
        }
        guard commonNameIfAny(certificate.subject) != nil else {
            throw fail("the device certificate's subject has no common name")
        }
    }

    static func untrustedChainMessage(
        device: Certificate, intermediates: [Certificate], failures: [CertificateValidationResult.PolicyFailure]
    ) -> String {
        var message = "the certificate chain does not lead to a trusted root"
        if let failure = failures.first {
            return message + " (\(failure.policyFailureReason))"
        }
        let top = intermediates.last { $0.issuer != $0.subject } ?? device
        if intermediates.isEmpty {
            message +=
                " (the device sent no intermediate certificate; its certificate is issued by \(commonName(device.issuer)))"
        } else {
            message += " (issued by \(commonName(top.issuer)), which is not a trusted root)"
        }
        return message
    }

    // MARK: formatting

    /// The common name of a distinguished name, else the whole name.
    public static func commonName(_ name: DistinguishedName) -> String {
        commonNameIfAny(name) ?? name.description
    }

    static func commonNameIfAny(_ name: DistinguishedName) -> String? {
        for rdn in name {
            for attribute in rdn {
                let text = attribute.description
                if text.hasPrefix("CN=") { return String(text.dropFirst(3)) }
            }
        }
        return nil
    }

    static func format(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    static func days(_ duration: Duration) -> Int {
        Int(duration.components.seconds / 86_400)
    }

    static func hex(_ data: Data) -> String {
        data.isEmpty ? "(empty)" : data.map { String(format: "%02x", $0) }.joined()
    }
}
