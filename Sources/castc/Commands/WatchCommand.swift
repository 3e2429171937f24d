import ArgumentParser
import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct WatchCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow device, session and media changes as they happen.",
        usage: GlobalOptions.usage("watch", "[--verbose]"),
        discussion: """
            Prints a snapshot, then one line per change with its time, until interrupted \
            (Ctrl-C, which exits 0). --json prints each castd.v1.Event as one JSON object per \
            line. --device follows one device. --verbose prints, under each media change, the \
            whole media status as `castc status --verbose` shows it. If castd goes away, castc \
            exits 14 (UNAVAILABLE).

            Examples:
              castc watch
              castc watch --device kitchen
              castc watch --verbose
              castc watch --json | jq -c 'select(.media) | .media.playerState'
            """
    )

    @OptionGroup var options: GlobalOptions

    @Flag(name: .shortAndLong, help: "Print the whole media status under each media change.")
    var verbose = false

    func run() async throws {
        let json = options.json
        let selector = options.device
        let verbose = verbose
        try await options.withClient { client in
            // Until the stream ends (an error, or castd ending it), or Ctrl-C.
            try await Interrupt.orUntilInterrupted {
                try await Self.follow(client.watch(), json: json, selector: selector, verbose: verbose)
            }
        }
    }

    static func follow(_ events: CastdEventStream, json: Bool, selector: String?, verbose: Bool = false) async throws {
        var filter = selector.map(DeviceFilter.init(selector:))
        var formatter = EventFormatter(verbose: verbose)
        for try await event in events {
            var event = event
            if filter != nil {
                guard let admitted = filter?.admit(event) else { continue }
                event = admitted
            }
            let line = json ? try JSONOutput.string(event) : formatter.line(for: event, now: .now)
            // Nobody reads any more (`castc watch | head`): done.
            guard Terminal.streamLine(line) else { return }
        }
    }
}
