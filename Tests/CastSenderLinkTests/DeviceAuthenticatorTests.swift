import CastProtocol
import CastTestSupport
import Crypto
import Foundation
import Testing
import X509
import _CryptoExtras

@testable import CastSenderLink

/// A device's answer to an AuthChallenge, built piece by piece so that each test breaks one thing.
struct AuthScenario {
    /// Keys are made once per test process: RSA key generation takes a while.
    enum Keys {
        static let root = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
        static let intermediate = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
        static let device = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
        static let other = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
        static let short = try! _RSA.Signing.PrivateKey(unsafeKeySize: _RSA.Signing.KeySize(bitCount: 1024))
        static let tls = P256.Signing.PrivateKey()
    }

    static let day: TimeInterval = 86_400

    let now = Date()
    var nonce: [UInt8] = DeviceAuthenticator.makeNonce()
    var rootName = "Test Root CA"

    var intermediateKey: Certificate.PrivateKey = .init(Keys.intermediate)
    var intermediateIsCA = true
    lazy var intermediateValidity = (now - 365 * Self.day, now + 365 * Self.day)
    var sendIntermediate = true
    /// Sent after the intermediate (or in its place).
    var extraIntermediates: [Data] = []

    var deviceKey: Certificate.PrivateKey = .init(Keys.device)
    var deviceSubject = try! DistinguishedName { CommonName("device-1") }
    var deviceSignatureAlgorithm: Certificate.SignatureAlgorithm = .sha256WithRSAEncryption
    lazy var deviceValidity = (now - Self.day, now + 365 * Self.day)
    var deviceKeyUsage: KeyUsage? = KeyUsage(digitalSignature: true)
    var deviceExtendedKeyUsage: [ExtendedKeyUsage.Usage]? = [.clientAuth]
    /// Replaces the device certificate's DER (garbage).
    var deviceCertificateDER: [UInt8]?

    lazy var tlsValidity = (now - 60, now + 2 * Self.day)
    var presentTLSCertificate = true

    /// The answer.
    var signingKey: _RSA.Signing.PrivateKey = Keys.device
    var hash: AuthHashAlgorithm = .sha256
    var signatureAlgorithm: Extensions_Api_CastChannel_SignatureAlgorithm? = .rsassaPkcs1V15
    var echoedNonce: [UInt8]??  // nil: the nonce; .some(nil): no echo; .some(x): x
    var signedNonce: [UInt8]?
    var signedTLSCertificateDER: [UInt8]?
    var emptySignature = false

    var rootNameDN: DistinguishedName { try! DistinguishedName { CommonName(rootName) } }
    var intermediateName: DistinguishedName { try! DistinguishedName { CommonName("Test Intermediate") } }

    mutating func root() -> Certificate {
        try! Certificate(
            version: .v3, serialNumber: .init(), publicKey: Certificate.PrivateKey(Keys.root).publicKey,
            notValidBefore: now - 3650 * Self.day, notValidAfter: now + 3650 * Self.day,
            issuer: rootNameDN, subject: rootNameDN, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try! Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(Keys.root))
    }

    mutating func intermediate() -> Certificate {
        let isCA = intermediateIsCA
        return try! Certificate(
            version: .v3, serialNumber: .init(), publicKey: intermediateKey.publicKey,
            notValidBefore: intermediateValidity.0, notValidAfter: intermediateValidity.1,
            issuer: rootNameDN, subject: intermediateName, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try! Certificate.Extensions {
                Critical(
                    isCA
                        ? BasicConstraints.isCertificateAuthority(maxPathLength: 0)
                        : BasicConstraints.notCertificateAuthority)
            },
            issuerPrivateKey: Certificate.PrivateKey(Keys.root))
    }

