import Foundation
import SwiftASN1

/// The few fields of an X.509 certificate that device authentication needs from a certificate
/// swift-certificates will not take (it refuses RSA keys under 2048 bits, for one): its validity
/// and its public key. Read by walking the DER with SwiftASN1, which throws on anything malformed.
///
/// This replaces reading such certificates with BoringSSL through NIOSSLCertificate, which stops
/// the process instead of throwing for some certificates BoringSSL parses (no usable public key,
/// an unreadable time): a device must not be able to crash castd with what it presents.
struct CertificateOutline: Equatable {
    var notValidBefore: Date
    var notValidAfter: Date
    /// The DER of the SubjectPublicKeyInfo.
    var subjectPublicKeyInfo: [UInt8]

    /// Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }
    /// TBSCertificate ::= SEQUENCE { [0] version OPTIONAL, serialNumber, signature, issuer,
    ///   validity SEQUENCE { notBefore, notAfter }, subject, subjectPublicKeyInfo, … }
    init(derEncoded der: [UInt8]) throws {
        let root = try DER.parse(der)
        self = try DER.sequence(root, identifier: .sequence) { certificate in
            guard let tbs = certificate.next() else { throw Self.malformed("no tbsCertificate") }
            while certificate.next() != nil {}
            return try DER.sequence(tbs, identifier: .sequence) { fields in
                _ = try DER.optionalExplicitlyTagged(&fields, tagNumber: 0, tagClass: .contextSpecific) { $0 }
                for field in ["serial number", "signature algorithm", "issuer"] {
                    guard fields.next() != nil else { throw Self.malformed("no \(field)") }
                }
                guard let validity = fields.next() else { throw Self.malformed("no validity") }
                let (notBefore, notAfter) = try DER.sequence(validity, identifier: .sequence) { times in
                    guard let notBefore = times.next(), let notAfter = times.next(), times.next() == nil else {
                        throw Self.malformed("validity is not two times")
                    }
                    return (try Self.time(notBefore), try Self.time(notAfter))
                }
                guard fields.next() != nil else { throw Self.malformed("no subject") }
                guard let key = fields.next(), key.identifier == .sequence else {
                    throw Self.malformed("no subjectPublicKeyInfo")
                }
                while fields.next() != nil {}
                return CertificateOutline(
                    notValidBefore: notBefore, notValidAfter: notAfter, subjectPublicKeyInfo: Array(key.encodedBytes))
            }
        }
    }

    private init(notValidBefore: Date, notValidAfter: Date, subjectPublicKeyInfo: [UInt8]) {
        self.notValidBefore = notValidBefore
        self.notValidAfter = notValidAfter
        self.subjectPublicKeyInfo = subjectPublicKeyInfo
    }

    private static func malformed(_ what: String) -> ASN1Error {
        ASN1Error.invalidASN1Object(reason: "certificate: \(what)")
    }

    /// Time ::= CHOICE { utcTime, generalTime }, as UTC.
    private static func time(_ node: ASN1Node) throws -> Date {
        let parts: (year: Int, month: Int, day: Int, hours: Int, minutes: Int, seconds: Double)
        switch node.identifier {
        case UTCTime.defaultIdentifier:
            let time = try UTCTime(derEncoded: node)
            parts = (time.year, time.month, time.day, time.hours, time.minutes, Double(time.seconds))
        case GeneralizedTime.defaultIdentifier:
            let time = try GeneralizedTime(derEncoded: node)
            parts = (
                time.year, time.month, time.day, time.hours, time.minutes,
                Double(time.seconds) + time.fractionalSeconds
            )
        default:
            throw malformed("a validity time is neither UTCTime nor GeneralizedTime")
        }
        let days = daysFromCivil(year: parts.year, month: parts.month, day: parts.day)
        let seconds = Double(days) * 86_400 + Double(parts.hours * 3600 + parts.minutes * 60) + parts.seconds
        return Date(timeIntervalSince1970: seconds)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    /// SwiftASN1 has already checked the date's ranges.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
