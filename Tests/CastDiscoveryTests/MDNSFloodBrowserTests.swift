import CastdSupport
import CastTestSupport
import Foundation
import Testing

@testable import CastDiscovery

/// mDNS floods through the real Avahi daemon on loopback (security issue M1): many ids announced
/// at once and over time. Each test browses a service type of its own, so the other tests (and
/// the castd processes they start, which browse `_googlecast._tcp`) never see its floods; and
/// scripts/test.sh runs the MDNSFlood suites on their own after the others, because a flood
/// keeps Avahi busy (about 5 ms of its CPU per service), which would slow every test that
/// waits for Avahi.
@Suite(.serialized) struct MDNSFloodBrowserTests {
    /// A real device announced after more fake ids than Avahi lets one client hold objects for
    /// (1,024): castd's browse keeps at most `maximumResolvers` resolvers open, so the device is
    /// still resolved and listed. (Before the bound, castd kept one resolver per service, and
    /// the device was never listed.)
    @Test(.timeLimit(.minutes(5))) func aDeviceBehindMoreFakesThanAvahiResolvesForOneClientIsFound() async throws {
        let type = Self.uniqueServiceType()
        let limits = DiscoveryLimits(maximumServices: 2000, maximumServicesPerHost: 2000, maximumResolvers: 64)
        try await withFloodBrowser(type: type, limits: limits) { browser, watch in
            let flood = AvahiServiceFlood(serviceType: type, logger: testLogger("flood"))
            defer { flood.withdrawAll() }
            try await flood.publish(Self.fakes(1100, tag: "behind"), timeout: .seconds(120).scaledForTests)
            let real = try AvahiPublisher(
                name: uniqueName("Real TV"), serviceType: type, port: 8009,
                txt: ["id": "real-\(UUID().uuidString.prefix(8))", "fn": "Real TV", "md": "Chromecast"],
                logger: testLogger("publisher"))
            defer { real.stop() }
            try await watch.until("the real device and 1,100 fakes listed", within: .seconds(120)) {
                $0.listed.count == 1101 && $0.listed.contains { $0.hasPrefix("real-") }
            }
            let counts = browser.counts
            #expect(counts.mostOpenResolvers <= 64, "resolvers open at once: \(counts)")
            #expect(counts.services == 1101)
        }
    }

    /// 10,000 ids in waves of 500, each announced and withdrawn: every one is listed and then
    /// removed, nothing is left behind after a wave (services followed, resolvers open), and
    /// Avahi objects stay within the bound throughout. (Waves of 500: Avahi's cache holds about
    /// 1,350 services, and the goodbyes of a bigger wave, rate-limited, can leave records of it
    /// there for minutes.)
    @Test(.timeLimit(.minutes(10))) func aFloodOverTimeIsListedAndGivenBack() async throws {
        let type = Self.uniqueServiceType()
        let limits = DiscoveryLimits(maximumServices: 1024, maximumServicesPerHost: 1024, maximumResolvers: 128)
        try await withFloodBrowser(type: type, limits: limits) { browser, watch in
            for wave in 0..<20 {
                let flood = AvahiServiceFlood(serviceType: type, logger: testLogger("flood"))
                let fakes = Self.fakes(500, tag: "w\(wave)")
                try await flood.publish(fakes, timeout: .seconds(120).scaledForTests)
                try await watch.until("wave \(wave) listed", within: .seconds(120)) { $0.listed.count == 500 }
                flood.withdrawAll()
                try await watch.until("wave \(wave) removed", within: .seconds(120)) { $0.listed.isEmpty }
                try await eventually(timeout: .seconds(30), "wave \(wave) given back") {
                    let counts = browser.counts
                    return counts.services == 0 && counts.openResolvers == 0
                }
            }
            let counts = browser.counts
            #expect(counts.mostOpenResolvers <= 128, "\(counts)")
            #expect(counts.ignored == 0)
            #expect(watch.state.withLock { $0.everAdded } == 10_000)
        }
    }

