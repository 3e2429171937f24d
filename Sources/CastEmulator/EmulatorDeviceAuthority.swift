import CastProtocol
import Crypto
import Foundation
import X509
import _CryptoExtras

/// The certificate authority behind emulated devices' CastV2 device authentication.
///
/// Real devices prove they are genuine by answering the sender's `AuthChallenge` with a device
/// certificate that chains to Google's Cast roots, and a signature over the sender's nonce and
/// the device's TLS certificate. An emulator cannot chain to Google's roots, so it has its own:
/// a root and an intermediate, RSA-2048, like the real hierarchy. A sender that is told to trust
/// ``rootCertificatePEM`` authenticates emulated devices exactly as it authenticates real ones.
///
/// Unless ``EmulatorConfiguration/deviceAuthority`` says otherwise, every emulator in a process
/// shares ``shared()``.
public struct EmulatorDeviceAuthority: Sendable {
    let rootCertificate: Certificate
    let intermediateCertificate: Certificate
    let intermediateKey: _RSA.Signing.PrivateKey

    /// The root a sender must trust, PEM-encoded.
    public let rootCertificatePEM: String
    /// The root a sender must trust, DER-encoded.
    public let rootCertificateDER: [UInt8]
    /// The intermediate that issues device certificates, DER-encoded (senders get it in every
    /// AuthResponse).
    public let intermediateCertificateDER: [UInt8]

    /// Makes a new root and intermediate.
    public static func generate(
        name: String = "Cast Emulator Root CA", now: Date = Date()
    ) throws -> EmulatorDeviceAuthority {
        do {
            let rootKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let rootName = try DistinguishedName {
                OrganizationName("castd cast-emulator")
                CommonName(name)
            }
            let root = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: Certificate.PrivateKey(rootKey).publicKey,
                notValidBefore: now.addingTimeInterval(-86_400),
                notValidAfter: now.addingTimeInterval(20 * 365 * 86_400),
                issuer: rootName,
                subject: rootName,
                signatureAlgorithm: .sha256WithRSAEncryption,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 1))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                },
                issuerPrivateKey: Certificate.PrivateKey(rootKey)
            )
            let intermediateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let intermediateName = try DistinguishedName {
                OrganizationName("castd cast-emulator")
                CommonName(name + " Intermediate")
            }
            let intermediate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: Certificate.PrivateKey(intermediateKey).publicKey,
                notValidBefore: now.addingTimeInterval(-86_400),
                notValidAfter: now.addingTimeInterval(10 * 365 * 86_400),
                issuer: rootName,
                subject: intermediateName,
                signatureAlgorithm: .sha256WithRSAEncryption,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                },
                issuerPrivateKey: Certificate.PrivateKey(rootKey)
            )
            let rootPEM = try root.serializeAsPEM()
            return EmulatorDeviceAuthority(
                rootCertificate: root,
                intermediateCertificate: intermediate,
                intermediateKey: intermediateKey,
                rootCertificatePEM: rootPEM.pemString,
                rootCertificateDER: rootPEM.derBytes,
                intermediateCertificateDER: try intermediate.serializeAsPEM().derBytes
            )
        } catch {
            throw EmulatorError(.certificate, "cannot make the device authentication certificates", cause: error)
        }
    }

    private static let sharedAuthority = Result { try generate() }

    /// The authority every emulator in this process uses unless configured otherwise, made on
    /// first use.
    public static func shared() throws -> EmulatorDeviceAuthority {
        try sharedAuthority.get()
    }

    /// A device certificate for one emulated device: its key signs the challenges.
    func issueDeviceCredentials(commonName: String, now: Date = Date()) throws -> EmulatorDeviceCredentials {
        do {
            let key = try EmulatorKeys.device()
            let certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: Certificate.PrivateKey(key).publicKey,
                notValidBefore: now.addingTimeInterval(-86_400),
                notValidAfter: now.addingTimeInterval(365 * 86_400),
                issuer: intermediateCertificate.subject,
                subject: try DistinguishedName { CommonName(commonName) },
                signatureAlgorithm: .sha256WithRSAEncryption,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([.clientAuth])
                },
                issuerPrivateKey: Certificate.PrivateKey(intermediateKey)
            )
            return EmulatorDeviceCredentials(
                key: key,
                certificateDER: try certificate.serializeAsPEM().derBytes,
                intermediatesDER: [intermediateCertificateDER]
            )
        } catch {
            throw EmulatorError(.certificate, "cannot make the device certificate", cause: error)
        }
    }
}

/// One device's answer to `tp.deviceauth` challenges.
struct EmulatorDeviceCredentials: Sendable {
    let key: _RSA.Signing.PrivateKey
    let certificateDER: [UInt8]
    let intermediatesDER: [[UInt8]]

    /// The reply to a DeviceAuthMessage: an AuthResponse signing `nonce ‖ TLS certificate`
    /// (SHA-1 unless SHA-256 is asked for, PKCS#1 v1.5), or an AuthError.
    func reply(to request: Data, tlsCertificateDER: [UInt8]) -> DeviceAuthMessage {
        var reply = DeviceAuthMessage()
        guard let message = try? DeviceAuthMessage(serializedBytes: request), message.hasChallenge else {
            reply.error.errorType = .internalError
            return reply
        }
        let challenge = message.challenge
        guard challenge.signatureAlgorithm != .rsassaPss else {
            reply.error.errorType = .signatureAlgorithmUnavailable
            return reply
        }
        let signed = challenge.senderNonce + Data(tlsCertificateDER)
        let signature: _RSA.Signing.RSASignature
        do {
            switch challenge.hashAlgorithm {
            case .sha256:
                signature = try key.signature(for: SHA256.hash(data: signed), padding: .insecurePKCS1v1_5)
            case .sha1:
                signature = try key.signature(for: Insecure.SHA1.hash(data: signed), padding: .insecurePKCS1v1_5)
            }
        } catch {
            reply.error.errorType = .internalError
            return reply
        }
        var response = AuthResponse()
        response.signature = signature.rawRepresentation
        response.clientAuthCertificate = Data(certificateDER)
        response.intermediateCertificate = intermediatesDER.map { Data($0) }
        response.signatureAlgorithm = .rsassaPkcs1V15
        response.senderNonce = challenge.senderNonce
        response.hashAlgorithm = challenge.hashAlgorithm
        reply.response = response
        return reply
    }
}
