import CastClient
import CastDevices
import CastEmulator
import CastProtocol
import CastSenderLink
import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// Queues too long for one Cast message, through castd. Run apart from the other suites
/// (scripts/test.sh's last phase, one test at a time): loading and fetching 1,000 items keeps
/// the emulator, in this process, computing for seconds, which would stall the tests that wait
/// with deadlines beside it.
struct LongQueueLoadTests {
    /// A QueueLoad of 1,000 items (about 170 KiB of JSON, where a Cast message holds 64 KiB)
    /// is split by castd into a QUEUE_LOAD and QUEUE_INSERTs, with the item to play first where
    /// the client put it; a LOAD too large for one message is refused at once, not sent and
    /// timed out. (Before, the first was sent whole and the device never answered.)
    @Test func aQueueLoadTooLargeForOneMessageIsSplitAndALoadTooLargeIsRefusedAtOnce() async throws {
        var configuration = EmulatorConfiguration()
        configuration.queueWindow = 3
        try await withEmulator(configuration) { emulator, endpoints in
            let device = StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [device]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    for start in [0, 700] {
                        var load = Castd_V1_QueueLoadRequest()
                        load.items = (1...1_000).map(QueueFixture.track)
                        load.startIndex = UInt32(start)
                        let loaded = try await client.unary(.queueLoad, load, as: CastdMediaStatus.self)
                        let queue = try await client.queue()
                        #expect(queue.items.count == 1_000 && queue.complete, "start \(start)")
                        #expect(
                            queue.items.map(\.media.metadata.title) == (1...1_000).map { "Track \($0)" },
                            "start \(start): the items in the client's order")
                        #expect(loaded.currentItemID == queue.items[start].itemID, "start \(start)")
                    }

                    var load = Castd_V1_LoadRequest()
                    load.media = QueueFixture.track(1).media
                    // Fits in a message, but the device's status that repeats it would not: the
                    // device never answered, and the caller waited 10 s.
                    load.media.metadata.title = String(repeating: "x", count: 62_000)
                    let refused = await #expect(throws: CastdError.self) {
                        try await client.unary(.load, load, as: CastdMediaStatus.self)
                    }
                    #expect(refused?.code == .invalidArgument, "\(String(describing: refused))")
                    // Refused by castd (a LOAD the device never answers fails as a timeout).
                    #expect(refused?.message.contains("since the device's answer repeats it") == true)
                    _ = emulator
                }
            }
        }
    }
}
