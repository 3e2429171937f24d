import ArgumentParser
import Testing

@testable import castc

/// Golden tests of castc's usage errors: one line on stderr, as every castc error is, exit 64.
@Suite(.tags(.cpuBound)) struct UsageErrorLineTests {
    func line(_ arguments: [String]) -> String {
        do {
            _ = try Castc.parseAsRoot(arguments)
            Issue.record("\(arguments) parsed")
            return ""
        } catch {
            #expect(Castc.exitCode(for: error).rawValue == 64, "\(arguments)")
            return Castc.usageErrorLine(error, arguments: arguments)
        }
    }

    @Test func eachUsageErrorIsOneLineThatSaysWhereHelpIs() {
        let golden: [([String], String)] = [
            (["load"], "castc: missing expected argument '<url-or-file>'; `castc load --help` says more\n"),
            (
                ["queue", "bogus"],
                "castc: 'bogus' is not a command of castc queue; they are: list, load, add, remove, move, jump, next, prev, repeat\n"
            ),
            (["nope"], "castc: 'nope' is not a command of castc; they are: " + commandList + "\n"),
            (
                ["apps", "Living Room TV"],
                "castc: give the app ids to ask about: castc apps --device \"Living Room TV\" CC1AD845; `castc apps --help` says more\n"
            ),
            (
                ["load", "https://example.com/a.mp4", "--season", "-1"],
                "castc: the value '-1' is invalid for '--season <n>': --season -1 is not a whole number from 0 to 4294967295; `castc load --help` says more\n"
            ),
            (["logs", "-n", "-1"], "castc: -n -1: give 0 or more records; `castc logs --help` says more\n"),
            // An option's value is no command (castc moves options given first after the command).
            (
                ["queue", "--device", "TV", "load"],
                "castc: unexpected argument 'load'; `castc queue --help` says more\n"
            ),
            (
                ["send", "urn:x-cast:com.example.game", "--json", "{bad"],
                "castc: the message is not JSON (The given data was not valid JSON.); send it without --json to send it as a string; `castc send --help` says more\n"
            ),
        ]
        for (arguments, expected) in golden {
            let got = line(arguments)
            #expect(got == expected, "\(arguments)")
            #expect(got.filter { $0 == "\n" }.count == 1, "one line: \(got)")
        }
    }

    /// Negative numbers are values where they mean something: a relative seek, volume steps are
    /// refused with their range, not read as flags.
    @Test func negativeNumbersAreValues() throws {
        let seek = try #require(try Castc.parseAsRoot(["seek", "--", "-10"]) as? SeekCommand)
        let target = try seek.target()
        #expect(target.relative && target.seconds == -10)
        #expect(line(["volume", "down", "--steps", "-2"]).contains("--steps -2 is out of range: give 1 to 100"))
    }

    static let commandList = Castc.configuration.subcommands.map { $0.configuration.commandName ?? "" }.joined(
        separator: ", ")
    var commandList: String { Self.commandList }
}
