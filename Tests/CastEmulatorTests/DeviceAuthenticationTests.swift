import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import Testing

/// Device authentication, checked with an independent verifier: the `openssl` command.
@Suite("Device authentication (tp.deviceauth)")
struct DeviceAuthenticationTests {
    /// Runs openssl; returns its exit status and output. Waits without blocking a thread of the
    /// cooperative pool.
    @discardableResult
    static func openssl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let result = try await CastTestSupport.run("/usr/bin/openssl", arguments)
        return (result.status, result.stdout + result.stderr)
    }

    static func pem(_ der: Data) -> String {
        let base64 = der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
    }

    @Test(
        "An AuthChallenge gets a device certificate chaining to the emulator's root and a signature over nonce ‖ TLS certificate",
        arguments: [Extensions_Api_CastChannel_HashAlgorithm.sha256, .sha1]
    )
    func challenge(hash: Extensions_Api_CastChannel_HashAlgorithm) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cast-auth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func file(_ name: String, _ contents: Data) throws -> String {
            let url = directory.appendingPathComponent(name)
            try contents.write(to: url)
            return url.path
        }

        try await withEmulator { emulator, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            let nonce = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
            var challenge = DeviceAuthMessage()
            challenge.challenge.senderNonce = nonce
            if hash == .sha256 { challenge.challenge.hashAlgorithm = .sha256 }  // absent means SHA-1
            let challengeBytes: [UInt8] = try challenge.serializedBytes()
            // Before any CONNECT, as senders do it.
            try await sender.send(
                .binary(
                    source: sender.sourceID, destination: "receiver-0", namespace: CastNamespace.deviceAuth,
                    bytes: Data(challengeBytes))
            )
            let message = try await sender.next()
            #expect(message.namespace == CastNamespace.deviceAuth)
            #expect(message.sourceID == "receiver-0")
            #expect(message.destinationID == sender.sourceID)
            #expect(message.payloadType == .binary)
            let reply = try DeviceAuthMessage(serializedBytes: message.payloadBinary)
            #expect(!reply.hasError)
            let response = reply.response
            #expect(response.senderNonce == nonce)
            #expect(response.hashAlgorithm == hash)
            #expect(response.signatureAlgorithm == .rsassaPkcs1V15)
            #expect(response.intermediateCertificate.count == 1)

            let root = try file("root.pem", Data(try emulator.deviceAuthority().rootCertificatePEM.utf8))
            let intermediate = try file("intermediate.pem", Data(Self.pem(response.intermediateCertificate[0]).utf8))
            let device = try file("device.pem", Data(Self.pem(response.clientAuthCertificate).utf8))
            let verify = try await Self.openssl([
                "verify", "-CAfile", root, "-untrusted", intermediate, "-purpose", "sslclient", device,
            ])
            #expect(verify.status == 0, "\(verify.output)")
            let subject = try await Self.openssl(["x509", "-in", device, "-noout", "-subject"])
            #expect(subject.output.contains(emulator.configuration.deviceID))

            let publicKey = try await Self.openssl(["x509", "-in", device, "-noout", "-pubkey"]).output
            let keyFile = try file("device.pub", Data(publicKey.utf8))
            let tlsCertificate = try await sender.peerCertificateDER()
            let signedData = try file("signed.bin", nonce + Data(tlsCertificate))
            let signature = try file("signature.bin", response.signature)
            let digest = hash == .sha256 ? "-sha256" : "-sha1"
            let check = try await Self.openssl([
                "dgst", digest, "-verify", keyFile, "-signature", signature, signedData,
            ])
            #expect(check.status == 0, "\(check.output)")

            // The TLS certificate is short-lived, as senders require (at most four days).
            let tls = try file("tls.pem", Data(Self.pem(Data(tlsCertificate)).utf8))
            #expect(try await Self.openssl(["x509", "-in", tls, "-noout", "-checkend", "\(4 * 86_400)"]).status != 0)
            #expect(try await Self.openssl(["x509", "-in", tls, "-noout", "-checkend", "3600"]).status == 0)
            #expect(try await Self.openssl(["x509", "-in", tls, "-noout", "-text"]).output.contains("2048 bit"))

            // The link goes on as usual afterwards.
            try await sender.connect()
            try await sender.receiver(["type": "GET_STATUS", "requestId": 1])
            #expect(try await sender.reply(to: 1)["type"] == "RECEIVER_STATUS")
        }
    }

    @Test("A challenge asking for RSASSA-PSS gets an AuthError; garbage gets INTERNAL_ERROR; the link stays")
    func refusals() async throws {
        try await withEmulator { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints)
            var pss = DeviceAuthMessage()
            pss.challenge.signatureAlgorithm = .rsassaPss
            let pssBytes: [UInt8] = try pss.serializedBytes()
            try await sender.send(
                .binary(
                    source: sender.sourceID, destination: "receiver-0", namespace: CastNamespace.deviceAuth,
                    bytes: Data(pssBytes))
            )
            let refused = try DeviceAuthMessage(serializedBytes: try await sender.next().payloadBinary)
            #expect(refused.error.errorType == .signatureAlgorithmUnavailable)

            try await sender.send(
                .binary(
                    source: sender.sourceID, destination: "receiver-0", namespace: CastNamespace.deviceAuth,
                    bytes: Data([0xFF, 0xFF]))
            )
            let garbage = try DeviceAuthMessage(serializedBytes: try await sender.next().payloadBinary)
            #expect(garbage.error.errorType == .internalError)
            #expect(sender.isActive)
        }
    }
}