    mutating func device() -> [UInt8] {
        if let deviceCertificateDER { return deviceCertificateDER }
        let usage = deviceKeyUsage
        let extended = deviceExtendedKeyUsage
        let certificate = try! Certificate(
            version: .v3, serialNumber: .init(), publicKey: deviceKey.publicKey,
            notValidBefore: deviceValidity.0, notValidAfter: deviceValidity.1,
            issuer: intermediateName, subject: deviceSubject, signatureAlgorithm: deviceSignatureAlgorithm,
            extensions: try! Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                if let usage { Critical(usage) }
                if let extended { try ExtendedKeyUsage(extended) }
            },
            issuerPrivateKey: intermediateKey)
        return try! certificate.serializeAsPEM().derBytes
    }

    mutating func tlsCertificate() -> [UInt8] {
        guard presentTLSCertificate else { return [] }
        let name = try! DistinguishedName { CommonName("device-1") }
        let certificate = try! Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(Keys.tls.publicKey),
            notValidBefore: tlsValidity.0, notValidAfter: tlsValidity.1, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: Certificate.Extensions(),
            issuerPrivateKey: .init(Keys.tls))
        return try! certificate.serializeAsPEM().derBytes
    }

    /// The answer's bytes and the TLS certificate they go with.
    mutating func answer() -> (reply: [UInt8], tls: [UInt8]) {
        let tls = tlsCertificate()
        var response = AuthResponse()
        response.clientAuthCertificate = Data(device())
        if sendIntermediate { response.intermediateCertificate = [Data(try! intermediate().serializeAsPEM().derBytes)] }
        response.intermediateCertificate += extraIntermediates
        if let signatureAlgorithm { response.signatureAlgorithm = signatureAlgorithm }
        response.hashAlgorithm = hash
        switch echoedNonce {
        case nil: response.senderNonce = Data(nonce)
        case .some(nil): break
        case .some(.some(let other)): response.senderNonce = Data(other)
        }
        let signed = Data(signedNonce ?? nonce) + Data(signedTLSCertificateDER ?? tls)
        let signature =
            hash == .sha256
            ? try! signingKey.signature(for: SHA256.hash(data: signed), padding: .insecurePKCS1v1_5)
            : try! signingKey.signature(for: Insecure.SHA1.hash(data: signed), padding: .insecurePKCS1v1_5)
        // Present but empty: the field is required, a message without it does not parse.
        response.signature = emptySignature ? Data() : signature.rawRepresentation
        var message = DeviceAuthMessage()
        message.response = response
        return (try! message.serializedBytes(), tls)
    }

    /// Verifies the answer against the scenario's root (or `roots`).
    mutating func verify(
        roots: CastTrustRoots? = nil, requestedHash: AuthHashAlgorithm = .sha256, reply: [UInt8]? = nil
    ) async -> Result<DeviceAuthentication, DeviceAuthenticationFailure> {
        let trusted = roots ?? CastTrustRoots([root()])
        let (answer, tls) = self.answer()
        do {
            return .success(
                try await DeviceAuthenticator(trustedRoots: trusted).verify(
                    reply: reply ?? answer, nonce: nonce, requestedHash: requestedHash, tlsCertificateDER: tls,
                    now: now))
        } catch {
            return .failure(error)
        }
    }

    /// The failure, or nil if the answer was accepted.
    mutating func failure(roots: CastTrustRoots? = nil, reply: [UInt8]? = nil) async -> DeviceAuthenticationFailure? {
        if case .failure(let failure) = await verify(roots: roots, reply: reply) { return failure }
        return nil
    }
}

