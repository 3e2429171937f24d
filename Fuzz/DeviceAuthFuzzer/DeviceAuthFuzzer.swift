import CastSenderLink
import CastProtocol
import Dispatch
import Foundation
import FuzzSupport
import SwiftProtobuf
import X509

// The device-authentication verifier (DeviceAuthenticator.verify): the bytes are the binary
// payload of a device's tp.deviceauth answer, checked against a fixed nonce, TLS certificate and
// trusted root (Fixture.swift, made by make-fixture.py) at a fixed time, so that the seed answers
// verify in every run.
//
// Properties: nothing but a DeviceAuthenticationFailure is thrown; a verified answer names the
// device certificate and the fixture's root, echoes the nonce (or none), is PKCS#1 v1.5, and is
// flagged when it is signed with SHA-1.

let authenticator = DeviceAuthenticator(
    trustedRoots: CastTrustRoots([try! Certificate(derEncoded: Fixture.rootDER)]))

/// The verifier's outcome, handed from its task to the fuzzer's thread; the semaphore orders the
/// write before the read.
final class Outcome: @unchecked Sendable {
    var result: Result<DeviceAuthentication, DeviceAuthenticationFailure>?
}

func verify(_ bytes: [UInt8]) -> Result<DeviceAuthentication, DeviceAuthenticationFailure> {
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    Task {
        do throws(DeviceAuthenticationFailure) {
            outcome.result = .success(
                try await authenticator.verify(
                    reply: bytes, nonce: Fixture.nonce, requestedHash: .sha256,
                    tlsCertificateDER: Fixture.tlsCertificateDER, now: Fixture.now))
        } catch {
            outcome.result = .failure(error)
        }
        done.signal()
    }
    done.wait()
    return outcome.result!
}

func fuzzOne(_ bytes: [UInt8]) {
    switch verify(bytes) {
    case .success(let authentication):
        fuzzRequire(authentication.state == .verified, "verify returned \(authentication.state)")
        fuzzRequire(!authentication.deviceCertificate.isEmpty, "verified without a device certificate subject")
        fuzzRequire(authentication.root == "castd fuzz root", "verified against root '\(authentication.root)'")
        let response = try? DeviceAuthMessage(serializedBytes: bytes).response
        fuzzRequire(response != nil, "verified an answer that does not parse")
        if let response {
            fuzzRequire(
                !response.hasSenderNonce || response.senderNonce == Data(Fixture.nonce), "verified another nonce")
            fuzzRequire(response.signatureAlgorithm == .rsassaPkcs1V15, "verified \(response.signatureAlgorithm)")
            fuzzRequire(response.hashAlgorithm != .sha1 || authentication.sha1, "a SHA-1 answer was not flagged")
        }
    case .failure(let failure):
        fuzzRequire(!failure.message.isEmpty, "a failure without a message (\(failure.check))")
    }
}

@main
enum Main {
    static func main() {
        fuzzOrReplay(name: "DeviceAuthFuzzer", fuzzOne)
    }
}
