import CastTestSupport
import ArgumentParser
import CastClient
import Testing

@testable import castc

/// Parses a command line as castc does and returns the subcommand.
func parse<Command: ParsableCommand>(_ arguments: [String], as: Command.Type = Command.self) throws -> Command {
    let command = try Castc.parseAsRoot(arguments)
    return try #require(command as? Command, "parsed \(type(of: command)), expected \(Command.self)")
}

/// Parses a command line that must be refused as a usage error (exit 64); returns the message.
func usageError(_ arguments: [String]) -> String {
    do {
        let command = try Castc.parseAsRoot(arguments)
        Issue.record("\(arguments) parsed as \(type(of: command))")
        return ""
    } catch {
        #expect(Castc.exitCode(for: error) == .validationFailure, "\(arguments): \(error)")
        #expect(Castc.exitCode(for: error).rawValue == 64)
        return Castc.message(for: error)
    }
}

@Suite(.tags(.cpuBound)) struct ArgumentParsingTests {
    @Test func globalOptionsOnEveryCommand() throws {
        let commands = [
            ["devices"], ["devices", "forget", "TV"], ["apps", "TV", "CC1AD845"], ["status"], ["artwork"], ["connect"],
            ["launch", "CC1AD845"], ["disconnect"],
            ["load", "https://example.com/a.mp4"], ["play"], ["pause"], ["stop"], ["seek", "10"], ["rate", "1.5"],
            ["skip-ad"], ["queue", "list"], ["queue", "load", "https://x.org/a.mp3"],
            ["queue", "add", "https://x.org/b.mp3"],
            ["queue", "remove", "2"], ["queue", "move", "2", "--to-end"], ["queue", "jump", "2"], ["queue", "next"],
            ["queue", "prev"], ["queue", "repeat", "all"], ["tracks", "list"], ["tracks", "enable", "1"],
            ["tracks", "disable", "--all"], ["tracks", "style", "--font-scale", "2"], ["volume", "50%"], ["mute"],
            ["unmute"], ["send", "urn:x-cast:com.example", "{}"], ["listen", "urn:x-cast:com.example"], ["watch"],
            ["logs"],
        ]
        // castd has one log filter, for every device: log-level refuses --device (tested there).
        #expect(commands.count + 1 == leafCommands().count)
        for arguments in commands {
            let command = try Castc.parseAsRoot(
                arguments + ["--socket", "/tmp/c.sock", "--device", "Kitchen", "--json"])
            let options = try #require((command as? any CastcCommand)?.options, "\(arguments)")
            #expect(options.socket == "/tmp/c.sock", "\(arguments)")
            #expect(options.socketPath(environment: [:]) == "/tmp/c.sock", "\(arguments)")
            #expect(options.deviceSelector == "Kitchen", "\(arguments)")
            #expect(options.json, "\(arguments)")
        }
    }

    @Test func deviceDefaultsToDaemonsChoice() throws {
        let command = try parse(["play"], as: PlayCommand.self)
        #expect(command.options.device == nil)
        #expect(command.options.deviceSelector == "")
        #expect(!command.options.json)
    }

    @Test func emptyGlobalOptionsAreRefused() {
        #expect(usageError(["status", "--socket", ""]).contains("--socket"))
        #expect(usageError(["play", "--device", ""]).contains("--device"))
    }

    @Test func devicesAndStatus() throws {
        _ = try parse(["devices"], as: DevicesListCommand.self)
        _ = try parse(["devices", "list", "--capability", "group"], as: DevicesListCommand.self)
        #expect(
            try parse(["devices", "forget", "Living Room TV"], as: DevicesForgetCommand.self).device == "Living Room TV"
        )
        #expect(
            try parse(
                Castc.globalOptionsAfterCommand(["--json", "devices", "forget", "abc"]), as: DevicesForgetCommand.self
            )
            .options.json)
        _ = usageError(["devices", "forget"])
        _ = usageError(["devices", "forget", " "])
        let status = try parse(["status", "--json"], as: StatusCommand.self)
        #expect(status.options.json)
        _ = usageError(["devices", "extra"])
    }

    @Test func connect() throws {
        let plain = try parse(["connect"], as: ConnectCommand.self)
        #expect(plain.selector == "")
        #expect(plain.appID == nil)
        let named = try parse(
            ["connect", "Living Room TV", "--device", "Kitchen", "--app", "5C3F0A3C"], as: ConnectCommand.self)
        #expect(named.selector == "Living Room TV")  // the positional device wins over --device
        #expect(named.appID == "5C3F0A3C")
        let byOption = try parse(["connect", "--device", "192.168.1.20:8009"], as: ConnectCommand.self)
        #expect(byOption.selector == "192.168.1.20:8009")
        _ = usageError(["connect", "--app", ""])
        _ = usageError(["connect", "a", "b"])
    }

    @Test func disconnect() throws {
        #expect(try parse(["disconnect"], as: DisconnectCommand.self).stopApp == false)
        #expect(try parse(["disconnect", "--stop-app"], as: DisconnectCommand.self).stopApp == true)
    }

    @Test func load() throws {
        let load = try parse(
            [
                "load", "https://example.com/live.m3u8", "--content-type", "application/x-mpegURL", "--title", "News",
                "--stream-type", "live", "--start", "1:30", "--no-autoplay",
            ],
            as: LoadCommand.self
        )
        #expect(load.url == "https://example.com/live.m3u8")
        #expect(load.start == 90)
        #expect(load.autoplay == false)
        #expect(load.media.contentType == "application/x-mpegURL")
        #expect(load.media.streamType == .live)
        #expect(load.media.metadata.title == "News")
        #expect(load.media.contentID == "https://example.com/live.m3u8")

        let plain = try parse(["load", "http://192.168.1.5:8000/song.flac"], as: LoadCommand.self)
        #expect(plain.autoplay == true)
        #expect(plain.start == nil)
        #expect(plain.media.contentType == "audio/flac")  // guessed from the extension
        #expect(plain.media.streamType == .unspecified)
        #expect(!plain.media.hasMetadata)

        #expect(try parse(["load", "rtsp://camera/stream"], as: LoadCommand.self).media.contentType == "")
        #expect(
            try parse(["load", "https://x.org/a", "--stream-type", "none"], as: LoadCommand.self).media.streamType
                == .none)
        #expect(
            try parse(["load", "https://x.org/a", "--stream-type", "buffered"], as: LoadCommand.self).media.streamType
                == .buffered)
    }

    @Test func loadRefusesWhatIsNotAURL() throws {
        // Without a scheme, it is a file here (castc opens it as it runs: LocalFileTests).
        #expect(try parse(["load", "movie.mp4"], as: LoadCommand.self).media.contentID == "")
        #expect(try parse(["load", "/home/me/movie.mp4"], as: LoadCommand.self).media.contentType == "")
        #expect(usageError(["load", "https://"]).contains("has no host"))
        #expect(usageError(["load", "https://x.org/a b.mp4"]).contains("contains spaces"))
        _ = usageError(["load"])
        _ = usageError(["load", "https://x.org/a", "--stream-type", "vod"])
        #expect(usageError(["load", "https://x.org/a", "--start", "1:75"]).contains("'1:75' is not a position"))
        #expect(usageError(["load", "https://x.org/a", "--content-type", "video"]).contains("not a content type"))
        let withCodecs = "video/mp4; codecs=\"avc1.64001F\""
        #expect(
            try parse(["load", "https://x.org/a", "--content-type", withCodecs], as: LoadCommand.self).media.contentType
                == withCodecs)
    }

    @Test func seekPositions() throws {
        func target(_ arguments: [String]) throws -> SeekTarget {
            try parse(["seek"] + arguments, as: SeekCommand.self).target()
        }
        #expect(try target(["120"]) == SeekTarget(seconds: 120, relative: false))
        #expect(try target(["1:30"]) == SeekTarget(seconds: 90, relative: false))
        #expect(try target(["1:02:03"]) == SeekTarget(seconds: 3723, relative: false))
        #expect(try target(["90.5"]) == SeekTarget(seconds: 90.5, relative: false))
        #expect(try target(["+10"]) == SeekTarget(seconds: 10, relative: true))
        #expect(try target(["-10"]) == SeekTarget(seconds: -10, relative: true))
        #expect(try target(["-1:00"]) == SeekTarget(seconds: -60, relative: true))
        #expect(try target(["30", "--relative"]) == SeekTarget(seconds: 30, relative: true))
        #expect(try target(["--relative", "-5"]) == SeekTarget(seconds: -5, relative: true))
        let withOptions = try parse(["seek", "-10", "--device", "Kitchen", "--json"], as: SeekCommand.self)
        #expect(try withOptions.target() == SeekTarget(seconds: -10, relative: true))
        #expect(withOptions.options.deviceSelector == "Kitchen")
    }

    @Test func seekRefusesBadPositions() {
        for bad in ["1:90", "abc", "1::2", ":30", "1:2:3:4", "--10", "+", "1e3", "inf", "1.5:00", "12.", "-1:60"] {
            #expect(usageError(["seek", bad]).contains("is not a position"), "\(bad)")
        }
        #expect(usageError(["seek"]).contains("missing <position>"))
        #expect(usageError(["seek", "10", "20"]).contains("one position only"))
    }

    @Test func volumeLevels() throws {
        func level(_ text: String) throws -> Double? {
            let command = try parse(["volume", text], as: VolumeCommand.self)
            return try command.level.map(VolumeLevel.parse)
        }
        #expect(try level("0.4") == 0.4)
        #expect(try level("40%") == 0.4)
        #expect(try level("0") == 0)
        #expect(try level("1") == 1)
        #expect(try level("100%") == 1)
        #expect(try level("0%") == 0)
        let muted = try parse(["volume", "--mute"], as: VolumeCommand.self)
        #expect(muted.level == nil && muted.muting == .mute)
        let both = try parse(["volume", "25%", "--unmute"], as: VolumeCommand.self)
        #expect(both.level == "25%" && both.muting == .unmute)
    }

    @Test func volumeRefusesOutOfRange() {
        #expect(usageError(["volume", "40"]).contains("write 40%"))
        #expect(usageError(["volume", "1.01"]).contains("out of range"))
        #expect(usageError(["volume", "101%"]).contains("out of range"))
        #expect(usageError(["volume", "loud"]).contains("is not a volume"))
        #expect(usageError(["volume", "%"]).contains("is not a volume"))
        _ = usageError(["volume", "--mute", "--unmute"])
    }

    @Test func unknownCommandsAndOptionsAreUsageErrors() {
        _ = usageError(["rewind"])
        _ = usageError(["status", "--colour"])
        _ = usageError(["queue", "shuffle"])
        _ = usageError(["tracks", "delete", "1"])
        _ = usageError(["play", "--device"])
    }
}

