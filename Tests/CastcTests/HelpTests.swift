import ArgumentParser
import Testing

@testable import castc

@Suite struct HelpTests {
    static let subcommands = [
        "devices", "status", "connect", "disconnect", "load", "play", "pause", "stop", "seek", "volume", "watch",
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
        let commands: [any ParsableCommand.Type] = [Castc.self] + Castc.configuration.subcommands
        for command in commands {
            let help = Castc.helpMessage(for: command, columns: 80)
            for line in help.split(separator: "\n") {
                #expect(line.count <= 80, "\(command): \(line)")
            }
        }
    }

    @Test func everySubcommandTeachesWithExamples() {
        for command in Castc.configuration.subcommands {
            let help = Castc.helpMessage(for: command, columns: 80)
            let name = command.configuration.commandName ?? ""
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
}