/// The verifier, one check at a time: each test breaks exactly one thing of a genuine answer.
@Suite(.tags(.cpuBound)) struct DeviceAuthenticatorTests {
    @Test func genuineAnswerIsVerifiedAndNamesRootAndDevice() async throws {
        var scenario = AuthScenario()
        let outcome = try await scenario.verify().get()
        #expect(outcome.state == .verified)
        #expect(outcome.root == "Test Root CA")
        #expect(outcome.deviceCertificate == "CN=device-1")
        #expect(!outcome.sha1 && outcome.detail.isEmpty)
        #expect(outcome.checkedAt == scenario.now)
    }

    @Test func anAnswerThatEchoesNoNonceIsCheckedAgainstTheNonceSent() async throws {
        var scenario = AuthScenario()
        scenario.echoedNonce = .some(nil)
        #expect(try await scenario.verify().get().state == .verified)
        // Without an echo the signature must still cover the nonce sent.
        scenario.signedNonce = DeviceAuthenticator.makeNonce()
        #expect(await scenario.failure()?.check == .badSignature)
    }

    @Test func sha1InTheChainIsAcceptedButFlagged() async throws {
        var scenario = AuthScenario()
        scenario.deviceSignatureAlgorithm = .sha1WithRSAEncryption
        let outcome = try await scenario.verify().get()
        #expect(outcome.state == .verified)
        #expect(outcome.sha1)
        #expect(outcome.detail.contains("SHA-1 signs the device certificate"), "\(outcome.detail)")
    }

    @Test func sha1AnswerWhenSHA1WasAskedIsAcceptedButFlagged() async throws {
        var scenario = AuthScenario()
        scenario.hash = .sha1
        let outcome = try await scenario.verify(requestedHash: .sha1).get()
        #expect(outcome.state == .verified && outcome.sha1)
    }

    @Test func sha1AnswerWhenSHA256WasAskedIsADowngrade() async throws {
        var scenario = AuthScenario()
        scenario.hash = .sha1
        let failure = await scenario.failure()
        #expect(failure?.check == .hashDowngrade)
        #expect(failure?.message.contains("SHA-1") == true)
    }

    @Test func pssIsNotAccepted() async {
        var scenario = AuthScenario()
        scenario.signatureAlgorithm = .rsassaPss
        #expect(await scenario.failure()?.check == .unsupportedSignatureAlgorithm)
    }

    @Test func authErrorGarbageAndEmptyAnswersFailWithWhatTheyWere() async throws {
        var scenario = AuthScenario()
        var error = DeviceAuthMessage()
        error.error.errorType = .signatureAlgorithmUnavailable
        let refused = await scenario.failure(reply: try error.serializedBytes())
        #expect(refused?.check == .authError)
        #expect(refused?.message.contains("signatureAlgorithmUnavailable") == true, "\(String(describing: refused))")
        #expect(await scenario.failure(reply: [0xFF, 0xFF, 0xFF])?.check == .malformedReply)
        let empty: [UInt8] = try DeviceAuthMessage().serializedBytes()
        #expect(await scenario.failure(reply: empty)?.check == .malformedReply)
    }

    @Test func anotherNonceIsAnAnswerToAnotherChallenge() async {
        var scenario = AuthScenario()
        let other = DeviceAuthenticator.makeNonce()
        scenario.echoedNonce = .some(other)
        scenario.signedNonce = other
        let failure = await scenario.failure()
        #expect(failure?.check == .nonceMismatch)
        #expect(failure?.message.contains("another challenge") == true)
    }

    @Test func aChainToAnotherRootIsUntrusted() async {
        var scenario = AuthScenario()
        var stranger = AuthScenario()
        stranger.rootName = "Other Root CA"
        let failure = await scenario.failure(roots: CastTrustRoots([stranger.root()]))
        #expect(failure?.check == .untrustedChain)
        #expect(failure?.message.contains("does not lead to a trusted root") == true)
        #expect(
            failure?.message.contains("Test Root CA") == true,
            "names the unknown issuer: \(String(describing: failure))")
        #expect(failure?.deviceCertificate == "CN=device-1")
        // Google's roots do not vouch for it either.
        #expect(await scenario.failure(roots: .cast)?.check == .untrustedChain)
    }

    @Test func aMissingIntermediateLeavesNoChain() async {
        var scenario = AuthScenario()
        scenario.sendIntermediate = false
        let failure = await scenario.failure()
        #expect(failure?.check == .untrustedChain)
        #expect(failure?.message.contains("no intermediate") == true, "\(String(describing: failure))")
    }

    @Test func anIntermediateThatIsNoCALeavesNoChain() async {
        var scenario = AuthScenario()
        scenario.intermediateIsCA = false
        #expect(await scenario.failure()?.check == .untrustedChain)
    }

    @Test func aSignatureOverAnotherCertificateOrByAnotherKeyFails() async {
        var scenario = AuthScenario()
        var other = AuthScenario()
        other.tlsValidity = (other.now - 120, other.now + AuthScenario.day)
        scenario.signedTLSCertificateDER = other.tlsCertificate()
        #expect(await scenario.failure()?.check == .badSignature)

        var foreign = AuthScenario()
        foreign.signingKey = AuthScenario.Keys.other
        #expect(await foreign.failure()?.check == .badSignature)

        var empty = AuthScenario()
        empty.emptySignature = true
        #expect(await empty.failure()?.check == .badSignature)
    }

    @Test func shortRSAKeysAreRefusedWithTheirSize() async {
        var device = AuthScenario()
        device.deviceKey = .init(AuthScenario.Keys.short)
        device.signingKey = AuthScenario.Keys.short
        let failure = await device.failure()
        #expect(failure?.check == .weakKey)
        #expect(
            failure?.message.contains("the device certificate has a 1024-bit RSA key") == true,
            "\(String(describing: failure))")

        var intermediate = AuthScenario()
        intermediate.intermediateKey = .init(AuthScenario.Keys.short)
        let intermediateFailure = await intermediate.failure()
        #expect(intermediateFailure?.check == .weakKey)
        #expect(intermediateFailure?.message.contains("intermediate certificate 1 has a 1024-bit") == true)
    }

    @Test func aDeviceKeyThatIsNotRSAIsRefused() async {
        var scenario = AuthScenario()
        scenario.deviceKey = .init(P256.Signing.PrivateKey())
        let failure = await scenario.failure()
        #expect(failure?.check == .weakKey)
        #expect(failure?.message.contains("not RSA") == true)
    }

    @Test func certificatesMustBeValidNow() async {
        var expired = AuthScenario()
        expired.deviceValidity = (expired.now - 30 * AuthScenario.day, expired.now - AuthScenario.day)
        let failure = await expired.failure()
        #expect(failure?.check == .certificateNotValidNow)
        #expect(failure?.message.contains("the device certificate expired on") == true)

        var early = AuthScenario()
        early.intermediateValidity = (early.now + AuthScenario.day, early.now + 30 * AuthScenario.day)
        let earlyFailure = await early.failure()
        #expect(earlyFailure?.check == .certificateNotValidNow)
        #expect(earlyFailure?.message.contains("intermediate certificate 1 is not valid before") == true)
    }

    @Test func theDeviceCertificateMustBeAllowedToSignForAClientAndHaveAName() async {
        var noSigning = AuthScenario()
        noSigning.deviceKeyUsage = KeyUsage(keyEncipherment: true)
        #expect(await noSigning.failure()?.check == .deviceCertificateUsage)

        var noUsage = AuthScenario()
        noUsage.deviceKeyUsage = nil
        #expect(await noUsage.failure()?.check == .deviceCertificateUsage)

        var serverOnly = AuthScenario()
        serverOnly.deviceExtendedKeyUsage = [.serverAuth]
        #expect(await serverOnly.failure()?.check == .deviceCertificateUsage)

        var anyUsage = AuthScenario()
        anyUsage.deviceExtendedKeyUsage = nil
        #expect(await anyUsage.failure() == nil, "no extended key usage limits nothing")

        var nameless = AuthScenario()
        nameless.deviceSubject = try! DistinguishedName { OrganizationName("Nameless") }
        #expect(await nameless.failure()?.check == .deviceCertificateUsage)
    }

    @Test func unreadableCertificatesFail() async {
        var scenario = AuthScenario()
        scenario.deviceCertificateDER = [0x30, 0x03, 0x02, 0x01, 0x01]
        #expect(await scenario.failure()?.check == .unreadableCertificate)
    }

    @Test func theTLSCertificateMustBeValidNowAndShortLived() async {
        var expired = AuthScenario()
        expired.tlsValidity = (expired.now - 3 * AuthScenario.day, expired.now - AuthScenario.day)
        #expect(await expired.failure()?.check == .tlsCertificateExpired)

        var future = AuthScenario()
        future.tlsValidity = (future.now + AuthScenario.day, future.now + 2 * AuthScenario.day)
        #expect(await future.failure()?.check == .tlsCertificateNotYetValid)

        var longLived = AuthScenario()
        longLived.tlsValidity = (longLived.now - 60, longLived.now + 4 * AuthScenario.day + 3600)
        let failure = await longLived.failure()
        #expect(failure?.check == .tlsCertificateTooLongLived)
        #expect(failure?.message.contains("4 days") == true)

        // Chromium's limit counts from now, not from notBefore: a certificate issued long ago
        // that expires within 4 days is fine.
        var old = AuthScenario()
        old.tlsValidity = (old.now - 30 * AuthScenario.day, old.now + 4 * AuthScenario.day - 3600)
        #expect(await old.failure() == nil)

        var none = AuthScenario()
        none.presentTLSCertificate = false
        #expect(await none.failure()?.check == .noTLSCertificate)
    }
}

