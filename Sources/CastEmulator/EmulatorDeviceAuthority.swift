import CastProtocol
import Crypto
import Foundation
#if canImport(Glibc)
    import Glibc
#endif
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
    let intermediateKey: Certificate.PrivateKey

    /// The root a sender must trust, PEM-encoded.
    public let rootCertificatePEM: String
    /// The root a sender must trust, DER-encoded.
    public let rootCertificateDER: [UInt8]
    /// The intermediate that issues device certificates, DER-encoded (senders get it in every
    /// AuthResponse).
    public let intermediateCertificateDER: [UInt8]

    /// Makes a new root and intermediate, RSA-2048 like the real Cast hierarchy.
    public static func generate(
        name: String = "Cast Emulator Root CA", now: Date = Date()
    ) throws -> EmulatorDeviceAuthority {
        let keys: (Certificate.PrivateKey, Certificate.PrivateKey)
        do {
            keys = (
                Certificate.PrivateKey(try _RSA.Signing.PrivateKey(keySize: .bits2048)),
                Certificate.PrivateKey(try _RSA.Signing.PrivateKey(keySize: .bits2048))
            )
        } catch {
            throw EmulatorError(.certificate, "cannot make the device authentication keys", cause: error)
        }
        return try generate(name: name, rootKey: keys.0, intermediateKey: keys.1, now: now)
    }

    static func generate(
        name: String, rootKey: Certificate.PrivateKey, intermediateKey: Certificate.PrivateKey, now: Date = Date()
    ) throws -> EmulatorDeviceAuthority {
        do {
            let rootName = try DistinguishedName {
                OrganizationName("castd cast-emulator")
                CommonName(name)
            }
            let root = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: rootKey.publicKey,
                notValidBefore: now.addingTimeInterval(-86_400),
                notValidAfter: now.addingTimeInterval(20 * 365 * 86_400),
                issuer: rootName,
                subject: rootName,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 1))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                },
                issuerPrivateKey: rootKey
            )
            let intermediateName = try DistinguishedName {
                OrganizationName("castd cast-emulator")
                CommonName(name + " Intermediate")
            }
            let intermediate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: intermediateKey.publicKey,
                notValidBefore: now.addingTimeInterval(-86_400),
                notValidAfter: now.addingTimeInterval(10 * 365 * 86_400),
                issuer: rootName,
                subject: intermediateName,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                },
                issuerPrivateKey: rootKey
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

    private static let strangerAuthority = Result {
        try generate(
            name: "Impostor Root CA", rootKey: Certificate.PrivateKey(P256.Signing.PrivateKey()),
            intermediateKey: Certificate.PrivateKey(P256.Signing.PrivateKey()))
    }

    /// An authority no sender trusts: its root is made for this process and never written.
    /// ``EmulatorImpostor/untrustedRoot`` devices chain to it. Its keys are P-256, made at once
    /// (an RSA key takes a while to make, and what matters here is only that nobody trusts it).
    static func stranger() throws -> EmulatorDeviceAuthority {
        try strangerAuthority.get()
    }

    /// A device certificate for one emulated device: its key signs the challenges. An impostor
    /// gets the flaw it is named for (the key, validity, key usage, issuer or intermediates).
    func issueDeviceCredentials(
        commonName: String, impostor: EmulatorImpostor? = nil, now: Date = Date()
    ) throws -> EmulatorDeviceCredentials {
        if impostor == .untrustedRoot {
            var credentials = try EmulatorDeviceAuthority.stranger().issueDeviceCredentials(
                commonName: commonName, now: now)
            credentials.impostor = impostor
            return credentials
        }
        do {
            let key = impostor == .shortRSAKey ? try EmulatorKeys.shortDevice() : try EmulatorKeys.device()
            let validity =
                impostor == .expiredDeviceCertificate
                ? (now.addingTimeInterval(-2 * 365 * 86_400), now.addingTimeInterval(-86_400))
                : (now.addingTimeInterval(-86_400), now.addingTimeInterval(365 * 86_400))
            let usage =
                impostor == .noDigitalSignature ? KeyUsage(keyEncipherment: true) : KeyUsage(digitalSignature: true)
            let certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: Certificate.PrivateKey(key).publicKey,
                notValidBefore: validity.0,
                notValidAfter: validity.1,
                issuer: intermediateCertificate.subject,
                subject: try DistinguishedName { CommonName(commonName) },
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(usage)
                    try ExtendedKeyUsage([.clientAuth])
                },
                issuerPrivateKey: intermediateKey
            )
            return EmulatorDeviceCredentials(
                key: key,
                certificateDER: try certificate.serializeAsPEM().derBytes,
                intermediatesDER: impostor == .noIntermediate ? [] : [intermediateCertificateDER],
                impostor: impostor
            )
        } catch {
            throw EmulatorError(.certificate, "cannot make the device certificate", cause: error)
        }
    }
}

// MARK: sharing one authority between processes

extension EmulatorDeviceAuthority {
    /// What `authority.json` holds: the root and the intermediate with its key, PEM-encoded.
    private struct Stored: Codable {
        var root: String
        var intermediate: String
        var intermediateKey: String
    }

