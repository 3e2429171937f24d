import CastDiscovery
import Foundation
import Testing

/// The browser and the publisher against the real Avahi daemon on loopback.
@Suite struct AvahiBrowserTests {
    @Test func avahiPublishIsAddedUpdatedAndRemoved() async throws {
        try await withBrowser { log in
            let id = UUID().uuidString.lowercased()
            let first = try AvahiPublishProcess(
                name: uniqueName("Living Room TV"), port: 8009,
                txt: [
                    "id=\(id)", "fn=Living Room TV", "md=Chromecast Ultra", "ca=4101", "st=0", "ic=/setup/icon.png",
                    "ve=05",
                ])
            defer { first.stop() }

            let added = try #require(
                try await log.first("added \(id)") { $0.kind == "added" && $0.deviceID == id }.device)
            #expect(added.friendlyName == "Living Room TV")
            #expect(added.model == "Chromecast Ultra")
            #expect(added.host == "127.0.0.1")
            #expect(added.port == 8009)
            #expect(added.capabilities == [.videoOut, .audioOut, CastCapabilities(rawValue: 4096)])
            #expect(!added.isBusy && !added.isGroup)
            #expect(added.statusText == "")
            #expect(added.serviceName == first.name)
            #expect(added.txt.iconPath == "/setup/icon.png")
            #expect(added.txt.values["ve"] == "05")

            // The same id under a second instance name with a changed TXT record: still one
            // device, updated with the newest TXT.
            let second = try AvahiPublishProcess(
                name: uniqueName("Living Room TV"), port: 8009,
                txt: [
                    "id=\(id)", "fn=Living Room", "md=Chromecast Ultra", "ca=4101", "st=1",
                    "rs=Casting: Big Buck Bunny",
                ])
            defer { second.stop() }
            let busy = try #require(
                try await log.first("busy \(id)") { $0.deviceID == id && $0.device?.isBusy == true }.device)
            #expect(busy.friendlyName == "Living Room")
            #expect(busy.statusText == "Casting: Big Buck Bunny")
            #expect(busy.serviceName == first.name, "the first instance still gives the address")

