import CastTestSupport
import ArgumentParser
import Testing

@testable import castc

@Suite(.tags(.cpuBound)) struct HelpTests {
    static let subcommands = [
        "devices", "apps", "status", "artwork", "connect", "launch", "disconnect", "load", "play", "pause", "stop",
        "seek", "rate",
        "skip-ad", "queue", "tracks", "volume", "mute", "unmute", "send", "listen", "watch", "log-level", "logs",
    ]

    @Test func rootHelpListsCommandsExamplesAndExitCodes() {
        let help = Castc.helpMessage(columns: 80)
        for name in Self.subcommands {
            #expect(help.contains("\n  \(name) "), "missing \(name)")
        }
        #expect(help.contains("Examples:"))
        #expect(help.contains("castc load https://example.com/movie.mp4"))
        #expect(help.contains("castc seek 1:30"))
        #expect(help.contains("Exit status"))
        for code in ["0  success", "5  NOT_FOUND", "14  UNAVAILABLE", "3  INVALID_ARGUMENT", "64  usage error"] {
            #expect(help.contains(code), "missing exit code \(code)")
        }
        #expect(help.contains("castc: CODE_NAME: message"))
    }

    @Test func helpFitsEightyColumns() {
        let commands: [any ParsableCommand.Type] = [Castc.self, QueueCommand.self, TracksCommand.self] + leafCommands()
        for command in commands {
            let help = Castc.helpMessage(for: command, columns: 80)
            for line in help.split(separator: "\n") {
                #expect(line.count <= 80, "\(command): \(line)")
            }
        }
    }

    @Test func everySubcommandTeachesWithExamples() {
        for (name, command) in leafCommandsByName() {
            let help = Castc.helpMessage(for: command, columns: 80)
            #expect(help.contains("Examples:"), "\(name)")
            #expect(help.contains("castc \(name)"), "\(name)")
            #expect(help.contains("--socket <path>"), "\(name)")
            #expect(help.contains("--device <name|id|host>"), "\(name)")
            #expect(help.contains("--json"), "\(name)")
        }
    }

    @Test func commandSpecificHelp() {
        let load = Castc.helpMessage(for: LoadCommand.self, columns: 80)
        for option in [
            "<url>", "--content-type <type>", "--title <title>", "--stream-type <type>", "--start <position>",
            "--no-autoplay",
        ] {
            #expect(load.contains(option), "load: \(option)")
        }
        let seek = Castc.helpMessage(for: SeekCommand.self, columns: 80)
        #expect(seek.contains("castc seek <position> [--relative]"))
        #expect(seek.contains("castc seek -10"))
        #expect(seek.contains("castc seek +10"))
        let volume = Castc.helpMessage(for: VolumeCommand.self, columns: 80)
        #expect(volume.contains("40%"))
        #expect(volume.contains("--mute"))
        #expect(volume.contains("--unmute"))
        let connect = Castc.helpMessage(for: ConnectCommand.self, columns: 80)
        #expect(connect.contains("--app <app-id>"))
        #expect(connect.contains("<device>"))
        #expect(Castc.helpMessage(for: DisconnectCommand.self, columns: 80).contains("--stop-app"))
        #expect(Castc.helpMessage(for: WatchCommand.self, columns: 80).contains("Ctrl-C"))
    }

    @Test func examplesDoNotWrap() {
        let commands: [any ParsableCommand.Type] = [Castc.self, QueueCommand.self, TracksCommand.self] + leafCommands()
        for command in commands {
            let help = Castc.helpMessage(for: command, columns: 80)
            guard let examples = help.range(of: "Examples:\n") else { continue }
            let block = help[examples.upperBound...].split(separator: "\n\n", maxSplits: 1)[0]
            for line in block.split(separator: "\n") {
                #expect(line.hasPrefix("  castc ") || line.hasPrefix("    "), "\(command): a wrapped example: \(line)")
            }
        }
    }

    @Test func groupsListTheirSubcommandsWithExamples() {
        for (group, subcommands) in [
            (
                QueueCommand.self as any ParsableCommand.Type,
                ["load", "add", "list", "remove", "move", "jump", "next", "prev", "repeat"]
            ),
            (TracksCommand.self, ["list", "enable", "disable", "style"]),
        ] {
            let help = Castc.helpMessage(for: group, columns: 80)
            #expect(help.contains("Examples:"))
            #expect(help.contains("--socket <path>"))
            for name in subcommands { #expect(help.contains("\n  \(name)"), "\(group): \(name)") }
        }
    }

    @Test func newCommandsDocumentTheirOptions() {
        func expectHelp(_ command: any ParsableCommand.Type, _ parts: [String]) {
            let help = Castc.helpMessage(for: command, columns: 80)
            for part in parts { #expect(help.contains(part), "\(command): \(part)") }
        }
        expectHelp(
            LoadCommand.self,
            [
                "--stream-type <type>", "--start <position>", "--no-autoplay", "--subtitles <file|url>",
                "--subtitles-lang <lang>",
                "--no-subtitles-active", "--metadata-type <type>", "--title <title>", "--subtitle <text>",
                "--artist <name>", "--album <name>", "--album-artist <name>", "--series <title>", "--season <n>",
                "--episode <n>", "--image <url>", "--duration <time>", "--credentials <token>",
                "--credentials-type <type>", "--custom-data <json>", "--rate <rate>", "--entity <entity>",
                "--ad-break <ad>", "POSITION:CLIP_URL[:DURATION[:SKIPPABLE_AFTER]]", "@WIDTHxHEIGHT", "--ad-break pre:",
                "--subtitles https://", "generic, movie, tv, music, photo",
            ])
        expectHelp(
            QueueLoadCommand.self,
            [
                "<url-or-file>", "natural order", "--start-item <n>", "--repeat <mode>", "--start <position>",
                "1 is the first",
            ])
        expectHelp(QueueAddCommand.self, ["--before <item>", "--play-now", "#ID"])
        expectHelp(QueueMoveCommand.self, ["--before <item>", "--to-end", "castc queue move 4 --before 1"])
        expectHelp(QueueRepeatCommand.self, ["off|all|one|shuffle", "castc queue repeat all"])
        expectHelp(QueuePrevCommand.self, ["castc queue prev"])
        expectHelp(RateCommand.self, ["0.5", "2.0", "castc rate 1.5"])
        expectHelp(TracksListCommand.self, ["castc tracks list"])
        expectHelp(TracksEnableCommand.self, ["<id>", "castc tracks enable 1"])
        expectHelp(TracksDisableCommand.self, ["--all", "castc tracks disable --all"])
        expectHelp(
            TracksStyleCommand.self,
            [
                "--font-scale <scale>", "--foreground <color>", "--background <color>", "--edge-type <type>",
                "--font-family <name>", "#RRGGBBAA",
            ])
        expectHelp(VolumeCommand.self, ["up", "down", "--steps <n>", "--stream", "castc volume up", "fixed", "step"])
        expectHelp(MuteCommand.self, ["--stream", "castc mute"])
        expectHelp(UnmuteCommand.self, ["--stream", "castc unmute"])
        expectHelp(SkipAdCommand.self, ["castc skip-ad"])
        expectHelp(
            LaunchCommand.self,
            [
                "<app-id>", "--android-tv", "--credentials <token>", "--credentials-type <type>", "--language <lang>",
                "--relaunch", "--join-only",
            ])
        expectHelp(AppsCommand.self, ["<device>", "<app-id>", "castc apps"])
        expectHelp(
            DevicesListCommand.self, ["--app <app-id>", "--capability <capability>", "video-out", "audio-in", "group"])
        expectHelp(DevicesCommand.self, ["castc devices forget", "pins the key", "list"])
        expectHelp(DevicesForgetCommand.self, ["<device>", "castc devices forget", "replaced"])
        expectHelp(SendCommand.self, ["<namespace>", "<message>", "urn:x-cast:", "--json", "castc send"])
        expectHelp(ListenCommand.self, ["<namespace>", "--count <n>", "Ctrl-C", "castc listen"])
        expectHelp(StatusCommand.self, ["--verbose"])
        expectHelp(WatchCommand.self, ["--verbose"])
    }
}

/// castc's commands that run (not groups), by the name they are called with.
func leafCommandsByName(
    _ parent: any ParsableCommand.Type = Castc.self,
    prefix: String = ""
) -> [(name: String, command: any ParsableCommand.Type)] {
    parent.configuration.subcommands.flatMap { command -> [(name: String, command: any ParsableCommand.Type)] in
        let name = prefix + (command.configuration.commandName ?? "")
        if command.configuration.subcommands.isEmpty { return [(name, command)] }
        return leafCommandsByName(command, prefix: name + " ")
    }
}

func leafCommands() -> [any ParsableCommand.Type] { leafCommandsByName().map(\.command) }