/// Google's Cast roots as castd ships them, and trust roots read from PEM.
@Suite(.tags(.cpuBound)) struct CastTrustRootsTests {
    static func fingerprint(_ certificate: Certificate) throws -> String {
        SHA256.hash(data: try certificate.serializeAsPEM().derBytes).map { String(format: "%02X", $0) }.joined(
            separator: ":")
    }

    @Test func theCastRootsAreGooglesTwoRoots() throws {
        let roots = CastTrustRoots.cast.certificates
        #expect(roots.count == 2)
        #expect(CastTrustRoots.cast.names == ["Cast Root CA", "Eureka Root CA"])
        // The fingerprints Chromium's copies have; a changed byte changes them.
        #expect(
            try roots.map(Self.fingerprint) == [
                "80:9A:F1:47:00:B3:FE:26:11:AD:59:7E:B1:58:4D:63:54:31:3B:64:CC:DB:33:90:F0:97:FA:3E:58:26:D6:CA",
                "CA:F6:D1:E3:7B:53:22:03:E0:1A:76:BF:07:18:7B:B7:31:CC:D3:88:01:56:5A:B2:21:1A:2C:0A:B7:F3:BC:46",
            ])
        for root in roots {
            // Self-signed, and the signature holds.
            #expect(root.issuer == root.subject)
            #expect(root.publicKey.isValidSignature(root.signature, for: root))
        }
    }

    @Test func pemFilesWithSeveralCertificatesAreRead() throws {
        var one = AuthScenario()
        var two = AuthScenario()
        two.rootName = "Second Root"
        let first = one.root()
        let pem = try first.serializeAsPEM().pemString + "\n" + two.root().serializeAsPEM().pemString + "\n"
        let roots = try CastTrustRoots(pem: pem)
        #expect(roots.names == ["Test Root CA", "Second Root"])
        // Lines of another length than 64, and CRLF, as some tools write them.
        let der = try first.serializeAsPEM().derBytes
        let wide = Data(der).base64EncodedString(options: [
            .lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed,
        ])
        let reformatted = try CastTrustRoots(
            pem: "-----BEGIN CERTIFICATE-----\r\n\(wide)\r\n-----END CERTIFICATE-----\r\n")
        #expect(reformatted.certificates == [first])
        #expect(CastTrustRoots.cast.adding(roots).adding(roots).certificates.count == 4)
    }

    @Test func unusableFilesAreRefusedNamingTheFileAndTheProblem() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func refusal(_ contents: String?) -> String? {
            let path = directory.appendingPathComponent("root-\(UUID().uuidString).pem").path
            if let contents { _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8)) }
            do {
                _ = try CastTrustRoots(contentsOfFile: path)
                return nil
            } catch {
                #expect("\(error)".hasPrefix(path), "the error names the file: \(error)")
                return "\(error)"
            }
        }
        #expect(refusal(nil)?.contains("cannot be read") == true)
        #expect(refusal("hello")?.contains("no PEM certificate") == true)
        let key = AuthScenario.Keys.short.pemRepresentation
        #expect(refusal(key)?.contains("not a CERTIFICATE") == true)
        #expect(
            refusal("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")?.contains("cannot be read")
                == true)
    }
}
