import Foundation
import X509

/// The trust anchors of CastV2 device authentication.
///
/// A genuine Cast device's certificate chains to one of Google's two Cast roots ("Cast Root CA"
/// and, for the first Chromecasts, "Eureka Root CA"). castd ships both; `castd --trust-root`
/// adds others (the root of `cast-emulator`, a developer's own device CA).
public struct CastTrustRoots: Sendable, Equatable {
    public var certificates: [Certificate]

    public init(_ certificates: [Certificate]) {
        self.certificates = certificates
    }

    /// Google's Cast roots: what a sender trusts unless told otherwise.
    public static let cast = CastTrustRoots(CastRootCertificates.all)

    /// Each root's common name (else its subject), for logs.
    public var names: [String] { certificates.map { DeviceAuthenticator.commonName($0.subject) } }

    /// These roots and `other`'s (duplicates dropped).
    public func adding(_ other: CastTrustRoots) -> CastTrustRoots {
        var merged = certificates
        for certificate in other.certificates where !merged.contains(certificate) { merged.append(certificate) }
        return CastTrustRoots(merged)
    }

    /// Every certificate of a PEM text (at least one). Other PEM blocks (a key, say) are refused,
    /// so that a wrong file is noticed rather than half used.
    public init(pem: String) throws {
        let blocks = Self.pemBlocks(pem)
        guard !blocks.isEmpty else { throw CastTrustRootsError("holds no PEM certificate") }
        var certificates: [Certificate] = []
        for (index, block) in blocks.enumerated() {
            guard block.label == "CERTIFICATE" else {
                throw CastTrustRootsError("block \(index + 1) is a \(block.label), not a CERTIFICATE")
            }
            // The base64 body, whatever its line length (swift-asn1's PEM reader wants 64).
            let armored = block.text.replacingOccurrences(of: "-----BEGIN CERTIFICATE-----", with: "")
                .replacingOccurrences(of: "-----END CERTIFICATE-----", with: "")
            let body = String(armored.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) })
            guard let der = Data(base64Encoded: body) else {
                throw CastTrustRootsError("certificate \(index + 1) is not valid base64")
            }
            do {
                certificates.append(try Certificate(derEncoded: Array(der)))
            } catch {
                throw CastTrustRootsError("certificate \(index + 1) cannot be read (\(error))")
            }
        }
        self.init(certificates)
    }

    /// The `-----BEGIN X-----` … `-----END X-----` blocks of a text, in order, with their label.
    /// An unterminated block counts, as a block that will not parse.
    static func pemBlocks(_ text: String) -> [(label: String, text: String)] {
        var blocks: [(label: String, text: String)] = []
        var rest = text[...]
        while let begin = rest.range(of: "-----BEGIN ") {
            guard let labelEnd = rest[begin.upperBound...].range(of: "-----") else {
                blocks.append(("?", String(rest[begin.lowerBound...])))
                break
            }
            let label = String(rest[begin.upperBound..<labelEnd.lowerBound])
            let endMarker = "-----END \(label)-----"
            guard let end = rest[labelEnd.upperBound...].range(of: endMarker) else {
                blocks.append((label, String(rest[begin.lowerBound...])))
                break
            }
            blocks.append((label, String(rest[begin.lowerBound..<end.upperBound])))
            rest = rest[end.upperBound...]
        }
        return blocks
    }

    /// The certificates of a PEM file; errors name the file.
    public init(contentsOfFile path: String) throws {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw CastTrustRootsError("\(path): cannot be read (\(error.localizedDescription))")
        }
        do {
            try self.init(pem: text)
        } catch let error as CastTrustRootsError {
            throw CastTrustRootsError("\(path): \(error.message)")
        }
    }
}

