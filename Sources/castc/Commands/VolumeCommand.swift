import ArgumentParser
import CastClient

struct VolumeCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "volume",
        abstract: "Set a device's volume, or mute it.",
        usage: GlobalOptions.usage("volume", "[<level>] [--mute | --unmute]"),
        discussion: """
            The device's volume (not the stream's): a level from 0 to 1, or a percentage.

            Examples:
              castc volume 0.4
              castc volume 40%
              castc volume --mute
              castc volume 25% --unmute
            """
    )

    enum Muting: String, EnumerableFlag {
        case mute, unmute

        static func help(for value: Muting) -> ArgumentHelp? {
            value == .mute ? "Mute the device." : "Unmute the device."
        }
    }

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("0 to 1 (0.4), or 0% to 100% (40%).", valueName: "level"))
    var level: String?

    @Flag(exclusivity: .exclusive)
    var muting: Muting?

    func validate() throws {
        guard level != nil || muting != nil else {
            throw ValidationError("give a level (0.4 or 40%), --mute or --unmute")
        }
        if let level { _ = try VolumeLevel.parse(level) }
    }

    func run() async throws {
        let value = try level.map(VolumeLevel.parse)
        let muted = muting.map { $0 == .mute }
        let volume = try await options.withClient { client in
            try await client.setVolume(level: value, muted: muted, device: options.deviceSelector)
        }
        try options.print(volume) { "volume " + MediaSummary.volume(volume) }
    }
}
