import CastClient
import CastDevices
import CastEmulator
import CastTestSupport
import CastdAPI
import Foundation
import Testing

@testable import castd_bench

/// The soak's load, small, against castd in this process: the same phases `castd-bench soak`
/// runs against castd as a process.
@Suite struct SoakLoadTests {
    @Test func aSmallSoakWithLinkDropsLosesAndDuplicatesNothing() async throws {
        var first = EmulatorConfiguration()
        first.name = "Soak TV 1"
        var second = EmulatorConfiguration()
        second.name = "Soak TV 2"
        try await withEmulator(first) { one, oneAt in
            try await withEmulator(second) { two, twoAt in
                let devices = [
                    StaticDevice(name: "Soak TV 1", endpoint: DeviceEndpoint(host: oneAt.host, port: oneAt.port)),
                    StaticDevice(name: "Soak TV 2", endpoint: DeviceEndpoint(host: twoAt.host, port: twoAt.port)),
                ]
                try await withDaemon(devices: devices) { socket, store in
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        for name in ["Soak TV 1", "Soak TV 2"] {
                            var media = CastdMediaInformation(
                                url: "https://example.com/soak.mp4", contentType: "video/mp4")
                            media.duration = SoakRequestKind.mediaDuration
                            _ = try await client.load(media, device: name)
                        }
                        var parameters = SoakParameters()
                        parameters.clients = 4
                        parameters.requests = 150
                        parameters.depth = 3
                        parameters.watchers = 2
                        parameters.dropInterval = .milliseconds(300)
                        // A link is cut as the calls start, so that however fast they go, the
                        // reconnection path is under test.
                        parameters.dropAtStart = true
                        let load = SoakLoad(
                            socket: socket, parameters: parameters,
                            devices: [
                                SoakDevice(selector: "Soak TV 1", dropLinks: { await one.dropLinks() }),
                                SoakDevice(selector: "Soak TV 2", dropLinks: { await two.dropLinks() }),
                            ])
                        let watchers = try await load.startWatchers()
                        let (tally, drops, _) = try await load.runClients(observer: watchers.first?.progress)
                        #expect(tally.calls == 600)
                        #expect(tally.replies == 600)
                        #expect(tally.anomalies == 0, "\(tally.notes)")
                        #expect(tally.connectionsLost == 0)
                        let deviceCalls = SoakRequestKind.allCases.filter(\.reachesDevice).map {
                            tally.codes[$0.method, default: [:]].values.reduce(0, +)
                        }
                        #expect(deviceCalls.reduce(0, +) > 0)
                        // Every link comes back before the watchers are compared.
                        try await load.awaitRelinks(after: drops, watchers: watchers)
                        try await eventually(timeout: .seconds(30), "both links back") {
                            store.devices().filter { $0.linkState == .connected }.count == 2
                        }
                        let (results, comparison) = try await load.stopWatchers(watchers)
                        #expect(comparison.identical, "\(comparison.differences)")
                        for result in results {
                            #expect(result.stopped && result.endCode == Int(CastdCode.cancelled.rawValue))
                            #expect(result.tally.anomalies == 0, "\(result.tally.notes)")
                        }
                        #expect(drops.contains { $0.linksCut > 0 }, "no link was cut while the calls ran: \(drops)")
                        #expect(
                            (results.first?.log.reconnections.values.reduce(0, +) ?? 0) > 0,
                            "no reconnection was seen")
                    }
                }
            }
        }
    }
}