/// A trust root that cannot be used, and why.
public struct CastTrustRootsError: Error, Sendable, CustomStringConvertible {
    public var message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Google's Cast root certificates, as Chromium and openscreen embed them
/// (`components/cast_certificate/*_der-inc.h`, `cast/common/certificate/*_der-inc.h`). Public
/// trust anchors: data, not secrets. Both are self-signed RSA-2048 with SHA-1 signatures (a root's
/// own signature is never relied upon, so that does not flag a chain).
///
/// - Cast Root CA: C=US, ST=California, L=Mountain View, O=Google Inc, OU=Cast; valid 2014-04-02
///   to 2034-03-28; SHA-256 fingerprint
///   80:9A:F1:47:00:B3:FE:26:11:AD:59:7E:B1:58:4D:63:54:31:3B:64:CC:DB:33:90:F0:97:FA:3E:58:26:D6:CA
/// - Eureka Root CA: C=US, ST=California, L=Mountain View, O=Google Inc, OU=Google TV; valid
///   2012-12-17 to 2032-12-12; SHA-256 fingerprint
///   CA:F6:D1:E3:7B:53:22:03:E0:1A:76:BF:07:18:7B:B7:31:CC:D3:88:01:56:5A:B2:21:1A:2C:0A:B7:F3:BC:46
enum CastRootCertificates {
    static let castRootCAPEM = """
        -----BEGIN CERTIFICATE-----
        MIIDxTCCAq2gAwIBAgIBAjANBgkqhkiG9w0BAQUFADB1MQswCQYDVQQGEwJVUzET
        MBEGA1UECAwKQ2FsaWZvcm5pYTEWMBQGA1UEBwwNTW91bnRhaW4gVmlldzETMBEG
        A1UECgwKR29vZ2xlIEluYzENMAsGA1UECwwEQ2FzdDEVMBMGA1UEAwwMQ2FzdCBS
        b290IENBMB4XDTE0MDQwMjE3MzQyNloXDTM0MDMyODE3MzQyNlowdTELMAkGA1UE
        BhMCVVMxEzARBgNVBAgMCkNhbGlmb3JuaWExFjAUBgNVBAcMDU1vdW50YWluIFZp
        ZXcxEzARBgNVBAoMCkdvb2dsZSBJbmMxDTALBgNVBAsMBENhc3QxFTATBgNVBAMM
        DENhc3QgUm9vdCBDQTCCASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBALrZ
        ZZ3aOdPBd/bU0K6PWAhoOUqV7XDP/XkIqarl6binLaBnR4qeyc9wswWHaRHscJiX
        w+bDw+u9xrA9/E/BXjif2s9zMAZbeTfBXoyHR5SaQZIq1pXEcVwnXQixgMaSvRvj
        QZeh7HWfVZ4+n48cx2VkB9OzlqEEn5HE3gp7bNnIwHgxoBlCqeiD48788c7CLiRG
        lQkZysBGsuUButdP87/2aa2ZBPqgBzkO5t9RRwfA5KlcS5TFL7OgMH/nlWuyrzIN
        8YzVbct7R6cIq8sno03PSlrxBdH4YsUQKnRpquZLlvub2GPkWGbTrYpu/3te+aVW
        Hi2CMVvw4iTmQUofrhMCAwEAAaNgMF4wDwYDVR0TBAgwBgEB/wIBAjAdBgNVHQ4E
        FgQUfJoefd95VLzXzF7KmYZFeWV0KBkwHwYDVR0jBBgwFoAUfJoefd95VLzXzF7K
        mYZFeWV0KBkwCwYDVR0PBAQDAgEGMA0GCSqGSIb3DQEBBQUAA4IBAQCA9Fr7PSgZ
        USDX1PsSl0pl8lg1kncwavHXtlEaf5rNx3sDQq1VagCv8OEGwr1reHXb/kERU0o5
        u5o6xlk0Lywz47LWXH/deOtxWznag5DFMeI/I+/a6ystd17ew0PSyWtZgsrV7fqh
        ZFvL8Q0aYuGc6KcYcPBfF5b47Ybbrh3gzz5dLu4WbZUrPP2X8wVaJGhNObb45Fi6
        9eAmeFHFW11OCeVsR4t6Wi6JU+bMNlsmPPhyQwKC0ivN8NOj7BM+UtWDPQfcHUNl
        ejMCAaPOt9ZgUTsJwiOKMv6YGWBik4XNNEbb1SMPedp3ACoCbYNYzgN3NeGjIJPC
        SqKkRhx1LB9N
        -----END CERTIFICATE-----
        """

