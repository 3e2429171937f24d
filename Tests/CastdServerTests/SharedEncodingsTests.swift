import CastDevices
import CastTestSupport
import CastdAPI
import Foundation
import SwiftProtobuf
import Testing

@testable import CastdHandlers
import CastdServer

/// What castd encodes once and sends to many must read back as what it would have sent.
@Suite(.tags(.cpuBound)) struct SharedEncodingsTests {
    func hubWithDevices() -> CastdStateStore {
        let store = CastdStateStore()
        store.updateDevice(id: "b") { $0.friendlyName = "Kitchen" }
        store.updateDevice(id: "a") { $0.friendlyName = "Living Room TV" }
        var media = CastdMediaStatus()
        media.deviceID = "a"
        media.mediaSessionID = 3
        media.playerState = .playing
        media.media.contentID = "https://example.com/movie.mp4"
        media.media.metadata.title = "Movie"
        store.updateMedia(media)
        return store
    }

    @Test func encodedMessageSerializesToItsBytes() throws {
        var device = CastdDevice()
        device.friendlyName = "Den"
        let bytes = try device.serializedData()
        #expect(try EncodedMessage(bytes).serializedData() == bytes)
        var frame = Castd_V1_Frame()
        frame.callID = 7
        frame.message = try EncodedMessage(bytes).serializedData()
        #expect(
            try CastdDevice(serializedBytes: Castd_V1_Frame(serializedBytes: frame.serializedData()).message) == device)
    }

    @Test func statusIsTheStatusResponse() throws {
        let store = hubWithDevices()
        var daemon = Castd_V1_DaemonInfo()
        daemon.version = "test"
        daemon.discovery = "running"
        daemon.clients = 2
        daemon.access = .control
        func key(_ daemon: Castd_V1_DaemonInfo) -> SharedEncodings.DaemonKey {
            SharedEncodings.DaemonKey(
                discovery: daemon.discovery, discoverySince: Date(timeIntervalSince1970: 0), clients: daemon.clients,
                access: daemon.access)
        }
        let encodings = SharedEncodings()
        var made = 0
        func status() throws -> CastdStatusResponse {
            try CastdStatusResponse(
                serializedBytes: encodings.status(daemon: key(daemon), store: store) {
                    made += 1
                    return daemon
                }.bytes)
        }
        let decoded = try status()
        var expected = CastdStatusResponse()
        expected.daemon = daemon
        let snapshot = store.snapshot()
        expected.devices = snapshot.devices
        expected.sessions = snapshot.sessions
        expected.media = snapshot.media
        expected.castState = snapshot.castState
        #expect(decoded.castState == .notConnected)
        #expect(decoded == expected)
        #expect(decoded.devices.map(\.friendlyName) == ["Kitchen", "Living Room TV"])

        // The daemon part is made once per key; each of its changes is a new key.
        #expect(try status() == expected)
        #expect(made == 1)
        daemon.clients = 3
        #expect(try status().daemon.clients == 3)
        daemon.access = .read
        #expect(try status().daemon.access == .read)
        daemon.discovery = "unavailable: Avahi is not running"
        #expect(try status().daemon.discovery == "unavailable: Avahi is not running")
        #expect(made == 4)

        // The rest is cached until the store changes.
        store.removeDevice(id: "b")
        #expect(try status().devices.map(\.friendlyName) == ["Living Room TV"])

        // However many keys come and go, the cache stays small and right.
        for clients in 0..<100 {
            daemon.clients = UInt32(clients)
            #expect(try status().daemon.clients == UInt32(clients))
        }
        #expect(encodings.cachedDaemons <= SharedEncodings.daemonsKept)
    }

    @Test func eventsAreEncodedOncePerSequence() async throws {
        let store = CastdStateStore()
        let encodings = SharedEncodings()
        let first = store.watch()
        let second = store.watch()
        store.updateDevice(id: "a") { $0.friendlyName = "Den" }
        var one = first.makeAsyncIterator()
        var two = second.makeAsyncIterator()
        // Snapshots are per watcher: encoded every time, and decode back.
        let snapshots = [try #require(await one.next()), try #require(await two.next())]
        for snapshot in snapshots {
            #expect(try CastdEvent(serializedBytes: encodings.event(snapshot).bytes) == snapshot)
        }
        let added = try #require(await one.next())
        let again = try #require(await two.next())
        #expect(added == again)
        let bytes = try encodings.event(added).bytes
        #expect(try encodings.event(again).bytes == bytes)
        #expect(try CastdEvent(serializedBytes: bytes) == added)
    }

    /// Watchers hundreds of events apart still share each event's encoding (found by `make soak`:
    /// with only the last 32 kept, a watcher behind encoded every event again, fell further
    /// behind, and castd dropped events for it).
    @Test func watchersFarApartShareEncodings() async throws {
        let store = CastdStateStore(watcherQueueLimit: 1000)
        let encodings = SharedEncodings()
        let ahead = store.watch()
        let behind = store.watch()
        var media = CastdMediaStatus()
        media.deviceID = "a"
        media.mediaSessionID = 1
        for position in 0..<600 {
            media.currentTime = Double(position)
            store.updateMedia(media)
        }
        func address(_ data: Data) -> UnsafeRawPointer? { data.withUnsafeBytes { $0.baseAddress } }
        var first = ahead.makeAsyncIterator()
        _ = await first.next()  // the snapshot
        var encoded: [Data] = []
        for _ in 0..<600 { encoded.append(try encodings.event(try #require(await first.next())).bytes) }
        var second = behind.makeAsyncIterator()
        _ = await second.next()
        var shared = 0
        for index in 0..<600 {
            let event = try #require(await second.next())
            let bytes = try encodings.event(event).bytes
            #expect(bytes == encoded[index])
            if address(bytes) == address(encoded[index]) { shared += 1 }
        }
        #expect(shared == 600, "\(600 - shared) events encoded again")
    }
}
