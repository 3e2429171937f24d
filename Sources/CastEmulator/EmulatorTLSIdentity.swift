import Crypto
import Foundation
import NIOSSL
import X509
import _CryptoExtras

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
        do {
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let certificateKey = Certificate.PrivateKey(key)
            let name = try DistinguishedName { CommonName(commonName) }
            let certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: certificateKey.publicKey,
                // A minute of slack for a sender whose clock is slightly behind.
                notValidBefore: now.addingTimeInterval(-60),
                notValidAfter: now.addingTimeInterval(lifetime.seconds),
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