    /// The authority kept in `directory`, so that several emulator processes (and the senders
    /// that trust them) share one root: `directory/authority.json` is read if it exists, else
    /// made and written. `directory/root.pem` is (re)written with the root, for
    /// `castd --trust-root`.
    ///
    /// Emulators starting at once agree on one authority: a new one is written to a temporary
    /// file and hard-linked into place, which fails if another process got there first; the
    /// loser reads the winner's. Nobody ever sees a half-written file.
    public static func loadOrCreate(directory: String) throws -> EmulatorDeviceAuthority {
        let fileManager = FileManager.default
        let bundlePath = directory + "/authority.json"
        let authority: EmulatorDeviceAuthority
        do {
            try fileManager.createDirectory(atPath: directory, withIntermediateDirectories: true)
            if let existing = try read(bundlePath) {
                authority = existing
            } else {
                let made = try generate()
                let temporary = directory + "/.authority-\(UInt64.random(in: 0...UInt64.max)).json"
                try made.stored().write(to: URL(fileURLWithPath: temporary))
                defer { try? fileManager.removeItem(atPath: temporary) }
                _ = chmod(temporary, 0o600)
                if link(temporary, bundlePath) == 0 {
                    authority = made
                } else if errno == EEXIST, let winner = try read(bundlePath) {
                    authority = winner
                } else {
                    throw EmulatorError(.certificate, "cannot write \(bundlePath): \(String(cString: strerror(errno)))")
                }
            }
            try authority.writeRoot(to: directory + "/root.pem")
        } catch let error as EmulatorError {
            throw error
        } catch {
            throw EmulatorError(.certificate, "cannot use the device authority in \(directory)", cause: error)
        }
        return authority
    }

    /// Writes the root (PEM) that senders must trust, atomically.
    public func writeRoot(to path: String) throws {
        try Data(rootCertificatePEM.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    private func stored() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(
            Stored(
                root: rootCertificatePEM, intermediate: try intermediateCertificate.serializeAsPEM().pemString,
                intermediateKey: try intermediateKey.serializeAsPEM().pemString))
    }

    private static func read(_ path: String) throws -> EmulatorDeviceAuthority? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            let stored = try JSONDecoder().decode(Stored.self, from: data)
            let root = try Certificate(pemEncoded: stored.root)
            let intermediate = try Certificate(pemEncoded: stored.intermediate)
            return EmulatorDeviceAuthority(
                rootCertificate: root,
                intermediateCertificate: intermediate,
                intermediateKey: try Certificate.PrivateKey(pemEncoded: stored.intermediateKey),
                rootCertificatePEM: stored.root,
                rootCertificateDER: try root.serializeAsPEM().derBytes,
                intermediateCertificateDER: try intermediate.serializeAsPEM().derBytes
            )
        } catch {
            throw EmulatorError(
                .certificate, "\(path) is not a device authority written by cast-emulator", cause: error)
        }
    }
}

/// One device's answer to `tp.deviceauth` challenges.
struct EmulatorDeviceCredentials: Sendable {
    let key: _RSA.Signing.PrivateKey
    let certificateDER: [UInt8]
    let intermediatesDER: [[UInt8]]
    /// How the answers are wrong, if they are.
    var impostor: EmulatorImpostor?
    /// ``EmulatorImpostor/signatureOverOtherCertificate``: the certificate signed instead of the
    /// connection's.
    var otherTLSCertificateDER: [UInt8] = []

    /// The reply to a DeviceAuthMessage, serialized: an AuthResponse signing
    /// `nonce ‖ TLS certificate` (SHA-1 unless SHA-256 is asked for, PKCS#1 v1.5), or an AuthError.
    /// nil: no reply (``EmulatorImpostor/noReply``).
    func reply(to request: Data, tlsCertificateDER: [UInt8]) -> [UInt8]? {
        switch impostor {
        case .noReply?: return nil
        case .garbageReply?: return [0xFF, 0xFF, 0xFF, 0xFF]
        default: break
        }
        var reply = DeviceAuthMessage()
        func refusal(_ type: AuthError.ErrorType) -> [UInt8]? {
            reply.error.errorType = type
            return try? reply.serializedBytes()
        }
        if impostor == .authError { return refusal(.internalError) }
        guard let message = try? DeviceAuthMessage(serializedBytes: request), message.hasChallenge else {
            return refusal(.internalError)
        }
        let challenge = message.challenge
        guard challenge.signatureAlgorithm != .rsassaPss else { return refusal(.signatureAlgorithmUnavailable) }
        var nonce = challenge.senderNonce
        if impostor == .wrongNonce {
            nonce = nonce.isEmpty ? Data([1]) : Data(nonce.map { $0 ^ 0x5A })
        }
        let signedCertificate = impostor == .signatureOverOtherCertificate ? otherTLSCertificateDER : tlsCertificateDER
        let hash: AuthHashAlgorithm = impostor == .sha1 ? .sha1 : challenge.hashAlgorithm
        let signed = nonce + Data(signedCertificate)
        let signature: _RSA.Signing.RSASignature
        do {
            switch hash {
            case .sha256:
                signature = try key.signature(for: SHA256.hash(data: signed), padding: .insecurePKCS1v1_5)
            case .sha1:
                signature = try key.signature(for: Insecure.SHA1.hash(data: signed), padding: .insecurePKCS1v1_5)
            }
        } catch {
            return refusal(.internalError)
        }
        var response = AuthResponse()
        response.signature = signature.rawRepresentation
        response.clientAuthCertificate = Data(certificateDER)
        response.intermediateCertificate = intermediatesDER.map { Data($0) }
        response.signatureAlgorithm = .rsassaPkcs1V15
        response.senderNonce = nonce
        response.hashAlgorithm = hash
        reply.response = response
        return try? reply.serializedBytes()
    }
}
