import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A certificate authority of a test's own, and the TLS identities of servers it vouches for:
/// for testing a client's certificate checks (trust, host names, addresses) with real
/// handshakes. P-256 keys, made in microseconds.
public struct TestCertificateAuthority: Sendable {
    private let key = P256.Signing.PrivateKey()
    private let name: DistinguishedName
    /// The authority's certificate, for a client to trust.
    public let root: NIOSSLCertificate

    public init(name: String = "castd test CA") throws {
        self.name = try DistinguishedName { CommonName(name) }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-60), notValidAfter: now.addingTimeInterval(3600),
            issuer: self.name, subject: self.name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(key))
        root = try NIOSSLCertificate(bytes: try certificate.serializeAsPEM().derBytes, format: .der)
    }

    /// A server configuration whose certificate, issued by this authority, names `dnsNames`
    /// and the IPv4 `addresses` (`[127, 0, 0, 1]`).
    public func serverConfiguration(dnsNames: [String], addresses: [[UInt8]] = []) throws -> TLSConfiguration {
        let serverKey = P256.Signing.PrivateKey()
        let now = Date()
        let names =
            dnsNames.map { GeneralName.dnsName($0) }
            + addresses.map { .ipAddress(ASN1OctetString(contentBytes: $0[...])) }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now.addingTimeInterval(-60), notValidAfter: now.addingTimeInterval(3600),
            issuer: name, subject: try DistinguishedName { CommonName(dnsNames.first ?? "server") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            },
            issuerPrivateKey: .init(key))
        return TLSConfiguration.makeServerConfiguration(
            certificateChain: [
                .certificate(try NIOSSLCertificate(bytes: try certificate.serializeAsPEM().derBytes, format: .der))
            ],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(serverKey.derRepresentation), format: .der)))
    }
}
