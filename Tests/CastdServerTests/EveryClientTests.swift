import CastClient
import CastDevices
import CastTestSupport
import CastdAPI
import CastdSupport
import Foundation
import Testing

/// Every kind of castd client on one device at once: castc, the Swift CastClient, the C client
/// (clients/c: castd-c-watch, castd-c-control) and the Python client (`python3 -m castd`). Each
/// watches, each sends commands, and every watcher must see the same events, in the same order,
/// with the same sequence numbers.
///
/// The C and Python clients are built by scripts/test-clients.sh, which runs this test with
/// CASTD_C_CLIENT_DIR (clients/c/build) and CASTD_PYTHON (a Python with the castd package) set,
/// and fails unless it ran. A plain `swift test` skips it.
struct EveryClientTests {
    static var clients: (cDirectory: String, python: String)? { builtClients }

    /// One event as every watcher can say it: its sequence number, its kind (the Event oneof's
    /// field name) and, for media, the player state.
    struct Seen: Hashable, CustomStringConvertible {
        var sequence: UInt64
        var kind: String
        var playerState: String?
        var description: String { "\(sequence) \(kind)" + (playerState.map { " \($0)" } ?? "") }
    }

    @Test(.enabled(if: builtClients != nil, "scripts/test-clients.sh runs this, with the C and Python clients built"))
    func castcSwiftCAndPythonWatchOneDeviceAndSeeTheSameEventsInOneOrder() async throws {
        let clients = try #require(Self.clients)
        try await withEmulator { _, endpoints in
            let device = StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [device]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    _ = try await QueueFixture.loadTracks(4, with: client)
                    try await withProcesses { launch in
                        try await Self.run(client: client, socket: socket, clients: clients, launch: launch)
                    }
                }
            }
        }
    }

    /// The README's C and Python examples (built by scripts/test-clients.sh into
    /// CASTD_README_EXAMPLES), run as a reader would: the C one pauses "Living Room TV" and
    /// prints the title, the Python one pauses it and prints a line per event.
    @Test(.enabled(if: builtClients != nil, "scripts/test-clients.sh runs this, with the C and Python clients built"))
    func theReadmesCAndPythonExamplesRun() async throws {
        let clients = try #require(Self.clients)
        let examples = try #require(ProcessInfo.processInfo.environment["CASTD_README_EXAMPLES"])
        try await withEmulator { _, endpoints in
            let device = StaticDevice(
                name: "Living Room TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [device]) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    var media = CastdMediaInformation(url: "https://example.com/film.mp4", contentType: "video/mp4")
                    media.metadata.title = "Film"
                    _ = try await client.load(media)

                    let paused = try await CastTestSupport.run(
                        examples + "/pause", [], environment: ["CASTD_SOCKET": socket])
                    expectSuccess(paused)
                    #expect(paused.stdout == "Film\n")
                    #expect(try await client.status().media.first?.playerState == .paused)
                    _ = try await client.play()

                    try await withProcesses { launch in
                        let watch = try launch(clients.python, [examples + "/watch.py"], ["CASTD_SOCKET": socket])
                        try await eventually(timeout: .seconds(20), "the Python example's snapshot and its pause") {
                            let lines = watch.stdout.split(separator: "\n")
                            return lines.first?.hasSuffix(" snapshot") == true
                        }
                        #expect(try await client.status().media.first?.playerState == .paused)
                        _ = try await client.seek(to: 42)
                        try await eventually(
                            timeout: .seconds(20), "the Python example to print the seek's media event"
                        ) {
                            watch.stdout.split(separator: "\n").dropFirst().contains { $0.hasSuffix(" media") }
                        }
                        #expect(watch.isRunning, "\(watch.stderr)")
                    }
                }
            }
        }
    }

    private static func run(
        client: CastdClient, socket: String, clients: (cDirectory: String, python: String),
        launch: (String, [String], [String: String]) throws -> ChildProcess
    ) async throws {
        let cWatch = clients.cDirectory + "/castd-c-watch"
        let cControl = clients.cDirectory + "/castd-c-control"
        let python = clients.python

        // The watchers: the Swift CastClient in this process, and three processes.
        let swiftSeen = Locked<(seen: [Seen], volumes: [(sequence: UInt64, level: Double)])>(([], []))
        let swiftWatcher = Task {
            for try await event in client.watch() {
                guard let seen = Self.seen(event) else { continue }
                swiftSeen.withLock {
                    $0.seen.append(seen)
                    if case .deviceUpdated(let device)? = event.kind, device.hasReceiver {
                        $0.volumes.append((event.sequence, device.receiver.volume.level))
                    }
                }
            }
        }
        defer { swiftWatcher.cancel() }
        let watchers: [(name: String, process: ChildProcess, read: (String) -> [Seen])] = [
            ("castc watch --json", try launch("castc", ["--socket", socket, "watch", "--json"], [:]), Self.jsonLines),
            ("castd-c-watch", try launch(cWatch, ["--socket", socket], [:]), Self.cLines),
            (
                "python3 -m castd watch --json",
                try launch(python, ["-m", "castd", "--socket", socket, "watch", "--json"], [:]), Self.jsonLines
            ),
        ]
        // Every watcher has its snapshot before the first command.
        try await eventually(timeout: .seconds(20), "every watcher's snapshot") {
            swiftSeen.withLock { $0.seen.first?.kind == "snapshot" }
                && watchers.allSatisfy { $0.read($0.process.stdout).first?.kind == "snapshot" }
        }

        // The commands, each client in turn: pause, seek, volume, queue next.
        func command(_ executable: String, _ arguments: [String]) async throws {
            let result = try await CastTestSupport.run(executable, arguments)
            expectSuccess(result)
        }
        _ = try await client.pause()
        try await command("castc", ["--socket", socket, "seek", "30"])
        try await command(cControl, ["--socket", socket, "volume", "0.3"])
        try await command(python, ["-m", "castd", "--socket", socket, "next"])
        try await command("castc", ["--socket", socket, "queue", "next"])
        try await command(python, ["-m", "castd", "--socket", socket, "pause"])
        try await command(cControl, ["--socket", socket, "seek", "12"])
        _ = try await client.seek(to: 20)
        try await command(cControl, ["--socket", socket, "next"])
        try await command("castc", ["--socket", socket, "volume", "45%"])
        try await command(python, ["-m", "castd", "--socket", socket, "volume", "0.6"])
        // The last: the Swift client sets the volume; the device event that carries it ends
        // the comparison.
        var volume = Castd_V1_SetVolumeRequest()
        volume.level = 0.55
        _ = try await client.unary(.setVolume, volume, as: CastdVolume.self)
        var last: UInt64 = 0
        try await eventually(timeout: .seconds(20), "the Swift watcher to see the volume at 55%") {
            guard let event = swiftSeen.withLock({ $0.volumes.first(where: { abs($0.level - 0.55) < 0.001 }) }) else {
                return false
            }
            last = event.sequence
            return true
        }
        try await eventually(timeout: .seconds(20), "every watcher to reach sequence \(last)") {
            watchers.allSatisfy { watcher in watcher.read(watcher.process.stdout).contains { $0.sequence >= last } }
        }

        // From the last snapshot on, up to that event: the same events everywhere.
        let swift = swiftSeen.withLock { $0.seen }
        let all = [("Swift CastClient", swift)] + watchers.map { ($0.name, $0.read($0.process.stdout)) }
        let start = all.compactMap { $0.1.first(where: { $0.kind == "snapshot" })?.sequence }.max() ?? 0
        let window = all.map { name, seen in (name, seen.filter { $0.sequence > start && $0.sequence <= last }) }
        let reference = window[0].1
        #expect(reference.count >= 11, "the Swift watcher saw only \(reference) between \(start) and \(last)")
        #expect(reference.contains { $0.kind == "media" && $0.playerState == "PAUSED" })
        #expect(reference.contains { $0.kind == "device_updated" })
        #expect(reference.map(\.sequence) == reference.map(\.sequence).sorted())
        for (name, seen) in window.dropFirst() {
            #expect(seen == reference, "\(name) saw \(seen), the Swift CastClient \(reference)")
        }
        for watcher in watchers {
            #expect(watcher.process.isRunning, "\(watcher.name) ended: \(watcher.process.stderr)")
        }
    }

    // MARK: what each watcher says

    /// The Event oneof's field name of `event`, and the player state of a media event.
    static func seen(_ event: CastdEvent) -> Seen? {
        let kind: String
        var playerState: String?
        switch event.kind {
        case .snapshot: kind = "snapshot"
        case .deviceAdded: kind = "device_added"
        case .deviceUpdated: kind = "device_updated"
        case .deviceRemoved: kind = "device_removed"
        case .session: kind = "session"
        case .media(let media):
            kind = "media"
            playerState = String(describing: media.playerState).uppercased()
        case .lagged: kind = "lagged"
        case .transferred: kind = "transferred"
        case .castState: kind = "cast_state"
        case .queue: kind = "queue"
        case nil: return nil
        }
        return Seen(sequence: event.sequence, kind: kind, playerState: playerState)
    }

    /// castc's and Python's `watch --json`: an Event in protobuf's JSON per line (uint64 as a
    /// string, fields in lowerCamelCase, enum values by name, defaults left out).
    static func jsonLines(_ output: String) -> [Seen] {
        output.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let sequence = (object["sequence"] as? String).flatMap(UInt64.init)
                    ?? (object["sequence"] as? NSNumber)?.uint64Value,
                let key = object.keys.first(where: { !["sequence", "timeMs"].contains($0) })
            else { return nil }
            var playerState: String?
            if key == "media" {
                let state = (object["media"] as? [String: Any])?["playerState"] as? String ?? "PLAYER_STATE_UNSPECIFIED"
                playerState = String(state.dropFirst("PLAYER_STATE_".count))
            }
            return Seen(sequence: sequence, kind: snakeCase(key), playerState: playerState)
        }
    }

    /// castd-c-watch: `SEQUENCE KIND DETAILS`; a media line is `SEQ media DEVICE STATE …`.
    static func cLines(_ output: String) -> [Seen] {
        output.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count >= 2, let sequence = UInt64(words[0]) else { return nil }
            let kind = String(words[1])
            return Seen(
                sequence: sequence, kind: kind, playerState: kind == "media" && words.count > 3 ? String(words[3]) : nil
            )
        }
    }

    /// "deviceUpdated" → "device_updated".
    static func snakeCase(_ name: String) -> String {
        name.reduce(into: "") { result, character in
            if character.isUppercase { result += "_" + character.lowercased() } else { result.append(character) }
        }
    }
}

/// Where scripts/test-clients.sh put the C client's programs and a Python with castd.
private let builtClients: (cDirectory: String, python: String)? = {
    let environment = ProcessInfo.processInfo.environment
    guard let c = environment["CASTD_C_CLIENT_DIR"], let python = environment["CASTD_PYTHON"] else { return nil }
    return (c, python)
}()
