import CastDiscovery
import CastTestSupport
import Foundation
import Testing

/// Avahi outages, without touching the shared avahi-daemon other tests use.
///
/// avahi-client reaches the daemon over the D-Bus system bus at `DBUS_SYSTEM_BUS_ADDRESS`, which
/// libdbus reads once per process. So the scenario runs in a child process (this test binary,
/// filtered to one test) whose bus address is a path in a temporary directory:
///
/// 1. A private dbus-daemon listens there, without Avahi: the browser reports `.unavailable`
///    ("Avahi is not running (avahi_client_new: Daemon not running)").
/// 2. That bus goes away and the path becomes a symlink to the real system bus: the browser
///    reconnects by itself and reports `.available`, with no second `.unavailable` in between.
/// 3. With a device known, the browser's D-Bus connection is cut (shutdown(2) on its socket), as
///    when the daemon or the bus restarts: `.unavailable`, the device `.removed`, then `.available`
///    and the device `.added` again.
/// 4. The same for an `AvahiPublisher`: it publishes its service again by itself.
@Suite struct AvahiOutageTests {
    static let childDirectoryVariable = "CASTD_DISCOVERY_OUTAGE_DIR"
    static let systemBusSocket = "/run/dbus/system_bus_socket"

    @Test func outagesAreReportedOnceAndRecoveredFrom() async throws {
        // The child needs the real Avahi for steps 2 and 3.
        try await withBrowser { _ in }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castd-outage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(directory.appendingPathComponent("bus").path)"
        environment[Self.childDirectoryVariable] = directory.path
        let testBinary = ProcessInfo.processInfo.arguments[0]
        let child = try Subprocess(
            testBinary, ["--testing-library", "swift-testing", "--filter", "outageScenarioInChildProcess"],
            environment: environment)
        let status = try await child.exitStatus(within: .seconds(90))
        let text = child.output
        #expect(status == 0, "the child scenario failed:\n\(text)")
        #expect(text.contains("outageScenarioInChildProcess() passed"), "the child did not run the scenario:\n\(text)")
    }

    @Test(
        .enabled(
            if: ProcessInfo.processInfo.environment[childDirectoryVariable] != nil,
            "runs in the child process of outagesAreReportedOnceAndRecoveredFrom"))
    func outageScenarioInChildProcess() async throws {
        let directory = try #require(ProcessInfo.processInfo.environment[Self.childDirectoryVariable])
        let busPath = directory + "/bus"
        #expect(ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"] == "unix:path=\(busPath)")

        // 1. A bus without Avahi.
        let privateBus = try Subprocess(
            "/usr/bin/dbus-daemon", ["--session", "--nofork", "--nopidfile", "--address=unix:path=\(busPath)"])
        try await waitUntil("the private bus socket exists", within: .seconds(10)) {
            FileManager.default.fileExists(atPath: busPath)
        }

        let (logger, logRecords) = RecordingLogHandler.logger("castd.tests.outage")
        try await withBrowser(retryInterval: .milliseconds(200), requireAvahi: false, logger: logger) { log in
            try await Self.runScenario(log: log, logRecords: logRecords, privateBus: privateBus, busPath: busPath)
        }

        // 4. The publisher's connection breaks: it publishes again once it has reconnected.
        let (publisherLogger, publisherRecords) = RecordingLogHandler.logger("castd.tests.outage.publisher")
        let publisher = try AvahiPublisher(
            name: uniqueName("Outage speaker"), port: 8009, txt: ["id": UUID().uuidString],
            retryInterval: .milliseconds(200), logger: publisherLogger)
        defer { publisher.stop() }
        try await publisher.waitUntilEstablished(timeout: .seconds(15))
        #expect(shutDownSockets(connectedTo: Self.systemBusSocket) >= 1)
        try await waitUntil("the publisher noticed", within: .seconds(10)) {
            publisherRecords.all.contains { $0.message.hasPrefix("Lost Avahi") }
        }
        try await publisher.waitUntilEstablished(timeout: .seconds(15))
        #expect(publisherRecords.all.filter { $0.message == "Service published" }.count == 2)
    }

    private static func runScenario(
        log: EventLog, logRecords: RecordingLogHandler.Storage, privateBus: Subprocess, busPath: String
    ) async throws {
        let first = try await log.first("first event", within: .seconds(10)) { _ in true }
        guard case .unavailable(let reason) = first else {
            Issue.record("expected .unavailable first, got \(first)")
            return
        }
        #expect(reason == "Avahi is not running (avahi_client_new: Daemon not running)")
        // The outage goes on for a few attempts; none of them is reported again.
        try await waitUntil("three failed attempts", within: .seconds(10)) {
            logRecords.all.filter { $0.message == "Avahi client failed; retrying" }.count >= 3
        }
        #expect(log.events == [.unavailable(reason: reason)])

        // 2. Avahi becomes reachable: the browser notices by itself.
        privateBus.kill()
        _ = try await privateBus.exitStatus(within: .seconds(10))
        try FileManager.default.removeItem(atPath: busPath)
        try FileManager.default.createSymbolicLink(atPath: busPath, withDestinationPath: systemBusSocket)
        try await log.first(".available after the outage", within: .seconds(15)) { $0 == .available }
        #expect(log.events.filter { $0.deviceID == nil } == [.unavailable(reason: reason), .available])

        // 3. The browser's connection to Avahi breaks while a device is known.
        let id = UUID().uuidString.lowercased()
        let tv = try AvahiPublishProcess(name: uniqueName("Outage TV"), port: 8009, txt: ["id=\(id)", "fn=Outage TV"])
        defer { tv.stop() }
        let device = try #require(try await log.first("added \(id)") { $0.deviceID == id }.device)
        #expect(device.host == "127.0.0.1")
        let before = log.events.count

        let severed = shutDownSockets(connectedTo: systemBusSocket)
        #expect(severed == 1, "one D-Bus connection: the browser's")
        try await log.first("the device again", within: .seconds(15), from: before) { $0 == .added(device) }

        let after = log.events[before...].filter { $0.deviceID == nil || $0.deviceID == id }
        #expect(after.map(\.kind) == ["unavailable", "removed", "available", "added"], "\(after)")
        if case .unavailable(let lost) = after.first {
            #expect(lost.hasPrefix("Lost the connection to Avahi"), "\(lost)")
        }
        #expect(after.last == .added(device))
    }
}

/// Polls `condition` until it holds, failing after `timeout` (for things nothing notifies about).
func waitUntil(_ what: String, within timeout: Duration, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            throw TestError(description: "\(what): not within \(timeout)")
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Calls shutdown(2) on this process's Unix sockets connected to `path`; returns how many.
/// The sockets stay open (their owners close them), so no descriptor is reused under them.
func shutDownSockets(connectedTo path: String) -> Int {
    let descriptors = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap(
        Int32.init)
    var count = 0
    for descriptor in descriptors {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        guard result == 0, address.sun_family == sa_family_t(AF_UNIX) else { continue }
        let peer = withUnsafeBytes(of: address.sun_path) {
            String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        if peer == path, shutdown(descriptor, Int32(SHUT_RDWR)) == 0 {
            count += 1
        }
    }
    return count
}
