import CastTestSupport
import CastProtocol
import Foundation
import Testing
import X509
import _CryptoExtras

@testable import CastSenderLink

/// CertificateOutline reads validity and key from certificates swift-certificates refuses, in
/// place of BoringSSL (NIOSSLCertificate), which stops the process on some of them.
@Suite(.tags(.cpuBound)) struct CertificateOutlineTests {
    /// DeviceAuthFuzzer, Fuzz/Corpus/DeviceAuthFuzzer/finding-unusable-rsa-key: an answer whose
    /// intermediate certificate names a key algorithm nobody knows (1.2.840.113549.1.1.1.5.0).
    /// swift-certificates refuses it; BoringSSL's certificate parser takes it, and reading its key
    /// size through NIOSSLCertificate.extractPublicKey() stopped castd ("Failed to extract a
    /// public key reference"). Now the certificate is refused as unreadable.
    @Test func anIntermediateWithAnUnknownKeyAlgorithmIsRefusedAsUnreadable() throws {
        let corpus = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/DeviceAuthFuzzer/finding-unusable-rsa-key")
        let message = try DeviceAuthMessage(serializedBytes: try Data(contentsOf: corpus))
        let der = try #require(message.response.intermediateCertificate.first)
        #expect(throws: (any Error).self) { try Certificate(derEncoded: Array(der)) }

        let outline = try CertificateOutline(derEncoded: Array(der))
        #expect(outline.notValidBefore == Date(timeIntervalSince1970: 1_577_836_800))  // 2020-01-01
        #expect(outline.notValidAfter == Date(timeIntervalSince1970: 2_366_841_600))  // 2045-01-01
        #expect(DeviceAuthenticator.rsaKeyBits(der) == nil)
        #expect {
            _ = try DeviceAuthenticator.certificate(der, what: "intermediate certificate 1")
        } throws: { error in
            let failure = error as? DeviceAuthenticationFailure
            return failure?.check == .unreadableCertificate
                && failure?.message.hasPrefix("intermediate certificate 1 cannot be read") == true
        }
    }

    /// What swift-certificates reads of a certificate it takes, the outline reads alike; and of a
    /// 1024-bit one it refuses, the outline still has the key, so its size can be named.
    @Test func readsWhatSwiftCertificatesReads() throws {
        for key in [AuthScenario.Keys.device, AuthScenario.Keys.short] {
            let name = try DistinguishedName { CommonName("outline") }
            let notBefore = Date(timeIntervalSince1970: 1_700_000_000)
            let notAfter = Date(timeIntervalSince1970: 4_102_444_800 + 86_400 * 366)  // 2101: GeneralizedTime
            let certificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
                notValidBefore: notBefore, notValidAfter: notAfter, issuer: name, subject: name,
                signatureAlgorithm: .sha256WithRSAEncryption, extensions: Certificate.Extensions(),
                issuerPrivateKey: .init(AuthScenario.Keys.root))
            let der = try certificate.serializeAsPEM().derBytes
            let outline = try CertificateOutline(derEncoded: der)
            #expect(outline.notValidBefore == notBefore)
            #expect(outline.notValidAfter == notAfter)
            #expect(outline.subjectPublicKeyInfo == key.publicKey.derRepresentation.map { $0 })
            #expect(DeviceAuthenticator.rsaKeyBits(Data(der)) == key.keySizeInBits)
        }
    }

    @Test func malformedCertificatesThrow() throws {
        let der = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(AuthScenario.Keys.device.publicKey),
            notValidBefore: Date(timeIntervalSince1970: 0), notValidAfter: Date(timeIntervalSince1970: 1e9),
            issuer: DistinguishedName { CommonName("x") }, subject: DistinguishedName { CommonName("x") },
            signatureAlgorithm: .sha256WithRSAEncryption, extensions: Certificate.Extensions(),
            issuerPrivateKey: .init(AuthScenario.Keys.root)
        ).serializeAsPEM().derBytes
        for cut in [0, 1, 4, 40, der.count / 2, der.count - 1] {
            #expect(throws: (any Error).self, "cut at \(cut)") {
                try CertificateOutline(derEncoded: Array(der[..<cut]))
            }
        }
        #expect(throws: (any Error).self) { try CertificateOutline(derEncoded: [0x30, 0x03, 0x02, 0x01, 0x01]) }
    }

    @Test(arguments: [
        (1970, 1, 1, 0), (2000, 3, 1, 11_017), (2024, 2, 29, 19_782), (1969, 12, 31, -1), (2101, 1, 1, 47_847),
    ])
    func daysFromCivil(year: Int, month: Int, day: Int, days: Int) {
        #expect(CertificateOutline.daysFromCivil(year: year, month: month, day: day) == days)
    }
}
