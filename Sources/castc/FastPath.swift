import ArgumentParser

/// The commands people run most, and run from key bindings and status bars, built without
/// ArgumentParser: `status [--verbose | -v]`, `play`, `pause`, `stop` and
/// `artwork [--size WxH] [--background] [--output FILE]`, with `--socket`, `--device`
/// (`--name value` or `--name=value`) and `--json`, each at most once.
///
/// ArgumentParser finds a command's options by reflection, and every type it looks at costs
/// the Swift runtime a scan of all the program's protocol conformances, a large part of castc's
/// start-up (figures: "castc start-up" in BENCHMARKS.md). Any other
/// command line, `--help` and every mistake included, goes to ArgumentParser as before, so
/// usage errors and help read the same. The commands built here are the same values
/// ArgumentParser builds (`FastPathTests` checks both ways).
enum FastPath {
    /// The command for `arguments` (without the program name, global options already moved
    /// after the command), or nil when ArgumentParser must parse them.
    static func command(_ arguments: [String]) -> (any AsyncParsableCommand)? {
        guard let name = arguments.first, commandNames.contains(name) else { return nil }
        var socket: String?
        var device: String?
        var json = false
        var verbose = false
        var size: ArtworkSize?
        var background = false
        var output: String?
        var seen: Set<String> = []
        var index = arguments.index(after: arguments.startIndex)
        while index < arguments.endIndex {
            var option = arguments[index]
            var value: String?
            if option.hasPrefix("--"), let equals = option.firstIndex(of: "=") {
                value = String(option[option.index(after: equals)...])
                option = String(option[..<equals])
            }
            let canonical = option == "-v" ? "--verbose" : option
            guard seen.insert(canonical).inserted else { return nil }
            let artworkOnly = ["--size", "--output", "--background"].contains(canonical)
            guard !artworkOnly || name == "artwork" else { return nil }
            switch canonical {
            case "--socket", "--device", "--size", "--output":
                if value == nil {
                    index += 1
                    guard index < arguments.endIndex else { return nil }
                    value = arguments[index]
                }
                // Empty values and values that look like options (but `--output -`, standard
                // output): ArgumentParser says what is wrong.
                guard let value, !value.isEmpty, !value.hasPrefix("-") || (canonical == "--output" && value == "-")
                else { return nil }
                switch canonical {
                case "--socket": socket = value
                case "--device": device = value
                case "--output": output = value
                default:
                    guard let parsed = try? ArtworkSize.parse(value) else { return nil }
                    size = parsed
                }
            case "--background":
                guard value == nil else { return nil }
                background = true
            case "--json":
                guard value == nil else { return nil }
                json = true
            case "--verbose":
                guard value == nil, name == "status" else { return nil }
                verbose = true
            default:
                return nil
            }
            index += 1
        }
        var options = GlobalOptions()
        options.socket = socket
        options.device = device
        options.json = json
        switch name {
        case "status":
            var command = StatusCommand()
            command.options = options
            command.verbose = verbose
            return command
        case "play":
            var command = PlayCommand()
            command.options = options
            return command
        case "pause":
            var command = PauseCommand()
            command.options = options
            return command
        case "artwork":
            // Every property set, nil ones too: reading one ArgumentParser did not set stops castc.
            var command = ArtworkCommand()
            command.options = options
            command.size = size
            command.background = background
            command.output = output
            return command
        default:
            var command = StopCommand()
            command.options = options
            return command
        }
    }

    static let commandNames: Set<String> = ["status", "play", "pause", "stop", "artwork"]
}
