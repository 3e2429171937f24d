import CastTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every castc command the README shows, taken from README.md itself (so the two cannot drift),
/// run as written by a shell, in the README's order, against castd and an emulated device named
/// as the README names it ("Living Room TV", with the app ABCD1234 that declares the README's
/// namespace, com.example.game), the only device, as a newcomer's one TV. Each must exit 0, unless
/// ``ReadmeCommandsTests/outcomes`` says otherwise and why; a command that follows until Ctrl-C
/// (`watch`, `logs -f`, `listen` without --count) must print something, then end with 0 on
/// SIGINT.
@Suite(.serialized) struct ReadmeCommandsTests {
    /// A command line of the README: the text after `castc`, and the README line it is on.
    struct Command: CustomStringConvertible {
        var text: String
        var line: Int
        var description: String { "README.md:\(line): \(text)" }
        /// `watch`, `logs -f` and `listen` print until Ctrl-C (`listen --count 1`: until a
        /// message comes, which here none does).
        var follows: Bool {
            text.hasPrefix("castc watch") || text.hasPrefix("castc logs -f") || text.hasPrefix("castc listen")
        }
    }

    /// The README's shell blocks' castc commands: comments cut, `\` continuations joined, and
    /// `a; b` split. Lines with a placeholder (`ITEM`, `[--option]`, `a|b`, `…`) or a program
    /// this machine need not have (`| display -`) are left out, and returned apart.
    static func commands(in readme: String) -> (runnable: [Command], placeholders: [Command]) {
        var runnable: [Command] = []
        var placeholders: [Command] = []
        var inShell = false
        var pending: (text: String, line: Int)?
        for (index, raw) in readme.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            if line.hasPrefix("```") {
                inShell = line == "```sh"
                continue
            }
            guard inShell else { continue }
            var text = line.trimmingCharacters(in: .whitespaces)
            if let comment = text.range(of: "   #") ?? text.range(of: "  #") {
                text = String(text[..<comment.lowerBound])
            }
            text = text.trimmingCharacters(in: .whitespaces)
            if var joined = pending {
                joined.text += " " + text
                pending = nil
                text = joined.text
                if text.hasSuffix("\\") {
                    pending = (String(text.dropLast()).trimmingCharacters(in: .whitespaces), joined.line)
                    continue
                }
                split(text, line: joined.line)
                continue
            }
            guard text.hasPrefix("castc ") || text == "castc" else { continue }
            if text.hasSuffix("\\") {
                pending = (String(text.dropLast()).trimmingCharacters(in: .whitespaces), index + 1)
                continue
            }
            split(text, line: index + 1)
        }
        func split(_ text: String, line: Int) {
            for part in text.components(separatedBy: "; ") {
                let command = Command(text: part.trimmingCharacters(in: .whitespaces), line: line)
                let placeholder = ["ITEM", "[", "…", "off|all", "| display", "<"].contains { command.text.contains($0) }
                if placeholder && !command.text.contains("< message.json") {
                    placeholders.append(command)
                } else {
                    runnable.append(command)
                }
            }
        }
        return (runnable, placeholders)
    }

    /// The commands that do not exit 0 here, and why; each must be in the README as written.
    static let outcomes: [String: (status: Int32, why: String)] = [
        "castc artwork": (9, "the README's loads before each give no --image: FAILED_PRECONDITION, no images"),
        "castc artwork --size 64x64 --device kitchen": (5, "the README's second device, Kitchen, is not here"),
        "castc artwork --background --output ~/.cache/cast-wallpaper.jpg": (9, "as castc artwork: no images"),
        "castc skip-ad": (9, "run at once: the README's ad can be skipped after 5 s, and castd says in how long"),
        "castc tracks enable 2": (5, "the README's queue of MP3s before it has no tracks: NOT_FOUND"),
        "castc tracks disable 1": (5, "the same"),
    ]

    @Test func everyCommandTheReadmeShowsRunsAsDocumented() async throws {
        let readmePath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md").path
        let (commands, placeholders) = Self.commands(in: try String(contentsOfFile: readmePath, encoding: .utf8))
        // The README shows castc's commands at length; a parser that found few found nothing.
        #expect(commands.count >= 50, "\(commands.count) commands found")
        #expect(placeholders.allSatisfy { !$0.text.isEmpty })
        for key in Self.outcomes.keys {
            #expect(commands.contains { $0.text == key }, "outcomes names '\(key)', which the README no longer shows")
        }

        try await withTemporaryDirectory { directory in
            try await withProcesses { launch in
                // The device given by address, on a loopback address of its own.
                let host = "127.\(Int.random(in: 100...250)).\(Int.random(in: 1...250)).\(Int.random(in: 2...250))"
                let authority = directory + "/authority"
                let ready = directory + "/emulator.json"
                _ = try launch(
                    "cast-emulator",
                    ["--name", "Living Room TV", "--host", host, "--port", "8009", "--https-port", "8443"]
                        + ["--ready-file", ready, "--authority", authority]
                        + ["--app", "ABCD1234:Game:urn:x-cast:com.example.game"],
                    [:])
                try await eventually(timeout: processStartTimeout, "the emulator's ready file") {
                    FileManager.default.fileExists(atPath: ready)
                }
                let socket = directory + "/castd.sock"
                _ = try launch(
                    "castd",
                    ["--mode", "user", "--socket", socket, "--no-discovery", "--state-directory", ""]
                        + ["--trust-root", authority + "/root.pem", "--device", host],
                    [:])
                let home = directory + "/home"
                try FileManager.default.createDirectory(atPath: home + "/.cache", withIntermediateDirectories: true)
                try #"{"type":"MOVE","x":3}"#.write(toFile: home + "/message.json", atomically: true, encoding: .utf8)
                // The files "Your own files" casts, as a newcomer has them.
                for path in [
                    "holiday.mp4", "Album/01 Intro.mp3", "Album/02 Song.mp3", "bonus.mp3", "extras/outtake.mp4",
                    "film.mkv",
                ] {
                    let url = URL(fileURLWithPath: home + "/" + path)
                    try FileManager.default.createDirectory(
                        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try Data(repeating: 0, count: 4096).write(to: url)
                }
                try "1\n00:00:01,000 --> 00:00:02,000\nHello\n".write(
                    toFile: home + "/film.srt", atomically: true, encoding: .utf8)
                let environment = [
                    "CASTD_SOCKET": socket, "HOME": home, "XDG_CACHE_HOME": home + "/.cache", "TOKEN": "token-1",
                    "PATH": productsDirectory.path + ":/usr/bin:/bin",
                ]
                try await eventually("castd to learn the device's name") {
                    let listed = try? await run("castc", ["devices"], environment: environment)
                    return listed?.stdout.contains("Living Room TV") == true
                }

                for command in commands {
                    let shell = try ChildProcess(
                        "/bin/sh", ["-c", "cd \"$HOME\" && exec " + command.text], directory: directory,
                        environment: environment)
                    defer { if shell.isRunning { shell.signal(SIGKILL) } }
                    if command.follows {
                        try await eventually("\(command) to print something") {
                            !shell.stdout.isEmpty || !shell.stderr.isEmpty || !shell.isRunning
                        }
                        shell.signal(SIGINT)
                    }
                    let status = try await shell.waitForExit(timeout: .seconds(30))
                    let expected = Self.outcomes[command.text]?.status ?? 0
                    #expect(
                        status == expected,
                        "\(command): exit \(status)\nstdout: \(shell.stdout)\nstderr: \(shell.stderr)")
                }
            }
        }
    }
}
