import ArgumentParser
import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct StatusCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show castd, its devices, sessions and what is playing.",
        usage: GlobalOptions.usage("status", "[--verbose]"),
        discussion: """
            One consistent snapshot: the cast state (no devices available, not connected, \
            connecting to a device, connected to it), the daemon (version, uptime, clients, \
            discovery), then each \
            device with its volume, session, and what plays: player state, title, position and \
            duration, and when they apply the playback rate, the queue (item 2 of 5, repeat \
            mode), active tracks, the ad that plays and when it can be skipped, video size, and \
            a live stream's seekable range. Positions are estimated for now from the last \
            report while playing. --device shows one device. --verbose adds each device's \
            volume step, each session's namespaces, the media's URL and content type, and the \
            commands the player supports.

            Examples:
              castc status
              castc status --device kitchen
              castc status --verbose
              castc status --json | jq '.media[0].playerState'
            """
    )

    @OptionGroup var options: GlobalOptions

    @Flag(name: .shortAndLong, help: "Show more: volume steps, namespaces, URLs, supported commands.")
    var verbose = false

    func run() async throws {
        let whole = try await options.send(
            CastcCall(CastdMethods.getStatus, Castd_V1_GetStatusRequest()))
        // --device narrows the devices shown; castd's own lines still count all it serves.
        var status = whole
        if let selector = options.device { status = try DeviceFilter.status(whole, matching: selector) }
        let help =
            status.devices.isEmpty
            ? NoDevicesHelp.explain(status.daemon)
            : nil
        try options.print(status) {
            StatusReport.render(status, daemonWide: whole, now: .now, verbose: verbose, noDevices: help)
        }
    }
}
