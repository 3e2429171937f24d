import CastProtocol
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

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test("--help teaches: every flag and an example")
    func help() throws {
        let (status, output) = try Self.run(["--help"])
        #expect(status == 0)
        for flag in ["--name", "--host", "--port", "--http-port", "--https-port", "--id", "--model", "--log", "--ready-file", "--auth-root-file", "--publish"] {
            #expect(output.contains(flag), "\(flag) missing from --help")
        }
        #expect(output.contains("Example"))
        #expect(output.contains("pychromecast"))
    }

    @Test("Bad flags are refused with a clear message")
    func validation() throws {
        let (status, output) = try Self.run(["--id", "xyz"])
        #expect(status != 0)
        #expect(output.contains("--id must be 32 hex digits"))
    }

    @Test("--ready-file appears once listening; --log records both directions; SIGTERM exits 0")
    func readyFileLogAndSignal() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cast-emulator-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ready = directory.appendingPathComponent("ready.json")
        let log = directory.appendingPathComponent("messages.jsonl")
        let authRoot = directory.appendingPathComponent("auth-root.pem")

        let process = Process()
        process.executableURL = try Self.binary()
        process.arguments = [
            "--port", "0", "--http-port", "0", "--name", "CLI TV", "--id", "00112233445566778899aabbccddeeff",
            "--model", "Chromecast Ultra", "--ready-file", ready.path, "--log", log.path, "--auth-root-file", authRoot.path,
        ]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        try await eventually(timeout: .seconds(60), "the ready file") {
            FileManager.default.fileExists(atPath: ready.path)
        }
        let info = try JSONValue.parse(try Data(contentsOf: ready))
        #expect(info["host"] == "127.0.0.1")
        #expect(info["id"] == "00112233445566778899aabbccddeeff")
        #expect(info["name"] == "CLI TV")
        #expect(info["model"] == "Chromecast Ultra")
        #expect(info["pid"]?.intValue == Int64(process.processIdentifier))
        #expect((info["httpPort"]?.intValue ?? 0) > 0)
        #expect(info["httpsPort"] == .null)
        let port = try #require(info["port"]?.intValue)
        // Written before the ready file.
        #expect(try String(contentsOf: authRoot, encoding: .utf8).hasPrefix("-----BEGIN CERTIFICATE-----"))

        let sender = try await RawCastSender.connect(host: "127.0.0.1", port: Int(port), sourceID: "sender-cli")
        try await sender.connect()
        try await sender.receiver(["type": "GET_STATUS", "requestId": 1])
        #expect(try await sender.reply(to: 1)["type"] == "RECEIVER_STATUS")

        kill(process.processIdentifier, SIGTERM)
        try await eventually(timeout: .seconds(10), "cast-emulator to exit") { !process.isRunning }
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)

        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map { try JSONValue.parse(String($0)) }
        #expect(lines.contains { $0["direction"] == "in" && $0["payload"]?["type"] == "GET_STATUS" && $0["source"] == "sender-cli" })
        #expect(lines.contains { $0["direction"] == "out" && $0["payload"]?["type"] == "RECEIVER_STATUS" })
    }
}