@Suite(.tags(.cpuBound)) struct GlobalOptionOrderTests {
    @Test func sharedOptionsMayComeBeforeTheCommand() throws {
        #expect(
            Castc.globalOptionsAfterCommand(["--socket", "/s", "--json", "status"]) == [
                "status", "--socket", "/s", "--json",
            ])
        #expect(
            Castc.globalOptionsAfterCommand(["--device=TV", "seek", "-10"]) == ["seek", "--device=TV", "-10"])
        // Nothing to move, or nothing to move it behind: unchanged (ArgumentParser reports it).
        #expect(Castc.globalOptionsAfterCommand(["pause", "--json"]) == ["pause", "--json"])
        #expect(Castc.globalOptionsAfterCommand(["--socket"]) == ["--socket"])
        #expect(Castc.globalOptionsAfterCommand(["--json", "--help"]) == ["--json", "--help"])
        let command = try Castc.parseAsRoot(Castc.globalOptionsAfterCommand(["--socket", "/tmp/x.sock", "devices"]))
        #expect(command is DevicesListCommand)
    }

    @Test func sharedOptionsGoAfterTheWholeSubcommand() throws {
        #expect(
            Castc.globalOptionsAfterCommand(["--device", "TV", "queue", "next"]) == ["queue", "next", "--device", "TV"])
        #expect(
            Castc.globalOptionsAfterCommand(["--json", "tracks", "enable", "2"]) == ["tracks", "enable", "--json", "2"])
        #expect(Castc.globalOptionsAfterCommand(["--json", "queue", "previous"]) == ["queue", "previous", "--json"])
        // A group without its subcommand: the options go after the group (its default subcommand reads them).
        #expect(Castc.globalOptionsAfterCommand(["--json", "queue"]) == ["queue", "--json"])
        let next = try Castc.parseAsRoot(Castc.globalOptionsAfterCommand(["--device", "TV", "queue", "next"]))
        #expect((next as? QueueNextCommand)?.options.deviceSelector == "TV")
        let list = try Castc.parseAsRoot(Castc.globalOptionsAfterCommand(["--json", "queue"]))
        #expect((list as? QueueListCommand)?.options.json == true)
        let tracks = try Castc.parseAsRoot(["tracks", "--device", "TV"])
        #expect((tracks as? TracksListCommand)?.options.deviceSelector == "TV")
    }
}
