import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import Logging
import Testing

@testable import CastSenderLink

/// Device authentication on real links to cast-emulator: the genuine device is verified, every
/// impostor is refused for what it got wrong, and `.warn` lets impostors through, unverified.
@Suite struct DeviceAuthenticationLinkTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The check each impostor must fail.
    static let expectedCheck: [EmulatorImpostor: DeviceAuthenticationFailure.Check] = [
        .untrustedRoot: .untrustedChain,
        .wrongNonce: .nonceMismatch,
        .signatureOverOtherCertificate: .badSignature,
        .expiredTLSCertificate: .tlsCertificateExpired,
        .futureTLSCertificate: .tlsCertificateNotYetValid,
        .longLivedTLSCertificate: .tlsCertificateTooLongLived,
        .shortRSAKey: .weakKey,
        .sha1: .hashDowngrade,
        .noIntermediate: .untrustedChain,
        .expiredDeviceCertificate: .certificateNotValidNow,
        .noDigitalSignature: .deviceCertificateUsage,
        .authError: .authError,
        .garbageReply: .malformedReply,
        .noReply: .noReply,
    ]

    /// Trusts this process's emulators (with a deadline for a busy test process), except that a
    /// device that never answers gets Chromium's 10 s, scaled for a slow build like every test
    /// deadline: its outcome is the deadline passing, and the TLS handshake before it must fit.
    static func configuration(
        _ policy: DeviceAuthenticationPolicy = .require, for impostor: EmulatorImpostor? = nil
    ) -> CastLinkConfiguration {
        var configuration = CastLinkConfiguration.trustingEmulators(policy: policy)
        if impostor == .noReply { configuration.connectTimeout = Duration.seconds(10).scaledForTests }
        return configuration
    }

    /// Connects to an emulator that is `impostor` (nil: genuine). Returns the link's outcome
    /// after a GET_STATUS went through, or the error that ended the attempt.
    func attempt(
        _ impostor: EmulatorImpostor?, configuration: CastLinkConfiguration? = nil
    ) async throws -> Result<DeviceAuthentication?, CastLinkError> {
        let configuration = configuration ?? Self.configuration(for: impostor)
        var emulatorConfiguration = EmulatorConfiguration()
        emulatorConfiguration.impostor = impostor
        return try await withEmulator(emulatorConfiguration) { _, endpoints in
            do {
                return .success(
                    try await CastLink.withConnection(
                        host: endpoints.host, port: endpoints.port, configuration: configuration, logger: logger
                    ) { link in
                        try await link.connect(to: CastWire.platformReceiverID)
                        _ = try await link.request(
                            namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
                        ) {
                            ReceiverRequest.getStatus(requestID: $0)
                        }
                        return link.authentication
                    })
            } catch let error as CastLinkError {
                return .failure(error)
            }
        }
    }

    @Test func theGenuineEmulatorIsVerifiedAndTheChallengeComesFirst() async throws {
        try await withTemporaryDirectory { directory in
            var emulatorConfiguration = EmulatorConfiguration()
            emulatorConfiguration.logFile = directory + "/messages.jsonl"
            try await withEmulator(emulatorConfiguration) { emulator, endpoints in
                let outcome = try await CastLink.withConnection(
                    host: endpoints.host, port: endpoints.port, configuration: Self.configuration(), logger: logger
                ) { link in
                    try await link.connect(to: CastWire.platformReceiverID)
                    _ = try await link.request(
                        namespace: CastNamespace.receiver, destination: CastWire.platformReceiverID
                    ) {
                        ReceiverRequest.getStatus(requestID: $0)
                    }
                    return try #require(link.authentication)
                }
                #expect(outcome.state == .verified)
                #expect(outcome.root == "Cast Emulator Root CA")
                #expect(outcome.deviceCertificate == "CN=\(emulator.configuration.deviceID)")
                #expect(!outcome.sha1)

                // What the device received: the challenge first (binary, 16-byte nonce, SHA-256,
                // PKCS#1 v1.5, to receiver-0), then the CONNECT. Heartbeats may come any time (a
                // PING after 5 s of silence): they are not counted.
                let received = try String(contentsOfFile: directory + "/messages.jsonl", encoding: .utf8)
                    .split(separator: "\n").map { try JSONValue.parse(String($0)) }
                    .filter { $0["direction"] == "in" && $0["namespace"]?.stringValue != CastNamespace.heartbeat }
                let first = try #require(received.first)
                #expect(first["namespace"]?.stringValue == CastNamespace.deviceAuth)
                #expect(first["destination"]?.stringValue == CastWire.platformReceiverID)
                let bytes = try #require(Data(base64Encoded: first["payload"]?["binary"]?.stringValue ?? ""))
                let challenge = try DeviceAuthMessage(serializedBytes: bytes).challenge
                #expect(challenge.senderNonce.count == 16)
                #expect(challenge.hasHashAlgorithm && challenge.hashAlgorithm == .sha256)
                #expect(challenge.signatureAlgorithm == .rsassaPkcs1V15)
                #expect(received.dropFirst().first?["payload"]?["type"] == "CONNECT")
            }
        }
    }

    @Test func byDefaultOnlyGooglesRootsAreTrusted() async throws {
        // The emulator's root is not a Cast root: a link with the default authentication
        // settings refuses it. (The test suite's deadlines otherwise: the device's silence
        // counted against an unscaled 10 s closed the link first in a loaded sanitized run.)
        var configuration = CastLinkConfiguration.trustingEmulators()
        configuration.authentication = CastLinkConfiguration().authentication
        let result = try await attempt(nil, configuration: configuration)
        guard case .failure(let error) = result else {
            Issue.record("an emulator was accepted with only Google's roots trusted")
            return
        }
        #expect(error.code == .authenticationFailed)
        #expect(error.authentication?.failure?.check == .untrustedChain)
        #expect(configuration.authentication.trustedRoots == .cast)
        #expect(configuration.authentication.policy == .require)
    }

    @Test(arguments: EmulatorImpostor.allCases)
    func everyImpostorIsRefusedForWhatItGotWrong(_ impostor: EmulatorImpostor) async throws {
        let result = try await attempt(impostor)
        guard case .failure(let error) = result else {
            Issue.record("\(impostor.rawValue) was accepted")
            return
        }
        #expect(error.code == .authenticationFailed, "\(error)")
        #expect(error.message.hasPrefix("device authentication failed: "))
        let outcome = try #require(error.authentication)
        #expect(outcome.state == .refused)
        #expect(outcome.failure?.check == Self.expectedCheck[impostor], "\(impostor.rawValue): \(error.message)")
        #expect(!outcome.detail.isEmpty && error.message.hasSuffix(outcome.detail))
    }

    @Test(arguments: [EmulatorImpostor.untrustedRoot, .wrongNonce, .noReply])
    func warnLetsAnImpostorThroughUnverified(_ impostor: EmulatorImpostor) async throws {
        let outcome = try await attempt(impostor, configuration: Self.configuration(.warn, for: impostor)).get()
        #expect(outcome?.state == .unverified)
        #expect(outcome?.failure?.check == Self.expectedCheck[impostor])
        #expect(outcome?.detail.isEmpty == false)
    }

    /// Tries every impostor variant and counts the refusals: the figure the feature is judged by.
    @Test func allImpostorVariantsAreRefused() async throws {
        var refused: [EmulatorImpostor] = []
        var accepted: [EmulatorImpostor] = []
        for impostor in EmulatorImpostor.allCases {
            if case .failure(let error) = try await attempt(impostor), error.code == .authenticationFailed {
                refused.append(impostor)
            } else {
                accepted.append(impostor)
            }
        }
        let tried = EmulatorImpostor.allCases.count
        print("device authentication: \(refused.count) refused of \(tried) impostor variants tried")
        #expect(refused.count == tried, "accepted: \(accepted.map(\.rawValue))")
        // And the genuine device, tried the same way, is not.
        #expect(try await attempt(nil).get()?.state == .verified)
    }
}
