import ArgumentParser
import CastClient
import Foundation

struct StatusCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show castd, its devices, sessions and what is playing.",
        discussion: """
            One consistent snapshot: the daemon (version, uptime, clients, discovery), then each \
            device with its volume, session, player state, title and position. The position is \
            estimated for now from the last report while playing. --device shows one device.

            Examples:
              castc status
              castc status --device kitchen
              castc status --json | jq '.media[0].playerState'
            """
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        var status = try await options.withClient { try await $0.status() }
        if let selector = options.device { status = try DeviceFilter.status(status, matching: selector) }
        try options.print(status) { StatusReport.render(status, now: .now) }
    }
}
