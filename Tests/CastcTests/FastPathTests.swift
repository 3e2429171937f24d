import CastTestSupport
import ArgumentParser
import Testing

@testable import castc

/// castc builds status, play, pause, stop and artwork itself (FastPath.swift): the result must be what
/// ArgumentParser would have built, and everything else must still go to ArgumentParser.
@Suite(.tags(.cpuBound)) struct FastPathTests {
    static let handled: [[String]] = [
        ["status"], ["status", "--verbose"], ["status", "-v", "--json"],
        ["status", "--socket", "/tmp/c.sock", "--device", "Kitchen"],
        ["status", "--socket=/tmp/c.sock", "--device=Living Room TV", "--verbose"],
        ["play"], ["pause", "--json"], ["stop", "--device", "192.168.1.20:8009"],
        ["pause", "--device", "Den", "--socket", "/run/castd/castd.sock", "--json"],
        ["artwork"], ["artwork", "--size", "64x64"], ["artwork", "--size=300", "--background"],
        ["artwork", "--output", "-"], ["artwork", "--output=/tmp/cover.png", "--device", "Den", "--json"],
        ["artwork", "--background", "--output", "a b.jpg", "--socket", "/tmp/c.sock"],
    ]

    @Test(arguments: handled)
    func buildsWhatArgumentParserBuilds(_ arguments: [String]) throws {
        let fast = try #require(FastPath.command(arguments), "\(arguments) should take the fast path")
        let parsed = try Castc.parseAsRoot(arguments)
        #expect(type(of: fast) == type(of: parsed), "\(arguments)")
        let fastOptions = try #require((fast as? any CastcCommand)?.options)
        let parsedOptions = try #require((parsed as? any CastcCommand)?.options)
        #expect(fastOptions.socket == parsedOptions.socket, "\(arguments)")
        #expect(fastOptions.device == parsedOptions.device, "\(arguments)")
        #expect(fastOptions.json == parsedOptions.json, "\(arguments)")
        if let fast = fast as? StatusCommand, let parsed = parsed as? StatusCommand {
            #expect(fast.verbose == parsed.verbose, "\(arguments)")
        }
        if let fast = fast as? ArtworkCommand, let parsed = parsed as? ArtworkCommand {
            #expect(fast.size == parsed.size, "\(arguments)")
            #expect(fast.background == parsed.background, "\(arguments)")
            #expect(fast.output == parsed.output, "\(arguments)")
            #expect(fast.hint == parsed.hint, "\(arguments)")
        }
    }

    @Test(arguments: [
        [], ["devices"], ["seek", "10"], ["status", "--help"], ["status", "-h"], ["help", "status"],
        ["pause", "--verbose"], ["status", "--socket", ""], ["status", "--socket"], ["status", "--socket="],
        ["status", "--device", "-x"], ["status", "--json", "--json"], ["status", "-v", "--verbose"],
        ["status", "extra"], ["status", "-vj"], ["status", "--json=yes"], ["play", "--", "x"], ["Status"],
        ["status", "--size", "64"], ["pause", "--background"], ["artwork", "--size", "big"], ["artwork", "--size"],
        ["artwork", "--output"], ["artwork", "--output", "-x"], ["artwork", "--background=yes"],
        ["artwork", "--verbose"], ["artwork", "--size", "64", "--size", "32"], ["artwork", "--help"],
    ])
    func leavesEverythingElseToArgumentParser(_ arguments: [String]) {
        #expect(FastPath.command(arguments) == nil, "\(arguments)")
    }

    /// A property added to one of these commands would not be set by the fast path (and reading
    /// it would stop castc): add it to FastPath.command too, then here.
    @Test func commandsHaveOnlyThePropertiesItSets() throws {
        func labels(_ value: Any) -> [String] { Mirror(reflecting: value).children.compactMap(\.label) }
        #expect(labels(try Castc.parseAsRoot(["status"])) == ["_options", "_verbose"])
        for name in ["play", "pause", "stop"] {
            #expect(labels(try Castc.parseAsRoot([name])) == ["_options"], "\(name)")
        }
        #expect(
            labels(try #require(FastPath.command(["status"]) as? StatusCommand).options) == [
                "_socket", "_device", "_json",
            ])
        #expect(
            labels(try Castc.parseAsRoot(["artwork"])) == ["_options", "_size", "_background", "_output"])
        #expect(FastPath.commandNames == ["status", "play", "pause", "stop", "artwork"])
    }
}
