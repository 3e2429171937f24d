import CastdSupport
import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import Logging
import Testing

@testable import CastSenderLink

/// `cast-emulator --authority DIR`: emulators, in one process or several, share one root that a
/// sender trusts from `DIR/root.pem`.
@Suite struct EmulatorAuthorityTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A link to `host:port` trusting only the roots in `rootFile` (and Google's), with the
    /// test suite's deadlines (a device's silence, like the connection, scaled for slow builds).
    func authenticate(host: String, port: Int, rootFile: String) async throws -> DeviceAuthentication? {
        var configuration = CastLinkConfiguration.trustingEmulators()
        configuration.authentication.trustedRoots = CastTrustRoots.cast.adding(
            try CastTrustRoots(contentsOfFile: rootFile))
        return try await CastLink.withConnection(host: host, port: port, configuration: configuration, logger: logger) {
            $0.authentication
        }
    }

    @Test func threadsRacingForOneDirectoryAgreeOnOneAuthority() async throws {
        try await withTemporaryDirectory { directory in
            let ca = directory + "/ca"
            // Three at once, as emulators starting together would: each makes an authority or
            // takes the one linked into place first. On threads of their own: Dispatch's global
            // queues share their threads with Swift concurrency here, and making RSA keys is slow.
            let roots: [String] = await withCheckedContinuation { continuation in
                let results = Locked<[String]>([])
                for _ in 0..<3 {
                    Thread.detachNewThread {
                        let pem =
                            (try? EmulatorDeviceAuthority.loadOrCreate(directory: ca).rootCertificatePEM) ?? "failed"
                        let all = results.withLock { results -> [String]? in
                            results.append(pem)
                            return results.count == 3 ? results : nil
                        }
                        if let all { continuation.resume(returning: all) }
                    }
                }
            }
            #expect(roots.count == 3 && !roots.contains("failed"))
            #expect(Set(roots).count == 1, "one authority, not \(Set(roots).count)")
            #expect(try String(contentsOfFile: ca + "/root.pem", encoding: .utf8) == roots.first)
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: ca)) == ["authority.json", "root.pem"])

            // A later start reuses it, and its devices authenticate against root.pem.
            var configuration = EmulatorConfiguration()
            configuration.deviceAuthority = try EmulatorDeviceAuthority.loadOrCreate(directory: ca)
            #expect(configuration.deviceAuthority?.rootCertificatePEM == roots.first)
            try await withEmulator(configuration) { _, endpoints in
                let outcome = try await authenticate(
                    host: endpoints.host, port: endpoints.port, rootFile: ca + "/root.pem")
                #expect(outcome?.state == .verified)
                #expect(outcome?.root == "Cast Emulator Root CA")
            }
        }
    }

    @Test func twoEmulatorProcessesStartedAtOnceShareTheRoot() async throws {
        try await withTemporaryDirectory { directory in
            let ca = directory + "/ca"
            try await withProcesses { launch in
                let ready = (1...2).map { directory + "/ready-\($0).json" }
                for file in ready {
                    _ = try launch("cast-emulator", ["--port", "0", "--authority", ca, "--ready-file", file], [:])
                }
                try await eventually(timeout: .seconds(60), "both emulators' ready files") {
                    ready.allSatisfy { FileManager.default.fileExists(atPath: $0) }
                }
                for file in ready {
                    let info = try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: file)))
                    let port = Int(try #require(info["port"]?.intValue))
                    let outcome = try await authenticate(host: "127.0.0.1", port: port, rootFile: ca + "/root.pem")
                    #expect(outcome?.state == .verified, "emulator of \(file)")
                }
            }
        }
    }

    @Test func anImpostorProcessIsRefusedAndAGenuineOneNot() async throws {
        try await withTemporaryDirectory { directory in
            let ca = directory + "/ca"
            try await withProcesses { launch in
                let genuine = directory + "/genuine.json"
                let impostor = directory + "/impostor.json"
                _ = try launch("cast-emulator", ["--port", "0", "--authority", ca, "--ready-file", genuine], [:])
                _ = try launch(
                    "cast-emulator",
                    [
                        "--port", "0", "--authority", ca, "--ready-file", impostor, "--impostor",
                        "signature-over-other-certificate",
                    ],
                    [:])
                try await eventually(timeout: .seconds(60), "the ready files") {
                    FileManager.default.fileExists(atPath: genuine) && FileManager.default.fileExists(atPath: impostor)
                }
                func port(_ file: String) throws -> Int {
                    Int(
                        try #require(
                            try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: file)))["port"]?.intValue))
                }
                #expect(
                    try await authenticate(host: "127.0.0.1", port: try port(genuine), rootFile: ca + "/root.pem")?
                        .state == .verified)
                let error = await #expect(throws: CastLinkError.self) {
                    _ = try await authenticate(host: "127.0.0.1", port: try port(impostor), rootFile: ca + "/root.pem")
                }
                #expect(error?.authentication?.failure?.check == .badSignature)
            }
        }
    }
}
