import CastClient
import CastTestSupport
import Foundation
import Testing

@testable import castc

/// `castc devices` and `castc status` with no device: why, from castd's discovery, and what to
/// try, for each cause.
@Suite(.tags(.cpuBound)) struct NoDevicesHelpTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func daemon(_ state: Castd_V1_DiscoveryState, _ text: String = "", since secondsAgo: Double = 125)
        -> CastdDaemonInfo
    {
        var daemon = CastdDaemonInfo()
        daemon.discoveryState = state
        daemon.discovery = text
        daemon.discoverySinceMs = Int64((now.timeIntervalSince1970 - secondsAgo) * 1000)
        return daemon
    }

    func explain(_ daemon: CastdDaemonInfo, interfaces: [String]? = ["eth0"]) throws -> String {
        try #require(NoDevicesHelp.explain(daemon, multicastInterfaces: interfaces, now: now))
    }

    @Test func discoveryOffSaysToGiveADeviceByAddress() throws {
        let text = try explain(daemon(.off, "off (--no-discovery)"))
        #expect(text.contains("--no-discovery") && text.contains("castd --device"), "\(text)")
    }

    @Test func avahiUnreachableSaysWhyAndToStartIt() throws {
        var unavailable = daemon(.unavailable, "unavailable: Avahi is not running")
        unavailable.discoveryReason = "Avahi is not running"
        let text = try explain(unavailable)
        #expect(text.hasPrefix("No devices: castd cannot look for any with mDNS: Avahi is not running."), "\(text)")
        #expect(text.contains("systemctl start avahi-daemon") && text.contains("castd --device"))
    }

    @Test func startingSaysToWait() throws {
        #expect(try explain(daemon(.starting, "starting")).contains("Try again in a few seconds"))
    }

    @Test func noInterfaceThatCanMulticastIsNamedAsTheCause() throws {
        let text = try explain(daemon(.running, "running"), interfaces: [])
        #expect(text.contains("no network interface here can reach a network"), "\(text)")
    }

    @Test func browsingBrieflyIsNotYetAFailure() throws {
        let text = try explain(daemon(.running, "running", since: 3))
        #expect(
            text == "No devices yet: castd began looking 3 s ago. Devices answer within seconds; try again in a moment."
        )
    }

    /// castd's clock and castc's are read apart; a start a little ahead of castc's now is "0 s".
    @Test func aStartAheadOfNowIsZeroSecondsAgo() throws {
        #expect(try explain(daemon(.running, "running", since: -2)).contains("began looking 0 s ago"))
    }

    @Test func browsingLongWithNoAnswerSaysForHowLongWhereAndWhatToCheck() throws {
        let text = try explain(daemon(.running, "running", since: 125), interfaces: ["eth0", "wlan0"])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "No devices: castd has looked with mDNS for 2m 5s and no Cast device answered. This machine's interfaces with multicast: eth0, wlan0."
        )
        #expect(lines.count == 4, "\(text)")
        #expect(text.contains("UDP port 5353") && text.contains("castd --device") && text.contains("guest network"))
    }

    @Test func anOlderCastdGetsTheUsualLine() {
        #expect(NoDevicesHelp.explain(CastdDaemonInfo(), multicastInterfaces: [], now: now) == nil)
        #expect(StatusReport.render(CastdStatusResponse(), now: now) == DeviceTable.noDevices)
    }

    @Test func statusShowsTheExplanationWhereTheDevicesWouldBe() throws {
        var status = CastdStatusResponse()
        status.daemon = daemon(.off, "off (--no-discovery)")
        let help = try explain(status.daemon)
        #expect(StatusReport.render(status, now: now, noDevices: help).hasSuffix(help))
    }

    /// This machine's interfaces: loopback is never one that mDNS can use.
    @Test func loopbackIsNeverAMulticastInterface() throws {
        let interfaces = try #require(NoDevicesHelp.multicastInterfaces())
        #expect(!interfaces.contains("lo"))
    }
}
