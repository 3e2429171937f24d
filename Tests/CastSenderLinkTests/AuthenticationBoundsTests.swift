import CastProtocol
import CastTestSupport
import CastdSupport
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509
import _CryptoExtras

@testable import CastSenderLink

/// What checking a device's answer may cost (SECURITY.md, H1). The answer comes before the device
/// has proved anything, from any host that announces itself; path building over crafted
/// intermediates once took castd 21 s of CPU for seven certificates and more than 60 s for eight.
/// These tests count path building's steps, not seconds: the cost in time is in BENCHMARKS.md.
@Suite(.tags(.cpuBound)) struct AuthenticationBoundsTests {
    /// Self-issued CA certificates that share one subject and one key and differ only in a SAN:
    /// each is a valid parent of every other.
    static func sanVariants(_ count: Int, key: _RSA.Signing.PrivateKey, subject: String, now: Date) -> [Certificate] {
        let name = try! DistinguishedName { CommonName(subject) }
        return (0..<count).map { index in
            try! Certificate(
                version: .v3, serialNumber: .init(), publicKey: Certificate.PrivateKey(key).publicKey,
                notValidBefore: now - 86_400, notValidAfter: now + 86_400, issuer: name, subject: name,
                signatureAlgorithm: .sha256WithRSAEncryption,
                extensions: try! Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    Critical(KeyUsage(keyCertSign: true))
                    SubjectAlternativeNames([.dnsName("variant-\(index).example")])
                },
                issuerPrivateKey: Certificate.PrivateKey(key))
        }
    }

    static func der(_ certificate: Certificate) -> Data { Data(try! certificate.serializeAsPEM().derBytes) }

    @Test func anAnswerWithMoreIntermediatesThanADeviceSendsIsRefusedBeforeAnyIsRead() async {
        var scenario = AuthScenario()
        // 80 fit a 64 KiB frame; these are not even certificates, and are never parsed.
        scenario.extraIntermediates = Array(repeating: Data([0x30, 0x03, 0x02, 0x01, 0x00]), count: 79)
        let failure = await scenario.failure()
        #expect(failure?.check == .tooManyIntermediates)
        #expect(failure?.message.contains("80 intermediate certificates") == true, "\(failure?.message ?? "")")
        #expect(failure?.message.contains("at most \(DeviceAuthenticator.maximumIntermediates)") == true)
    }

    /// A genuine chain with the most intermediates allowed, two of them repeating the real one
    /// (another serial number, the same subject and key): verified.
    @Test func repeatsOfTheRealIntermediateAreDroppedAndTheChainStillVerifies() async throws {
        var scenario = AuthScenario()
        let repeats = (0..<(DeviceAuthenticator.maximumIntermediates - 1)).map { _ in Self.der(scenario.intermediate())
        }
        scenario.extraIntermediates = repeats
        #expect(try await scenario.verify().get().state == .verified)
        let parsed = try repeats.map { try Certificate(derEncoded: Array($0)) } + [scenario.intermediate()]
        #expect(DeviceAuthenticator.distinctIssuers(parsed).count == 1)
    }

    /// The attack: the device certificate is issued by a CA that comes as three SAN variants.
    /// Without dropping repeats, path building tries every order of them; with it, one.
    @Test func crossSigningVariantsOfOneCAAreSearchedOnce() async throws {
        let now = Date()
        let key = AuthScenario.Keys.other
        let variants = Self.sanVariants(
            DeviceAuthenticator.maximumIntermediates, key: key, subject: "Evil CA", now: now)
        #expect(DeviceAuthenticator.distinctIssuers(variants).count == 1)

        var scenario = AuthScenario()
        let deviceName = try DistinguishedName { CommonName("device-1") }
        let device = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: Certificate.PrivateKey(AuthScenario.Keys.device).publicKey,
            notValidBefore: now - 86_400, notValidAfter: now + 86_400, issuer: variants[0].subject,
            subject: deviceName, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions { Critical(KeyUsage(digitalSignature: true)) },
            issuerPrivateKey: Certificate.PrivateKey(key))
        let roots = [scenario.root()]

        let all = await DeviceAuthenticator.validateChain(
            device: device, intermediates: variants, roots: roots, now: now)
        let distinct = await DeviceAuthenticator.validateChain(
            device: device, intermediates: DeviceAuthenticator.distinctIssuers(variants), roots: roots, now: now)
        print(
            "path building over \(variants.count) SAN variants: \(all.steps) steps; without repeats: \(distinct.steps)")
        guard case .couldNotValidate = all.result, case .couldNotValidate = distinct.result else {
            Issue.record("a chain to an untrusted CA validated")
            return
        }
        // Every order of three variants, against one path.
        #expect(all.steps > 3 * distinct.steps)
        #expect(distinct.steps <= 8)

        // End to end, the answer is refused as untrusted.
        scenario.deviceCertificateDER = try device.serializeAsPEM().derBytes
        scenario.sendIntermediate = false
        scenario.extraIntermediates = variants.map(Self.der)
        #expect(await scenario.failure()?.check == .untrustedChain)
    }

    /// However the intermediates are crafted, path building takes a few steps per intermediate:
    /// a chain of distinct CAs, each issued by the next, as long as allowed, plus the real one.
    @Test func pathBuildingIsLinearInTheIntermediatesAllowed() async throws {
        let now = Date()
        var scenario = AuthScenario()
        let keys = [AuthScenario.Keys.other, AuthScenario.Keys.intermediate, AuthScenario.Keys.root]
        let names = try (0..<keys.count).map { index in try DistinguishedName { CommonName("Chain CA \(index)") } }
        let cas = try (0..<keys.count).map { index in
            try Certificate(
                version: .v3, serialNumber: .init(), publicKey: Certificate.PrivateKey(keys[index]).publicKey,
                notValidBefore: now - 86_400, notValidAfter: now + 86_400,
                issuer: names[(index + 1) % keys.count], subject: names[index],
                signatureAlgorithm: .sha256WithRSAEncryption,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                },
                issuerPrivateKey: Certificate.PrivateKey(keys[(index + 1) % keys.count]))
        }
        let device = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: Certificate.PrivateKey(AuthScenario.Keys.device).publicKey,
            notValidBefore: now - 86_400, notValidAfter: now + 86_400, issuer: names[0],
            subject: try DistinguishedName { CommonName("device-1") }, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions { Critical(KeyUsage(digitalSignature: true)) },
            issuerPrivateKey: Certificate.PrivateKey(keys[0]))
        let search = await DeviceAuthenticator.validateChain(
            device: device, intermediates: cas, roots: [scenario.root()], now: now)
        print("path building over a loop of \(cas.count) CAs: \(search.steps) steps")
        #expect(search.steps <= 4 * (cas.count + 1))
    }

    @Test func anRSAKeyLongerThanACastCertificatesIsRefused() async throws {
        var scenario = AuthScenario()
        // A public key alone: 8192 bits, odd, top bit set. Nothing is signed with it.
        var modulus = [UInt8](repeating: 0xC5, count: 1024)
        modulus[0] = 0xF1
        modulus[1023] = 0x0B
        let big = try _RSA.Signing.PublicKey(n: modulus, e: [0x01, 0x00, 0x01])
        let name = try DistinguishedName { CommonName("Big CA") }
        let oversized = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: Certificate.PublicKey(big),
            notValidBefore: scenario.now - 86_400, notValidAfter: scenario.now + 86_400,
            issuer: scenario.rootNameDN, subject: name, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            },
            issuerPrivateKey: Certificate.PrivateKey(AuthScenario.Keys.root))
        scenario.extraIntermediates = [Self.der(oversized)]
        let failure = await scenario.failure()
        #expect(failure?.check == .oversizedKey)
        #expect(failure?.message.contains("8192-bit") == true, "\(failure?.message ?? "")")
    }

    /// A check whose task is cancelled (castd cancels it at the connect deadline) stops at its
    /// next step with a failure that says so.
    @Test func aCancelledCheckStopsWithTheDeadlineFailure() async throws {
        var scenario = AuthScenario()
        let (reply, tls) = scenario.answer()
        let roots = CastTrustRoots([scenario.root()])
        let nonce = scenario.nonce
        let now = scenario.now
        let task = Task { () async throws -> DeviceAuthentication in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await DeviceAuthenticator(trustedRoots: roots).verify(
                reply: reply, nonce: nonce, tlsCertificateDER: tls, now: now)
        }
        let result = await task.result
        guard case .failure(let error) = result, let failure = error as? DeviceAuthenticationFailure else {
            Issue.record("a cancelled check finished: \(result)")
            return
        }
        #expect(failure.check == .verificationTimedOut)
    }

    /// The check castd makes runs on the authentication thread, not on the cooperative pool,
    /// and gives the same answer.
    @Test func theDeadlineCheckRunsOnTheAuthenticationThread() async throws {
        var scenario = AuthScenario()
        let (reply, tls) = scenario.answer()
        let outcome = try await DeviceAuthenticator(trustedRoots: CastTrustRoots([scenario.root()])).verify(
            reply: reply, nonce: scenario.nonce, tlsCertificateDER: tls,
            deadline: .now + .seconds(60 * testTimeScale), now: scenario.now)
        #expect(outcome.state == .verified)
        let onThread = await withTaskExecutorPreference(AuthenticationExecutor.shared) { Self.threadName() }
        #expect(onThread == AuthenticationExecutor.threadName, "\(onThread)")
    }

    static func threadName() -> String {
        // Linux: the calling thread's name.
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension AuthenticationBoundsTests {
    /// The costliest answer the bounds let through that this test knows how to make: the most
    /// intermediates, each a self-issued CA named as the device certificate's issuer, each with a
    /// 4096-bit key (the largest taken) and a padded subject, none of which signed anything; so
    /// every candidate's signature check is made and fails. Prints the CPU time the check took
    /// (SECURITY.md, BENCHMARKS.md); asserts only its steps.
    @Test func theCostliestAnswerWithinTheBounds() async throws {
        var scenario = AuthScenario()
        let padding = String(repeating: "p", count: 4000)
        let name = try DistinguishedName {
            CommonName("Padded CA")
            OrganizationName(padding)
        }
        let cas = try (0..<DeviceAuthenticator.maximumIntermediates).map { index in
            var modulus = [UInt8](repeating: UInt8(0x80 + index), count: 512)
            modulus[0] = 0xF3
            modulus[511] = 0x01
            let key = try _RSA.Signing.PublicKey(n: modulus, e: [0x01, 0x00, 0x01])
            return try Certificate(
                version: .v3, serialNumber: .init(), publicKey: Certificate.PublicKey(key),
                notValidBefore: scenario.now - 86_400, notValidAfter: scenario.now + 86_400, issuer: name,
                subject: name, signatureAlgorithm: .sha256WithRSAEncryption,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                },
                issuerPrivateKey: Certificate.PrivateKey(AuthScenario.Keys.other))
        }
        let device = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: Certificate.PrivateKey(AuthScenario.Keys.device).publicKey,
            notValidBefore: scenario.now - 86_400, notValidAfter: scenario.now + 86_400, issuer: name,
            subject: try DistinguishedName { CommonName("device-1") }, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions { Critical(KeyUsage(digitalSignature: true)) },
            issuerPrivateKey: Certificate.PrivateKey(AuthScenario.Keys.other))
        scenario.deviceCertificateDER = try device.serializeAsPEM().derBytes
        scenario.sendIntermediate = false
        scenario.extraIntermediates = cas.map(Self.der)
        let (reply, tls) = scenario.answer()
        #expect(reply.count <= 65_536 - 200, "the answer fits a frame")

        let roots = CastTrustRoots([scenario.root()])
        let started = Self.cpuTime()
        let result: Result<DeviceAuthentication, DeviceAuthenticationFailure>
        do {
            result = .success(
                try await DeviceAuthenticator(trustedRoots: roots).verify(
                    reply: reply, nonce: scenario.nonce, tlsCertificateDER: tls, now: scenario.now))
        } catch {
            result = .failure(error)
        }
        let spent = Self.cpuTime() - started
        guard case .failure(let failure) = result else {
            Issue.record("a chain to an untrusted CA was verified")
            return
        }
        #expect(failure.check == .untrustedChain)
        let search = await DeviceAuthenticator.validateChain(
            device: device, intermediates: cas, roots: roots.certificates, now: scenario.now)
        print(
            "the costliest answer within the bounds (\(reply.count) bytes, \(cas.count) intermediates with 4096-bit keys): "
                + "\(search.steps) steps, \(String(format: "%.1f", spent * 1000)) ms of CPU (this build)")
        #expect(search.steps <= 4 * (cas.count + 1))
    }

    /// CPU time of the whole process, in seconds.
    static func cpuTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
