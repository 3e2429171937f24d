import CastClient
import CastDevices
import CastEmulator
import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// The Swift example in README.md ("Writing programs against castd") is
/// `Examples/ReadmeExample/main.swift`, which SwiftPM builds as `castd-readme-example`: these
/// tests check that the README shows that file, and run the program as a reader would, against
/// castd and an emulated device.
struct ReadmeExampleTests {
    /// The repository's root: this file is Tests/CastdServerTests/ReadmeExampleTests.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The first ```swift block of `markdown`, as the file it shows would hold it.
    static func firstSwiftBlock(_ markdown: String) -> String? {
        var lines: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if lines == nil {
                if line == "```swift" { lines = [] }
            } else if line == "```" {
                return lines!.joined(separator: "\n") + "\n"
            } else {
                lines!.append(line)
            }
        }
        return nil
    }

    @Test func theReadmeShowsTheExampleThatIsBuilt() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(
            contentsOf: Self.root.appendingPathComponent("Examples/ReadmeExample/main.swift"), encoding: .utf8)
        let shown = try #require(Self.firstSwiftBlock(readme), "README.md has no ```swift block")
        #expect(shown == example, "README.md's Swift example is not Examples/ReadmeExample/main.swift")
    }

    @Test func theReadmesExampleRuns() async throws {
        try await withEmulator { _, endpoints in
            let tv = StaticDevice(
                name: "Living Room TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [tv]) { socket, store in
                try await withProcesses { launch in
                    let example = try launch("castd-readme-example", [], ["CASTD_SOCKET": socket])
                    // It loads, then watches until the media ends. Its output is a file (buffered
                    // until it exits), so castd's own count of watchers says when it watches: its
                    // snapshot is then queued before any later event.
                    try await eventually(timeout: .seconds(30), "the example to load and watch") {
                        try example.checkRunning()
                        return store.watcherCount == 1 && store.media(deviceID: tv.id)?.playerState == .playing
                    }
                    let stopped = try await CastdClient.withConnection(socketPath: socket) { client in
                        try await client.stop(device: "Living Room TV")
                    }
                    #expect(stopped.playerState == .idle)
                    let status = try await example.waitForExit(timeout: .seconds(20))
                    #expect(status == 0, "the example failed: \(example.stderr)")
                    let output = example.stdout.split(separator: "\n", omittingEmptySubsequences: false)
                    #expect(output.first == "playing", "\(example.stdout)")
                    #expect(output.contains { $0.hasPrefix("snapshot {") }, "\(example.stdout)")
                    #expect(output.dropLast().last == #"["Living Room TV"]"#, "\(example.stdout)")
                }
            }
        }
    }
}
