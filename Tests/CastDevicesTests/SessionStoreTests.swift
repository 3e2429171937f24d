import CastDevices
import CastTestSupport
import CastdAPI
import Foundation
import Logging
import Testing

struct SessionStoreTests {
    let logger = Logger(label: "test")

    static func session(_ device: String, id: String) -> CastdSession {
        var session = CastdSession()
        session.deviceID = device
        session.deviceName = "TV " + device
        session.sessionID = id
        session.appID = "CC1AD845"
        session.displayName = "Default Media Receiver"
        session.transportID = "web-" + id
        session.namespaces = ["urn:x-cast:com.google.cast.media"]
        session.state = .started
        return session
    }

    @Test func savedSessionsSurviveANewStore() async throws {
        try await withTemporaryDirectory { directory in
            let url = URL(fileURLWithPath: directory + "/state", isDirectory: true)
            let store = SessionStore(directory: url, logger: logger)
            #expect(store.load().isEmpty)  // no file yet: no sessions, no error
            let endpoint = DeviceEndpoint(host: "127.0.0.1", port: 8009)
            store.record(deviceID: "a", SavedSession(Self.session("a", id: "s-1"), endpoint: endpoint))
            store.record(deviceID: "b", SavedSession(Self.session("b", id: "s-2"), endpoint: endpoint))
            store.record(deviceID: "a", nil)  // ended

            let reloaded = SessionStore(directory: url, logger: logger).load()
            #expect(reloaded.map(\.sessionID) == ["s-2"])
            #expect(reloaded.first?.transportID == "web-s-2")
            #expect(reloaded.first?.host == "127.0.0.1" && reloaded.first?.port == 8009)
            // Only the file itself: no temporary file is left behind.
            let names = try FileManager.default.contentsOfDirectory(atPath: url.path)
            #expect(names == ["sessions.json"])
            let mode =
                try FileManager.default.attributesOfItem(atPath: url.path + "/sessions.json")[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test func aCorruptFileIsSetAsideNotFatal() async throws {
        try await withTemporaryDirectory { directory in
            let url = URL(fileURLWithPath: directory, isDirectory: true)
            try Data("{\"version\": 1, \"sessions\": [{\"deviceID\": ".utf8).write(
                to: url.appendingPathComponent("sessions.json"))
            let store = SessionStore(directory: url, logger: logger)
            #expect(store.load().isEmpty)
            #expect(FileManager.default.fileExists(atPath: directory + "/sessions.json.corrupt"))
            // And the store goes on working.
            store.record(
                deviceID: "a", SavedSession(Self.session("a", id: "s-9"), endpoint: .init(host: "::1", port: 8009)))
            #expect(SessionStore(directory: url, logger: logger).load().map(\.sessionID) == ["s-9"])
        }
    }

    @Test func anUnchangedSessionIsNotRewritten() async throws {
        try await withTemporaryDirectory { directory in
            let url = URL(fileURLWithPath: directory, isDirectory: true)
            let store = SessionStore(directory: url, logger: logger)
            let saved = SavedSession(Self.session("a", id: "s-1"), endpoint: .init(host: "127.0.0.1", port: 8009))
            store.record(deviceID: "a", saved)
            let file = directory + "/sessions.json"
            let before = try FileManager.default.attributesOfItem(atPath: file)[.systemFileNumber] as? Int
            var later = saved
            later.savedAt += 5_000
            store.record(deviceID: "a", later)  // same session, later: nothing to write
            let after = try FileManager.default.attributesOfItem(atPath: file)[.systemFileNumber] as? Int
            #expect(before == after, "a rewrite renames a new inode over the file")
        }
    }
}

/// The state file outlives castd's checks: what it holds is checked as anything from outside
/// (SECURITY.md). Fuzz/CastdStateFuzzer fuzzes `SessionStore.decode`.
@Suite(.tags(.cpuBound)) struct StateFileTests {
    let logger = Logger(label: "test")

    static func file(_ sessions: [[String: Any]], version: Int = 1) throws -> Data {
        try JSONSerialization.data(withJSONObject: ["version": version, "sessions": sessions])
    }

    static var good: [String: Any] {
        [
            "deviceID": "a", "deviceName": "TV", "host": "192.168.1.20", "port": 8009, "sessionID": "s-1",
            "appID": "CC1AD845", "displayName": "Default Media Receiver", "transportID": "web-1",
            "namespaces": ["urn:x-cast:com.google.cast.media"], "appType": "WEB", "joined": false, "savedAt": 0,
        ]
    }

    static func with(_ key: String, _ value: Any) -> [String: Any] {
        var session = good
        session[key] = value
        return session
    }

    @Test func invalidSessionsAreDroppedWithTheirReasonAndTheRestKept() throws {
        let cases: [([String: Any], String)] = [
            (Self.with("port", 70_000), "port 70000 is not 1 to 65535"),
            (Self.with("port", 0), "port 0 is not 1 to 65535"),
            (Self.with("host", ""), "is not a host name or an address"),
            (Self.with("host", "tv.local; rm -rf /"), "is not a host name or an address"),
            (Self.with("host", String(repeating: "a", count: 300)), "is not a host name or an address"),
            (Self.with("deviceID", ""), "no device id"),
            (Self.with("sessionID", String(repeating: "s", count: 257)), "session id longer than 256 bytes"),
            (Self.with("deviceName", "TV\u{1b}[2J"), "device name holds control characters"),
            (Self.with("namespaces", ["http://example.com"]), "is not a urn:x-cast: name"),
        ]
        for (session, reason) in cases {
            let contents = try SessionStore.decode(try Self.file([Self.good, session]))
            #expect(contents.sessions.count == 1, "\(reason)")
            #expect(contents.dropped.count == 1 && contents.dropped[0].contains(reason), "\(contents.dropped)")
            #expect(contents.dropped.first?.hasPrefix("session 2: ") == true)
        }
        for host in ["192.168.1.20", "::1", "fe80::1%eth0", "living-room.local", "tv_1.example.com"] {
            #expect(try SessionStore.decode(try Self.file([Self.with("host", host)])).sessions.count == 1, "\(host)")
        }
    }

    @Test func aFileOfAnotherVersionOrTooManySessionsIsNotTakenWhole() throws {
        #expect(throws: DecodingError.self) { try SessionStore.decode(try Self.file([Self.good], version: 2)) }
        let many = (0..<(SessionStore.maximumSessions + 5)).map { Self.with("deviceID", "d\($0)") }
        let contents = try SessionStore.decode(try Self.file(many))
        #expect(contents.sessions.count == SessionStore.maximumSessions)
        #expect(contents.dropped == ["more than \(SessionStore.maximumSessions) sessions"])
    }

    @Test func anOversizedFileIsSetAsideUnread() async throws {
        try await withTemporaryDirectory { directory in
            let url = URL(fileURLWithPath: directory, isDirectory: true)
            let path = directory + "/sessions.json"
            try Data(count: SessionStore.maximumFileSize + 1).write(to: URL(fileURLWithPath: path))
            #expect(SessionStore(directory: url, logger: logger).load().isEmpty)
            #expect(FileManager.default.fileExists(atPath: path + ".corrupt"))
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(throws: BoundedFile.Failure.self) {
                try BoundedFile.read(path + ".corrupt", limit: SessionStore.maximumFileSize)
            }
        }
    }

    /// A symbolic link where the state file should be is not read through, and writing replaces
    /// the link, never the file it points at.
    @Test func aSymbolicLinkIsNeitherReadNorWrittenThrough() async throws {
        try await withTemporaryDirectory { directory in
            let url = URL(fileURLWithPath: directory + "/state", isDirectory: true)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            let target = directory + "/elsewhere.json"
            let original = try Self.file([Self.good])
            try original.write(to: URL(fileURLWithPath: target))
            try FileManager.default.createSymbolicLink(atPath: url.path + "/sessions.json", withDestinationPath: target)

            let failure = #expect(throws: BoundedFile.Failure.self) {
                try BoundedFile.read(url.path + "/sessions.json", limit: 1 << 20)
            }
            #expect(failure?.detail == "is a symbolic link")
            let store = SessionStore(directory: url, logger: logger)
            #expect(store.load().isEmpty)
            store.record(
                deviceID: "b",
                SavedSession(SessionStoreTests.session("b", id: "s-2"), endpoint: .init(host: "127.0.0.1", port: 8009)))
            #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == original)
            let kind =
                try FileManager.default.attributesOfItem(atPath: url.path + "/sessions.json")[.type]
                as? FileAttributeType
            #expect(kind == .typeRegular)
        }
    }
}