            // The first instance goes: the device stays, now represented by the second one.
            first.stop()
            let moved = try #require(
                try await log.first("\(id) on the second instance") {
                    $0.deviceID == id && $0.device?.serviceName == second.name
                }.device)
            #expect(moved.friendlyName == "Living Room")

            // The last instance goes: the device is removed.
            second.stop()
            try await log.first("removed \(id)") { $0 == .removed(id: id) }
            #expect(log.events(forDevice: id).map(\.kind) == ["added", "updated", "updated", "removed"])
        }
    }

    @Test func groupOnItsOwnPortWithNonASCIIName() async throws {
        try await withBrowser { log in
            let id = UUID().uuidString.lowercased()
            let name = uniqueName("Gruppe Küche – 客厅")
            let group = try AvahiPublishProcess(
                name: name, port: 32_187,
                txt: ["id=\(id)", "fn=Küche & 客厅", "md=Google Cast Group", "ca=198692", "st=0"])
            defer { group.stop() }
            let device = try #require(try await log.first("added \(id)") { $0.deviceID == id }.device)
            #expect(device.isGroup)
            #expect(device.port == 32_187)
            #expect(device.friendlyName == "Küche & 客厅")
            #expect(device.serviceName == name)
        }
    }

    @Test func deviceWithoutIDOrNameIsKnownByItsInstanceName() async throws {
        try await withBrowser { log in
            let name = uniqueName("Bare speaker")
            let bare = try AvahiPublishProcess(name: name, port: 8009, txt: ["md=Speaker", "flag"])
            defer { bare.stop() }
            let device = try #require(try await log.first("added \(name)") { $0.deviceID == name }.device)
            #expect(device.friendlyName == name)
            #expect(device.txt.values["flag"] == "")
            bare.stop()
            try await log.first("removed \(name)") { $0 == .removed(id: name) }
        }
    }

    @Test func publisherRoundTrip() async throws {
        try await withBrowser { log in
            let id = UUID().uuidString.lowercased()
            let name = uniqueName("Emulated TV")
            let publisher: AvahiPublisher
            do {
                publisher = try AvahiPublisher(
                    name: name, port: 8009,
                    txt: ["id": id, "fn": "Emulated TV", "md": "castd emulator", "ca": "5", "st": "0"],
                    logger: testLogger("publisher"))
            } catch let error as DiscoveryError where error.code == .avahiUnavailable {
                throw AvahiNotRunning(reason: error.message)
            }
            defer { publisher.stop() }
            try await publisher.waitUntilEstablished(timeout: .seconds(15))
            #expect(publisher.name == name)

            let added = try #require(try await log.first("added \(id)") { $0.deviceID == id }.device)
            #expect(added.friendlyName == "Emulated TV")
            #expect(added.model == "castd emulator")
            #expect(added.host == "127.0.0.1")
            #expect(added.port == 8009)
            #expect(added.capabilities == [.videoOut, .audioOut])

            // A TXT change of the live service is a re-resolve: .updated.
            try publisher.updateTXT([
                "id": id, "fn": "Emulated TV", "md": "castd emulator", "ca": "5", "st": "1", "rs": "Playing",
            ])
            let updated = try #require(
                try await log.first("updated \(id)") { $0.kind == "updated" && $0.deviceID == id }.device)
            #expect(updated.isBusy)
            #expect(updated.statusText == "Playing")

            publisher.stop()
            try await log.first("removed \(id)") { $0 == .removed(id: id) }
            #expect(log.events(forDevice: id).map(\.kind) == ["added", "updated", "removed"])
            await #expect(throws: DiscoveryError.self) {
                try await publisher.waitUntilEstablished(timeout: .seconds(1))
            }
            #expect(throws: DiscoveryError.self) { try publisher.updateTXT(["id": id]) }
        }
    }

    /// Cancelling a browser while its avahi thread is yielding events must not deadlock (the
    /// stream's termination runs inside the runtime's cancellation of the consuming task).
    @Test(.timeLimit(.minutes(1)))
    func cancellingWhileEventsFlowDoesNotDeadlock() async throws {
        let prefix = UUID().uuidString.lowercased()
        var publishers: [AvahiPublisher] = []
        defer {
            for publisher in publishers {
                publisher.stop()
            }
        }
        for index in 0..<10 {
            do {
                publishers.append(
                    try AvahiPublisher(
                        name: uniqueName("Busy TV \(index)"), port: 8009, txt: ["id": "\(prefix)-\(index)"],
                        logger: testLogger("publisher")))
            } catch let error as DiscoveryError where error.code == .avahiUnavailable {
                throw AvahiNotRunning(reason: error.message)
            }
        }
        for publisher in publishers {
            try await publisher.waitUntilEstablished(timeout: .seconds(15))
        }
        // Each browser is cancelled after its first device, while the others are still arriving.
        for _ in 0..<30 {
            try await withBrowser { log in
                try await log.first("one of the busy TVs") {
                    $0.kind == "added" && $0.deviceID?.hasPrefix(prefix) == true
                }
            }
        }
    }

    /// A device that moved to another port (a restart, a group leader change) is announced
    /// again: browsers resolve it on the new port.
    @Test func publisherMovesToAnotherPort() async throws {
        try await withBrowser { log in
            let id = UUID().uuidString.lowercased()
            let publisher: AvahiPublisher
            do {
                publisher = try AvahiPublisher(
                    name: uniqueName("Moving TV"), port: 8009, txt: ["id": id, "fn": "Moving TV"],
                    logger: testLogger("publisher"))
            } catch let error as DiscoveryError where error.code == .avahiUnavailable {
                throw AvahiNotRunning(reason: error.message)
            }
            defer { publisher.stop() }
            try await publisher.waitUntilEstablished(timeout: .seconds(15))
            try await log.first("\(id) on 8009") { $0.deviceID == id && $0.device?.port == 8009 }
            let before = log.events.count

            try publisher.updatePort(42_123)
            #expect(publisher.port == 42_123)
            try await publisher.waitUntilEstablished(timeout: .seconds(15))
            let moved = try #require(
                try await log.first("\(id) on 42123", from: before) { $0.device?.port == 42_123 && $0.deviceID == id }
                    .device)
            #expect(moved.friendlyName == "Moving TV")
            #expect(publisher.name.hasPrefix("Moving TV"))

            #expect(throws: DiscoveryError.self) { try publisher.updatePort(0) }
            publisher.stop()
            #expect(throws: DiscoveryError.self) { try publisher.updatePort(8010) }
        }
    }

    @Test func publisherRenamesOnCollision() async throws {
        let name = uniqueName("Twin")
        let logger = testLogger("publisher")
        let first: AvahiPublisher
        do {
            first = try AvahiPublisher(name: name, port: 8009, txt: ["id": "twin-1"], logger: logger)
        } catch let error as DiscoveryError where error.code == .avahiUnavailable {
            throw AvahiNotRunning(reason: error.message)
        }
        defer { first.stop() }
        try await first.waitUntilEstablished(timeout: .seconds(15))
        let second = try AvahiPublisher(name: name, port: 8010, txt: ["id": "twin-2"], logger: logger)
        defer { second.stop() }
        try await second.waitUntilEstablished(timeout: .seconds(15))
        #expect(first.name == name)
        #expect(second.name != name)
        #expect(second.name.hasPrefix(name))
    }

    @Test func publisherRejectsWhatMDNSCannotCarry() {
        let logger = testLogger("publisher")
        for (name, port, txt) in [
            ("", 8009, [:]),
            (String(repeating: "x", count: 64), 8009, [:]),
            ("Fine", 0, [:]),
            ("Fine", 70_000, [:]),
            ("Fine", 8009, ["": "value"]),
            ("Fine", 8009, ["a=b": "value"]),
            ("Fine", 8009, ["rs": String(repeating: "y", count: 253)]),
        ] as [(String, Int, [String: String])] {
            #expect {
                _ = try AvahiPublisher(name: name, port: port, txt: txt, logger: logger)
            } throws: { error in
                (error as? DiscoveryError)?.code == .invalidArgument
            }
        }
    }

    @Test func publisherReportsAvahiRefusals() throws {
        do {
            _ = try AvahiPublisher(
                name: uniqueName("Bad type"), serviceType: "not-a-type", port: 8009, txt: [:],
                logger: testLogger("publisher"))
            Issue.record("Avahi accepted the service type \"not-a-type\"")
        } catch let error as DiscoveryError {
            if error.code == .avahiUnavailable {
                throw AvahiNotRunning(reason: error.message)
            }
            #expect(error.code == .publishFailed)
            #expect(error.message.contains("not-a-type") && error.message.contains("Invalid service type"), "\(error)")
        }
    }
}
