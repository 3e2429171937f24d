import ArgumentParser
import CastdSupport
import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@main
struct Castc: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "castc",
        abstract: "Control Google Cast devices through castd.",
        discussion: """
            castc asks castd, the Cast daemon, to do things: castd owns the connections to the \
            devices, so every castc command (and every other castd client) shares one session \
            and one media state per device. Start castd first (`castd`, or its systemd unit).

            Most commands act on one device. Name it with --device (a friendly name in any case, \
            an id, or host[:port]); without it castd picks the device that has a session, else \
            the only device, and says which ones to choose from when it cannot. `castc help \
            <command>` (or `castc <command> --help`) explains each command, with examples.

            Examples:
              castc devices                          list devices
              castc connect "Living Room TV"         start (or join) a session there
              castc load https://example.com/movie.mp4 --title "Movie"
              castc pause; castc play
              castc seek 1:30; castc seek +30; castc seek -10
              castc volume 40%; castc volume up; castc mute
              castc rate 1.5                         play faster
              castc tracks enable 1                  show subtitles track 1
              castc queue load https://x.org/a.mp3 https://x.org/b.mp3
              castc queue next
              castc status                           what plays where, with positions
              castc artwork                          the cover art's file (cached)
              castc watch --json | jq .              follow every change
              castc launch 233637DE                  start a receiver app
              castc send urn:x-cast:com.example.app --json '{"type":"PING"}'
              castc listen urn:x-cast:com.example.app
              castc disconnect --stop-app            end the session and the app
              castc log-level verbose 'CastChannel*' log every Cast message
              castc logs -f                          follow castd's log

            Exit status (1-16 are castd's answers, gRPC status codes):
              0  success                  9  FAILED_PRECONDITION (e.g. nothing plays)
              1  CANCELLED               10  ABORTED (e.g. superseded)
              2  UNKNOWN                 11  OUT_OF_RANGE
              3  INVALID_ARGUMENT        12  UNIMPLEMENTED
              4  DEADLINE_EXCEEDED       13  INTERNAL
              5  NOT_FOUND (no device)   14  UNAVAILABLE (castd not running)
              6  ALREADY_EXISTS          15  DATA_LOSS
              7  PERMISSION_DENIED       16  UNAUTHENTICATED
              8  RESOURCE_EXHAUSTED      64  usage error (bad arguments)
                                         66  a local file castc cannot open
            Errors are one line on stderr: `castc: CODE_NAME: message`. When the device \
            refused, the line says what it refused, why and what to do: `castc: Living Room \
            TV refused the load: it cannot play this media's format (LOAD_FAILED, \
            MEDIA_SRC_NOT_SUPPORTED 104); check the URL and --content-type` (exit 9); when a \
            newer request of the same kind superseded this one: `castc: superseded by a newer \
            seek request` (exit 10).
            """,
        version: CastdVersion.current,
        subcommands: [
            DevicesCommand.self,
            AppsCommand.self,
            StatusCommand.self,
            ArtworkCommand.self,
            ConnectCommand.self,
            LaunchCommand.self,
            DisconnectCommand.self,
            LoadCommand.self,
            PlayCommand.self,
            PauseCommand.self,
            StopCommand.self,
            SeekCommand.self,
            RateCommand.self,
            SkipAdCommand.self,
            QueueCommand.self,
            TracksCommand.self,
            VolumeCommand.self,
            MuteCommand.self,
            UnmuteCommand.self,
            SendCommand.self,
            ListenCommand.self,
            WatchCommand.self,
            LogLevelCommand.self,
            LogsCommand.self,
        ]
    )

    /// Runs a command like ArgumentParser does, except that a `CastdError` becomes one line on
    /// stderr and its status code as the exit code.
    static func main() async {
        let arguments = globalOptionsAfterCommand(Array(CommandLine.arguments.dropFirst()))
        do {
            // status, play, pause, stop, artwork: without ArgumentParser's reflection (FastPath.swift).
            var command: any ParsableCommand
            if let fast = FastPath.command(arguments) { command = fast } else { command = try parseAsRoot(arguments) }
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            Terminal.flush()
        } catch let error as CastdError {
            Terminal.flush()
            let failure = CastcFailure(error)
            Terminal.writeError(failure.line)
            exit(withError: ExitCode(failure.exitCode))
        } catch let failure as CastcExit {
            Terminal.flush()
            Terminal.writeError(failure.line)
            exit(withError: ExitCode(failure.code))
        } catch {
            Terminal.flush()
            let code = exitCode(for: error)
            // Help, --version and exit codes castc chose go out as ArgumentParser prints them.
            if code == .success || error is ExitCode { exit(withError: error) }
            Terminal.writeError(usageErrorLine(error, arguments: arguments))
            exit(withError: code)
        }
    }

    /// A usage error as one line, like every castc error: `castc: <what is wrong>; castc load
    /// --help says more`. A word after a command group that is none of its commands names them.
    /// The command is the words before the first option (``globalOptionsAfterCommand(_:)`` moved
    /// the options given before it): an option's value is no command.
    static func usageErrorLine(_ error: any Error, arguments: [String]) -> String {
        let words = Array(arguments.prefix { !$0.hasPrefix("-") })
        var path: [String] = []
        var parent: any ParsableCommand.Type = Castc.self
        for word in words.prefix(2) {
            guard let next = command(named: word, in: parent) else { break }
            path.append(word)
            parent = next
        }
        let subcommands = parent.configuration.subcommands.map { $0.configuration.commandName ?? "" }
        if !subcommands.isEmpty, words.count > path.count, path.count < 2 {
            let word = words[path.count]
            let group = (["castc"] + path).joined(separator: " ")
            return "castc: '\(word)' is not a command of \(group); they are: \(subcommands.joined(separator: ", "))\n"
        }
        var message = Castc.message(for: error).trimmingCharacters(in: .whitespacesAndNewlines)
        if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
        message = message.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        // ArgumentParser's sentences start with a capital; castc's lines do not ("URL" stays).
        let start = Array(message.prefix(2))
        if start.count == 2, start[0].isUppercase, start[1].isLowercase {
            message = start[0].lowercased() + message.dropFirst()
        }
        return "castc: \(message); `\((["castc"] + path).joined(separator: " ")) --help` says more\n"
    }

    /// Lets the options every command shares come before the command too
    /// (`castc --socket PATH status`), by moving them after it, where ArgumentParser reads them.
    static func globalOptionsAfterCommand(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == "--json" || argument.hasPrefix("--socket=") || argument.hasPrefix("--device=") {
                leading.append(argument)
                index += 1
            } else if (argument == "--socket" || argument == "--device") && index + 1 < arguments.endIndex {
                leading += [argument, arguments[index + 1]]
                index += 2
            } else {
                break
            }
        }
        guard !leading.isEmpty, index < arguments.endIndex, !arguments[index].hasPrefix("-") else { return arguments }
        // The options go after the whole command: `queue next`, not `queue`.
        var end = index + 1
        if end < arguments.endIndex, let group = command(named: arguments[index]),
            command(named: arguments[end], in: group) != nil
        {
            end += 1
        }
        return Array(arguments[index..<end]) + leading + arguments[end...]
    }

    /// The subcommand of `parent` called `name` (or one of its aliases).
    static func command(
        named name: String,
        in parent: any ParsableCommand.Type = Castc.self
    ) -> (any ParsableCommand.Type)? {
        parent.configuration.subcommands.first { command in
            command.configuration.commandName == name || command.configuration.aliases.contains(name)
        }
    }
}