    /// More services than `maximumServices`: the rest are ignored (counted and logged) and
    /// picked up once enough of those followed leave.
    @Test(.timeLimit(.minutes(5))) func servicesBeyondTheBoundWaitForRoom() async throws {
        let type = Self.uniqueServiceType()
        let limits = DiscoveryLimits(maximumServices: 100, maximumServicesPerHost: 200, maximumResolvers: 16)
        try await withFloodBrowser(type: type, limits: limits) { browser, watch in
            let first = AvahiServiceFlood(serviceType: type, logger: testLogger("flood"))
            defer { first.withdrawAll() }
            try await first.publish(Self.fakes(100, tag: "first"), timeout: .seconds(60).scaledForTests)
            try await watch.until("the first 100 listed", within: .seconds(60)) { $0.listed.count == 100 }
            let more = AvahiServiceFlood(serviceType: type, logger: testLogger("flood"))
            defer { more.withdrawAll() }
            try await more.publish(Self.fakes(40, tag: "more"), timeout: .seconds(60).scaledForTests)
            try await eventually(timeout: .seconds(30), "the 40 beyond the bound ignored") {
                browser.counts.ignored >= 40
            }
            #expect(watch.state.withLock { $0.listed.count } == 100)
            #expect(!watch.state.withLock { $0.listed.contains { $0.hasPrefix("more-") } })

            first.withdrawAll()
            try await watch.until("the 40 picked up once there was room", within: .seconds(60)) {
                $0.listed.count == 40 && $0.listed.allSatisfy { $0.hasPrefix("more-") }
            }
            #expect(browser.counts.rebrowses >= 1)
        }
    }

    /// A flood from one host does not hide another host's device (issue 34): 1,100 ids from
    /// this machine's address, more than `maximumServices` (1,024), then a TV announced by
    /// another host (its own name and address). Without the per-host bound the TV was ignored
    /// for good ("castd already follows the most services it will"); with it, the flood's host
    /// keeps its 32, the rest are dropped as they resolve (so the flood may never reach the
    /// global bound; if it does, the browse starts over once they are dropped), and the TV is
    /// listed.
    @Test(.timeLimit(.minutes(5))) func aFloodFromOneHostDoesNotHideAnotherHostsDevice() async throws {
        let type = Self.uniqueServiceType()
        let limits = DiscoveryLimits(maximumServices: 1024, maximumServicesPerHost: 32, maximumResolvers: 256)
        try await withFloodBrowser(type: type, limits: limits) { browser, watch in
            let flood = AvahiServiceFlood(serviceType: type, logger: testLogger("flood"))
            defer { flood.withdrawAll() }
            try await flood.publish(Self.fakes(1100, tag: "flood"), timeout: .seconds(120).scaledForTests)
            let tvHost = "castd-tv-\(UUID().uuidString.prefix(8).lowercased()).local"
            try await flood.publishAddress(of: tvHost, "127.0.0.2", timeout: .seconds(30).scaledForTests)
            var tv = Self.fakes(1, tag: "tv")[0]
            tv.host = tvHost
            try await flood.publish([tv], timeout: .seconds(30).scaledForTests)
            try await watch.until("the other host's TV listed", within: .seconds(120)) {
                $0.listed.contains { $0.hasPrefix("tv-") }
            }
            try await eventually(timeout: .seconds(60), "the flood's host dropped to its share") {
                browser.counts.refusedByHost >= 1100 - 32
            }
            let listed = watch.state.withLock { $0.listed }
            #expect(listed.filter { $0.hasPrefix("flood-") }.count <= 32, "the flood's host keeps its share")
            #expect(browser.counts.services <= 33, "\(browser.counts)")
        }
    }

