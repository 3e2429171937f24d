import CastCore
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
            let mode = try FileManager.default.attributesOfItem(atPath: url.path + "/sessions.json")[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test func aCorruptFileIsSetAsideNotFatal() async throws {
        try await withTemporaryDirectory { directory in
            let url = URL(fileURLWithPath: directory, isDirectory: true)
            try Data("{\"version\": 1, \"sessions\": [{\"deviceID\": ".utf8).write(to: url.appendingPathComponent("sessions.json"))
            let store = SessionStore(directory: url, logger: logger)
            #expect(store.load().isEmpty)
            #expect(FileManager.default.fileExists(atPath: directory + "/sessions.json.corrupt"))
            // And the store goes on working.
            store.record(deviceID: "a", SavedSession(Self.session("a", id: "s-9"), endpoint: .init(host: "::1", port: 8009)))
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
