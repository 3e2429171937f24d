import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The `cast-emulator` executable, run as a process the way test harnesses and CI use it.
@Suite("cast-emulator command line")
struct CommandLineTests {
    static func binary() throws -> URL {
        let name = "cast-emulator"
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent(name))
        }
        candidates.append(
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
        )
        // Tests/CastEmulatorTests/CommandLineTests.swift → package root
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/\(name)"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw CommandLineError(description: "no \(name) binary; looked at \(candidates.map(\.path))")
        }
        return found
    }

    struct CommandLineError: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs cast-emulator to completion without blocking a thread of the cooperative pool (which
    /// the emulators and links of tests running alongside need).
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let result = try await CastTestSupport.run(try binary().path, arguments, timeout: .seconds(60))
        return (result.status, result.stdout + result.stderr)
    }

    @Test("--help teaches: every flag and an example")
    func help() async throws {
        let (status, output) = try await Self.run(["--help"])
        #expect(status == 0)
        for flag in [
            "--name", "--host", "--port", "--http-port", "--https-port", "--id", "--model", "--log", "--ready-file",
            "--write-root", "--authority", "--impostor", "--publish", "--app", "--unplayable-content-type",
            "--group-member", "--fixed-volume", "--reply-delay",
        ] {
            #expect(output.contains(flag), "\(flag) missing from --help")
        }
        #expect(output.contains("Example"))
        #expect(output.contains("pychromecast"))
        // Each new flag is shown in use, and the state endpoint is explained.
        for example in [
            "--app \"ABCD1234:Chat:urn:x-cast:com.example.chat\"", "--unplayable-content-type video/x-flv",
            "--group-member 0123456789abcdef0123456789abcdef=Kitchen", "cast-emulator --fixed-volume",
            "/emulator/state", "/emulator/faults/drop-links", "/emulator/faults/move-port", "/emulator/transfer",
            "/emulator/faults/hostile", "/emulator/faults/flood",
            "A7CC5A5E", "E2C0EC40", "urn:x-cast:com.castd.echo", "castd --trust-root",
        ] {
            #expect(output.contains(example), "\(example) missing from --help")
        }
        // Every impostor is named and explained (the help wraps lines: compare words).
        let words = output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for kind in EmulatorHostileFrame.kinds {
            #expect(words.contains(kind), "hostile kind \(kind) missing from --help")
        }
        for impostor in EmulatorImpostor.allCases {
            #expect(words.contains("\(impostor.rawValue) \(impostor.summary)"), "\(impostor) missing from --help")
        }
        #expect(output.contains("--impostor wrong-nonce"))
    }

    @Test("Bad flags are refused with a clear message")
    func validation() async throws {
        let (status, output) = try await Self.run(["--id", "xyz"])
        #expect(status != 0)
        #expect(output.contains("--id must be 32 hex digits"))
    }

    @Test(
        "Bad --app, --group-member and --unplayable-content-type values are refused with what is wrong",
        arguments: [
            (["--app", "ABCD1234:Chat"], "--app: an app is ID:NAME:NAMESPACE"),
            (["--app", "ABCD1234:Chat:chat"], "is not a namespace"),
            (["--app", "A:One:urn:x-cast:a", "--app", "A:Two:urn:x-cast:b"], "the app id A is given twice"),
            (["--group-member", "Kitchen"], "--group-member: a group member is ID=NAME"),
            (["--unplayable-content-type", "flv"], "--unplayable-content-type must be a content type"),
        ]
    )
    func badNewFlags(arguments: [String], complaint: String) async throws {
        let (status, output) = try await Self.run(arguments)
        #expect(status != 0)
        #expect(output.contains(complaint), "\(output)")
    }

    @Test(
        "--group-member, --fixed-volume, --app and --unplayable-content-type reach the device (seen at /emulator/state)"
    )
    func newFlagsReachTheDevice() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cast-emulator-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ready = directory.appendingPathComponent("ready.json")
        try await withProcesses { launch in
            _ = try launch(
                try Self.binary().path,
                [
                    "--port", "0", "--http-port", "0", "--ready-file", ready.path, "--capabilities", "4",
                    "--group-member", "0123456789abcdef0123456789abcdef=Kitchen", "--group-member",
                    "fedcba9876543210fedcba9876543210=Den",
                    "--fixed-volume", "--app", "ABCD1234:Chat:urn:x-cast:com.example.chat",
                    "--unplayable-content-type", "video/webm",
                ], [:])
            try await eventually(timeout: .seconds(60), "the ready file") {
                FileManager.default.fileExists(atPath: ready.path)
            }
            let info = try JSONValue.parse(try Data(contentsOf: ready))
            #expect(info["model"] == "Google Cast Group")
            let port = Int(try #require(info["port"]?.intValue))
            let httpPort = Int(try #require(info["httpPort"]?.intValue))

            let sender = try await RawCastSender.connect(host: "127.0.0.1", port: port, sourceID: "sender-cli")
            try await sender.connect()
            try await sender.send(
                to: "receiver-0", namespace: CastNamespace.multizone, ["type": "GET_STATUS", "requestId": 1])
            #expect(try await sender.reply(to: 1)["status"]?["devices"]?.arrayValue?.count == 2)
            try await sender.receiver(["type": "SET_VOLUME", "volume": ["level": 0.2], "requestId": 2])
            #expect(try await sender.reply(to: 2)["reason"] == "BAD_PARAMETER")
            let chat = try await sender.launch("ABCD1234", requestID: 3)
            try await sender.connect(to: chat)
            try await sender.send(to: chat, namespace: "urn:x-cast:com.example.chat", ["hi": "there"])
            #expect(try await sender.nextPayload() == ["hi": "there"])

            let state = try JSONValue.parse(
                try await HTTPFetch.get(host: "127.0.0.1", port: httpPort, path: "/emulator/state", tls: false).body
            )
            #expect(state["device"]?["isGroup"] == true)
            #expect(state["device"]?["capabilities"] == 36)
            #expect(state["device"]?["txt"]?["ca"] == "36")
            #expect(state["device"]?["txt"]?["md"] == "Google Cast Group")
            #expect(state["device"]?["fixedVolume"] == true)
            #expect(state["device"]?["unplayableContentTypes"] == ["video/webm"])
            #expect(state["app"]?["appId"] == "ABCD1234")
            #expect(state["app"]?["displayName"] == "Chat")

        }
    }

    @Test("--ready-file appears once listening; --log records both directions; SIGTERM exits 0")
    func readyFileLogAndSignal() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cast-emulator-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ready = directory.appendingPathComponent("ready.json")
        let log = directory.appendingPathComponent("messages.jsonl")
        let authRoot = directory.appendingPathComponent("auth-root.pem")

        try await withProcesses { launch in
            let process = try launch(
                try Self.binary().path,
                [
                    "--port", "0", "--http-port", "0", "--name", "CLI TV", "--id", "00112233445566778899aabbccddeeff",
                    "--model", "Chromecast Ultra", "--ready-file", ready.path, "--log", log.path, "--write-root",
                    authRoot.path,
                ], [:])

            try await eventually(timeout: .seconds(60), "the ready file") {
                FileManager.default.fileExists(atPath: ready.path)
            }
            let info = try JSONValue.parse(try Data(contentsOf: ready))
            #expect(info["host"] == "127.0.0.1")
            #expect(info["id"] == "00112233445566778899aabbccddeeff")
            #expect(info["name"] == "CLI TV")
            #expect(info["model"] == "Chromecast Ultra")
            #expect(info["pid"]?.intValue == Int64(process.pid))
            #expect((info["httpPort"]?.intValue ?? 0) > 0)
            #expect(info["httpsPort"] == .null)
            let port = try #require(info["port"]?.intValue)
            // Written before the ready file.
            #expect(try String(contentsOf: authRoot, encoding: .utf8).hasPrefix("-----BEGIN CERTIFICATE-----"))

            let sender = try await RawCastSender.connect(host: "127.0.0.1", port: Int(port), sourceID: "sender-cli")
            try await sender.connect()
            try await sender.receiver(["type": "GET_STATUS", "requestId": 1])
            #expect(try await sender.reply(to: 1)["type"] == "RECEIVER_STATUS")

            process.signal(SIGTERM)
            #expect(try await process.waitForExit(timeout: .seconds(10)) == 0)  // exited 0, not killed

            let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map {
                try JSONValue.parse(String($0))
            }
            #expect(
                lines.contains {
                    $0["direction"] == "in" && $0["payload"]?["type"] == "GET_STATUS" && $0["source"] == "sender-cli"
                })
            #expect(lines.contains { $0["direction"] == "out" && $0["payload"]?["type"] == "RECEIVER_STATUS" })

        }
    }

}
