import CastClient
import CastDevices
import CastEmulator
import CastProtocol
import CastSenderLink
import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// The whole queue (the sender SDK's media queue) through castd: a device whose MEDIA_STATUS
/// carries three items of a 500-item queue (cast-emulator --queue-window 3), castd fetching the
/// rest, and another sender's changes reaching every watcher as queue events.
struct WholeQueueTests {
    @Test func aLongQueueIsListedWholeAndItsChangesReachEveryWatcherInOneOrder() async throws {
        var configuration = EmulatorConfiguration()
        configuration.queueWindow = 3
        try await withEmulator(configuration) { _, endpoints in
            let device = StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [device]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    let loaded = try await QueueFixture.loadTracks(500, with: client)
                    #expect(loaded.items.count == 3, "the device's status carries three items")

                    let queue = try await client.queue()
                    #expect(queue.items.count == 500 && queue.complete)
                    #expect(queue.items.map(\.media.metadata.title) == (1...500).map { "Track \($0)" })
                    #expect(queue.mediaSessionID == loaded.mediaSessionID)
                    let order = queue.items.map(\.itemID)
                    #expect(try await client.status().media.first?.queueItemIds == order)

                    // Items far from the current one are judged against the whole queue, not the
                    // three the status carries.
                    var jump = Castd_V1_QueueUpdateRequest()
                    jump.currentItemID = order[300]
                    let jumped = try await client.unary(.queueUpdate, jump, as: CastdMediaStatus.self)
                    #expect(jumped.currentItemID == order[300] && jumped.items.count == 3)
                    var removeUnknown = Castd_V1_QueueRemoveRequest()
                    removeUnknown.itemIds = [9_999_999]
                    let refused = await #expect(throws: CastdError.self) {
                        try await client.unary(.queueRemove, removeUnknown, as: CastdMediaStatus.self)
                    }
                    #expect(refused?.code == .notFound)
                    #expect(refused?.message.contains("no item 9999999 in the queue (500 items: ") == true)
                    jump.currentItemID = order[0]
                    _ = try await client.unary(.queueUpdate, jump, as: CastdMediaStatus.self)

                    // Two watchers, then another sender changes the queue.
                    let watchers = [client.watch(), client.watch()]
                    var iterators = watchers.map { $0.makeAsyncIterator() }
                    for index in iterators.indices { _ = try await iterators[index].next() }  // snapshots
                    let session = try #require(try await client.status().sessions.first)
                    try await CastLink.withConnection(
                        host: endpoints.host, port: endpoints.port, configuration: .trustingEmulators(),
                        logger: .emulatorForTests(label: "other sender")
                    ) { other in
                        try await other.connect(to: session.transportID)
                        func send(_ payload: @escaping @Sendable (Int64) -> JSONValue) async throws {
                            _ = try await other.request(
                                namespace: CastNamespace.media, destination: session.transportID, payload)
                        }
                        let mediaSession = JSONValue.number(Double(loaded.mediaSessionID))
                        try await send { id in
                            [
                                "type": "QUEUE_INSERT", "requestId": .number(Double(id)),
                                "mediaSessionId": mediaSession,
                                "items": [["media": ["contentId": "https://example.com/extra.mp3"]]],
                                "insertBefore": .number(Double(order[10])),
                            ]
                        }
                        try await send { id in
                            [
                                "type": "QUEUE_REMOVE", "requestId": .number(Double(id)),
                                "mediaSessionId": mediaSession, "itemIds": [.number(Double(order[20]))],
                            ]
                        }
                        try await send { id in
                            [
                                "type": "QUEUE_REORDER", "requestId": .number(Double(id)),
                                "mediaSessionId": mediaSession, "itemIds": [.number(Double(order[30]))],
                            ]
                        }
                    }

                    var seen: [[Castd_V1_QueueChange]] = [[], []]
                    for index in iterators.indices {
                        while seen[index].count < 3, let event = try await iterators[index].next() {
                            if case .queue(let change)? = event.kind { seen[index].append(change) }
                        }
                    }
                    #expect(seen[0] == seen[1], "every watcher sees the same changes in the same order")
                    let changes = seen[0]
                    #expect(changes.map(\.kind) == [.inserted, .removed, .reordered])
                    #expect(changes[0].insertBefore == order[10] && changes[0].index == 10)
                    #expect(changes[1].itemIds == [order[20]])
                    #expect(changes[2].itemIds == [order[30]] && changes[2].order.last == order[30])

                    // Applied in order, they give the queue the device has.
                    let now = try await client.queue()
                    #expect(changes.last?.order == now.items.map(\.itemID))
                    #expect(now.items.count == 500)
                    #expect(now.items[10].media.contentID == "https://example.com/extra.mp3")
                }
            }
        }
    }

    /// Right after a long queue is loaded castd may not know its order yet: a request naming an
    /// item outside the status's window makes castd ask for the order, then judge it.
    @Test func anItemOutsideTheWindowIsFoundRightAfterLoading() async throws {
        var configuration = EmulatorConfiguration()
        configuration.queueWindow = 3
        try await withEmulator(configuration) { emulator, endpoints in
            let device = StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [device]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    let loaded = try await QueueFixture.loadTracks(50, with: client)
                    let ids = try #require(await emulator.state().mediaStatusJSON?["items"]?.arrayValue)
                    #expect(ids.count == 3 && loaded.items.count == 3)
                    // The device numbers items from 1 in load order (cast-emulator).
                    let last = loaded.items.map(\.itemID).min()! + 49
                    var jump = Castd_V1_QueueUpdateRequest()
                    jump.currentItemID = last
                    let jumped = try await client.unary(.queueUpdate, jump, as: CastdMediaStatus.self)
                    #expect(jumped.currentItemID == last)
                }
            }
        }
    }

    @Test func nothingLoadedIsAFailedPrecondition() async throws {
        try await withEmulator { _, endpoints in
            let device = StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [device]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    _ = try await client.startSession()
                    let error = await #expect(throws: CastdError.self) { try await client.queue() }
                    #expect(error?.code == .failedPrecondition, "\(String(describing: error))")
                }
            }
        }
    }
}
