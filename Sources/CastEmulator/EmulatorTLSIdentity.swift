import Crypto
import Foundation
import NIOSSL
import X509
import _CryptoExtras

/// RSA-2048 key pairs, made once per process.
///
/// Making an RSA key takes a noticeable, random time (a prime search), and a test suite starts
/// dozens of emulators. Every emulator in a process therefore signs with the same two keys, while
/// its certificates (TLS and device) are its own, made at start. A sender cannot tell from one
/// device; it could only notice that two emulated devices share a public key.
enum EmulatorKeys {
    private static let tlsKey = Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }
    private static let deviceKey = Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }
    /// For ``EmulatorImpostor/shortRSAKey``: too short for senders.
    private static let shortDeviceKey = Result {
        try _RSA.Signing.PrivateKey(unsafeKeySize: _RSA.Signing.KeySize(bitCount: 1024))
    }

    static func tls() throws -> _RSA.Signing.PrivateKey { try tlsKey.get() }
    static func device() throws -> _RSA.Signing.PrivateKey { try deviceKey.get() }
    static func shortDevice() throws -> _RSA.Signing.PrivateKey { try shortDeviceKey.get() }
}

/// The key and self-signed certificate the device's TLS servers present.
///
/// Like a real Cast device: RSA-2048, self-signed, short-lived (about two days), the device id as
/// common name. Senders do not check it at the TLS layer.
struct EmulatorTLSIdentity: Sendable {
    let certificate: NIOSSLCertificate
    let privateKey: NIOSSLPrivateKey
    /// The certificate's DER, which device authentication signs over.
    let certificateDER: [UInt8]

    static func generate(commonName: String, lifetime: Duration, now: Date = Date()) throws -> EmulatorTLSIdentity {
        // A minute of slack for a sender whose clock is slightly behind.
        try generate(
            commonName: commonName, notBefore: now.addingTimeInterval(-60),
            notAfter: now.addingTimeInterval(lifetime.seconds))
    }

    /// The identity of a device, or of an impostor whose TLS certificate is expired, not yet
    /// valid, or long-lived.
    static func generate(
        commonName: String, lifetime: Duration, impostor: EmulatorImpostor?, now: Date = Date()
    ) throws -> EmulatorTLSIdentity {
        let day: TimeInterval = 86_400
        switch impostor {
        case .expiredTLSCertificate?:
            return try generate(
                commonName: commonName, notBefore: now.addingTimeInterval(-3 * day),
                notAfter: now.addingTimeInterval(-day))
        case .futureTLSCertificate?:
            return try generate(
                commonName: commonName, notBefore: now.addingTimeInterval(day),
                notAfter: now.addingTimeInterval(3 * day))
        case .longLivedTLSCertificate?:
            return try generate(
                commonName: commonName, notBefore: now.addingTimeInterval(-60),
                notAfter: now.addingTimeInterval(365 * day))
        default:
            return try generate(commonName: commonName, lifetime: lifetime, now: now)
        }
    }

    static func generate(commonName: String, notBefore: Date, notAfter: Date) throws -> EmulatorTLSIdentity {
        do {
            let key = try EmulatorKeys.tls()
            let certificateKey = Certificate.PrivateKey(key)
            let name = try DistinguishedName { CommonName(commonName) }
            let certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: certificateKey.publicKey,
                notValidBefore: notBefore,
                notValidAfter: notAfter,
                issuer: name,
                subject: name,
                signatureAlgorithm: .sha256WithRSAEncryption,
                extensions: Certificate.Extensions(),
                issuerPrivateKey: certificateKey
            )
            let der = try certificate.serializeAsPEM().derBytes
            return EmulatorTLSIdentity(
                certificate: try NIOSSLCertificate(bytes: der, format: .der),
                privateKey: try NIOSSLPrivateKey(bytes: Array(key.pkcs8DERRepresentation), format: .der),
                certificateDER: der
            )
        } catch {
            throw EmulatorError(.certificate, "cannot make the TLS certificate", cause: error)
        }
    }

    func makeServerContext() throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificate)],
            privateKey: .privateKey(privateKey)
        )
        configuration.minimumTLSVersion = .tlsv12
        return try NIOSSLContext(configuration: configuration)
    }
}