    static let eurekaRootCAPEM = """
        -----BEGIN CERTIFICATE-----
        MIIDwzCCAqugAwIBAgIBATANBgkqhkiG9w0BAQUFADB8MQswCQYDVQQGEwJVUzET
        MBEGA1UECAwKQ2FsaWZvcm5pYTEWMBQGA1UEBwwNTW91bnRhaW4gVmlldzETMBEG
        A1UECgwKR29vZ2xlIEluYzESMBAGA1UECwwJR29vZ2xlIFRWMRcwFQYDVQQDDA5F
        dXJla2EgUm9vdCBDQTAeFw0xMjEyMTcyMjM5MzNaFw0zMjEyMTIyMjM5MzNaMHwx
        CzAJBgNVBAYTAlVTMRMwEQYDVQQIDApDYWxpZm9ybmlhMRYwFAYDVQQHDA1Nb3Vu
        dGFpbiBWaWV3MRMwEQYDVQQKDApHb29nbGUgSW5jMRIwEAYDVQQLDAlHb29nbGUg
        VFYxFzAVBgNVBAMMDkV1cmVrYSBSb290IENBMIIBIjANBgkqhkiG9w0BAQEFAAOC
        AQ8AMIIBCgKCAQEAuRHQ6hLcMuHfXDNrGXMdnZ7QOXa/pYQJpv1ubencjzZO6YgC
        vZ/06ET9TPWaAlZqRypjbFhFzHxmJNx5ecMqpLKLoPeitc0Gftu+7AyG8g0kYHSE
        yikjhALYp+078ewmR1TjsS3mZA/2csXpmFIXwPzyLCDIQPhHyTKeO5exi/WYJHBj
        ZhnBUugEBT1fjbzYS693mG8feNG2UCdN5OwUaWcfWK+poBEmPJQyB3/X6Wkfrj9P
        Y4qPidbyGXhcIY6xtlfYwOHufW7d8ToKavG6//mDL9y1pCAXYzbvyGIZzFbOsuox
        iUt4WMG/AxOZ4BLyiKqblNrddnkXHjTRCsQHRQIDAQABo1AwTjAdBgNVHQ4EFgQU
        RE4qR1jYuUiR9k/OdKkdMpqNjekwHwYDVR0jBBgwFoAURE4qR1jYuUiR9k/OdKkd
        MpqNjekwDAYDVR0TBAUwAwEB/zANBgkqhkiG9w0BAQUFAAOCAQEAP8gmoG5cBUB5
        oZipM95odIXurrccM1mwEd6f9E/T61EJfUd+blGF9FTNg5glsbqwV+yT2xLi7FFJ
        epZzm8iWbYWM0+E8+jLiWAx3bYcMNAGqMKl24MDn214b6RAwpOAJSSa5WM1aB+VQ
        dd6aO/ZTfrFTXkUnTxfjCDOyUAq79PwllyneQXUw+nc4qmWKc0/qEXvrfBdgJw68
        PnZS2IvtGvjrN7sR/a5wFwr+4K0Gsx9pinIEwsAzC9YvY0wzERS4YjaIxQNlARmj
        7wC7bw6S/zQcodYx0Fxen5l9x8q9fHIL9Fylfm4EqNKZLFEBFP6iSPB+voQNtNPi
        8w593ov1Mw==
        -----END CERTIFICATE-----
        """

    /// Parsed once; a failure here is a corrupted source file, which the tests catch.
    static let all: [Certificate] = [castRootCAPEM, eurekaRootCAPEM].compactMap { try? Certificate(pemEncoded: $0) }
}