    /// A failed resolve is tried again: a service whose SRV names a host nobody announces
    /// fails to resolve (Avahi gives up after its timeout); once the host's address is
    /// announced, the retry finds the device.
    @Test(.timeLimit(.minutes(2))) func aFailedResolveIsRetried() async throws {
        let type = Self.uniqueServiceType()
        let limits = DiscoveryLimits(resolveRetry: .seconds(1), maximumResolveRetry: .seconds(2))
        try await withFloodBrowser(type: type, limits: limits) { browser, watch in
            let host = "castd-late-\(UUID().uuidString.prefix(8).lowercased()).local"
            var service = Self.fakes(1, tag: "late")[0]
            service.host = host
            let flood = AvahiServiceFlood(serviceType: type, logger: testLogger("flood"))
            defer { flood.withdrawAll() }
            try await flood.publish([service], timeout: .seconds(30).scaledForTests)
            try await eventually(timeout: .seconds(30), "a failed resolve") { browser.counts.failedResolves >= 1 }
            #expect(watch.state.withLock { $0.listed.isEmpty })
            try await flood.publishAddress(of: host, "127.0.0.1", timeout: .seconds(30).scaledForTests)
            try await watch.until("the device listed once its host resolves", within: .seconds(30)) {
                $0.listed.count == 1
            }
        }
    }

    @Test func resolveRetriesBackOff() throws {
        let limits = DiscoveryLimits(resolveRetry: .seconds(5), maximumResolveRetry: .seconds(40))
        #expect(limits.retryDelay(afterFailures: 1) == .seconds(5))
        #expect(limits.retryDelay(afterFailures: 2) == .seconds(10))
        #expect(limits.retryDelay(afterFailures: 4) == .seconds(40))
        #expect(limits.retryDelay(afterFailures: 1000) == .seconds(40))
    }

    // MARK: support

    /// A DNS-SD service type no other test browses: "_cf" and 8 hex digits (15 characters at most).
    static func uniqueServiceType() -> String {
        "_cf\(UUID().uuidString.prefix(8).lowercased())._tcp"
    }

    static func fakes(_ count: Int, tag: String) -> [AvahiServiceFlood.Service] {
        let run = UUID().uuidString.prefix(6)
        return (0..<count).map { index in
            AvahiServiceFlood.Service(
                name: "Fake \(tag) \(run) \(index)", port: 9000 + index % 1000,
                txt: ["id": "\(tag)-\(run)-\(index)", "fn": "Fake \(index)", "md": "Chromecast", "ca": "4101"])
        }
    }
}

/// What a flood browse has listed, with waits on it.
final class FloodWatch: Sendable {
    struct Listing: Sendable {
        var listed: Set<String> = []
        var everAdded = 0
    }

    let state = Locked(Listing())

    func record(_ event: DiscoveryEvent) {
        state.withLock { state in
            switch event {
            case .added(let device):
                state.listed.insert(device.id)
                state.everAdded += 1
            case .removed(let id):
                state.listed.remove(id)
            default:
                break
            }
        }
    }

    func until(_ what: String, within timeout: Duration, _ condition: @escaping @Sendable (Listing) -> Bool)
        async throws
    {
        // Events arrive one by one from the browse; checking the listing every 50 ms is enough.
        try await eventually(timeout: timeout, poll: .milliseconds(50), what) { self.state.withLock { condition($0) } }
    }
}

/// Browses `type` with `limits` while `body` runs.
func withFloodBrowser(
    type: String, limits: DiscoveryLimits,
    _ body: @Sendable (AvahiBrowser, FloodWatch) async throws -> Void
) async throws {
    let browser = AvahiBrowser(serviceType: type, limits: limits, logger: testLogger("browser"))
    let watch = FloodWatch()
    let first = Locked<DiscoveryEvent?>(nil)
    let stream = browser.events()
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            for await event in stream {
                first.withLock { if $0 == nil { $0 = event } }
                watch.record(event)
            }
        }
        defer { group.cancelAll() }
        try await eventually(timeout: .seconds(10), "the browse to start") { first.withLock { $0 } != nil }
        if case .unavailable(let reason)? = first.withLock({ $0 }) {
            throw AvahiNotRunning(reason: reason)
        }
        try await body(browser, watch)
    }
}
