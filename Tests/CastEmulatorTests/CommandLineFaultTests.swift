import CastDiscovery
import CastProtocol
import CastTestSupport
import Foundation
import Logging
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The `cast-emulator` executable's fault injection: `--reply-delay`, and a move of the CastV2
/// port that reaches the ready file and the mDNS announcement.
@Suite("cast-emulator command line: fault injection")
struct CommandLineFaultTests {
    @Test("--publish: after POST /emulator/faults/move-port, mDNS and the ready file carry the new port")
    func movedPortIsAnnounced() async throws {
        guard await avahiIsRunning() else {
            Issue.record(
                "avahi-daemon is not running: start it with `scripts/avahi-loopback.sh start /tmp/castd-avahi`")
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cast-emulator-faults-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ready = directory.appendingPathComponent("ready.json")
        let id = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        // A child process of its own reaper, stopped with SIGTERM at the end: nothing here blocks
        // a thread of the cooperative pool.
        let emulator = try ChildProcess(
            try CommandLineTests.binary().path,
            [
                "--name", "Moving TV \(id.prefix(6))", "--id", id, "--port", "0", "--http-port", "0", "--publish",
                "--ready-file", ready.path, "--reply-delay", "250",
            ],
            directory: directory.path)
        defer { emulator.signal(SIGKILL) }
        try await eventually(timeout: .seconds(60), "the ready file") {
            FileManager.default.fileExists(atPath: ready.path)
        }
        let info = try JSONValue.parse(try Data(contentsOf: ready))
        let port = Int(try #require(info["port"]?.intValue))
        let httpPort = Int(try #require(info["httpPort"]?.intValue))
        #expect(try await control("/emulator/faults", method: "GET", port: httpPort).json["replyDelayMs"] == 250)

        let browser = AvahiBrowser(logger: Logger(label: "cast-emulator.tests.browser"))
        let seen = LockedBox<[DiscoveredDevice]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in browser.events() {
                    if case .added(let device) = event { seen.withLock { $0.append(device) } }
                    if case .updated(let device) = event { seen.withLock { $0.append(device) } }
                }
            }
            defer { group.cancelAll() }
            try await eventually(timeout: .seconds(20), "the emulator announced on port \(port)") {
                seen.withLock { $0.contains { $0.id == id && $0.port == port } }
            }

            let moved = try await control("/emulator/faults/move-port", port: httpPort)
            #expect(moved.status == 200, "\(moved.json)")
            let newPort = Int(try #require(moved.json["endpoints"]?["port"]?.intValue))
            #expect(newPort != port)
            try await eventually(timeout: .seconds(20), "the emulator announced on port \(newPort)") {
                seen.withLock { $0.contains { $0.id == id && $0.port == newPort } }
            }
            try await eventually(timeout: .seconds(10), "the ready file to carry port \(newPort)") {
                (try? JSONValue.parse(Data(contentsOf: ready)))?["port"]?.intValue == Int64(newPort)
            }
            let sender = try await RawCastSender.connect(host: "127.0.0.1", port: newPort)
            try await sender.roundTrip(connectingFirst: true)
        }
        await emulator.stop()
    }
}
