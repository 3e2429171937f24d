import ArgumentParser
import CastClient

struct SeekCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "seek",
        abstract: "Move the playback position.",
        usage: GlobalOptions.usage("seek", "<position> [--relative]"),
        discussion: """
            <position> is seconds (120, 90.5), m:ss (1:30) or h:mm:ss (1:02:03). A leading + or - \
            seeks forward or back from the current position, as does --relative.

            A position outside the media (before its start or past its end; for a live stream, \
            outside the range it can seek in) is refused with the range it has (exit 11, \
            OUT_OF_RANGE), whether it is given as a position or as a move; so is \
            `castc load --start` past the media's end.

            Examples:
              castc seek 120
              castc seek 1:30
              castc seek +10
              castc seek -10
              castc seek 30 --relative
            """
    )

    @OptionGroup var options: GlobalOptions

    // Captures unrecognized input so that "-10" is a position, not an unknown option.
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("Seconds, m:ss or h:mm:ss; +/- for relative.", valueName: "position")
    )
    var position: [String] = []

    @Flag(help: "Seek relative to the current position (as a leading + or - does).")
    var relative = false

    func validate() throws {
        _ = try target()
    }

    func target() throws -> SeekTarget {
        // `castc seek -- -10`: "--" ends the options, as it does for every command.
        let position = position.filter { $0 != "--" }
        guard let text = position.first else {
            throw ValidationError("missing <position>: castc seek 1:30, or +10 / -10")
        }
        guard position.count == 1 else {
            throw ValidationError("one position only (got \(position.joined(separator: " ")))")
        }
        return try SeekTarget.parse(text, relative: relative)
    }

    func run() async throws {
        let target = try target()
        let status = try await options.withClient { client in
            try await client.seek(to: target.seconds, relative: target.relative, device: options.deviceSelector)
        }
        try options.printMedia(status)
    }
}
