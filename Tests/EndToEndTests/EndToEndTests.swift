import CastClient
import CastTestSupport
import CastdAPI
import CastdSupport
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import SwiftProtobuf
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real programs, as a user runs them: cast-emulator published over the system's Avahi
/// (on loopback), castd discovering it, castc processes driving it.
@Suite(.serialized)
struct EndToEndTests {
    /// One emulator and one castd in a temporary directory.
    struct Setup {
        var directory: String
        var socket: String
        var deviceName: String
        var emulatorLog: String
        var castd: ChildProcess
        var emulator: ChildProcess
        var environment: [String: String] { ["CASTD_SOCKET": socket] }
        var stateDirectory: String { directory + "/state" }
        /// The emulator's root, which castd trusts (`--trust-root`).
        var trustRoot: String { directory + "/authority/root.pem" }
        /// castd's arguments when a test starts it again on the same socket and state.
        var restartArguments: [String] {
            ["--mode", "user", "--socket", socket, "--state-directory", stateDirectory, "--trust-root", trustRoot]
        }

        func castc(_ arguments: [String], timeout: Duration = .seconds(20)) async throws -> CommandResult {
            try await run("castc", arguments, environment: environment, timeout: timeout)
        }

        func status() async throws -> CastdStatusResponse {
            let result = try await castc(["status", "--json"])
            #expect(result.status == 0, "\(result)")
            return try CastdStatusResponse(jsonString: result.stdout, options: Self.lenient)
        }

        /// Messages the emulator received from senders, as (namespace, type) pairs.
        func received() throws -> [(namespace: String, type: String)] {
            let text = (try? String(contentsOfFile: emulatorLog, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { line in
                guard let data = line.data(using: .utf8),
                    let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                    object["direction"] as? String == "in",
                    let payload = object["payload"] as? [String: Any]
                else { return nil }
                return (object["namespace"] as? String ?? "", payload["type"] as? String ?? "")
            }
        }

        /// The payloads of the requests of `type` the emulator received, in order.
        func received(_ type: String) throws -> [[String: Any]] {
            let text = (try? String(contentsOfFile: emulatorLog, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { line in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    object["direction"] as? String == "in",
                    let payload = object["payload"] as? [String: Any], payload["type"] as? String == type
                else { return nil }
                return payload
            }
        }

        /// Waits until a (re)started castd answers and holds a resumed session.
        func waitForResumedSession(timeout: Duration = .seconds(20)) async throws {
            try await eventually(timeout: timeout, "castd to rejoin the saved session") {
                guard let status = try? await run("castc", ["status", "--json"], environment: environment),
                    status.status == 0,
                    let parsed = try? CastdStatusResponse(jsonString: status.stdout, options: Self.lenient)
                else { return false }
                return parsed.sessions.contains { $0.state == .resumed }
            }
        }

        static var lenient: JSONDecodingOptions {
            var options = JSONDecodingOptions()
            options.ignoreUnknownFields = true
            return options
        }
    }

    /// Starts a published emulator and a discovering castd that trusts the emulator's root (both
    /// use the authority in `DIR/authority`); waits until castd lists the device.
    func withSetup<T>(
        castdArguments: [String] = [], emulatorArguments: [String] = [], _ body: (Setup) async throws -> T
    ) async throws -> T {
        guard await avahiIsRunning() else {
            Issue.record(
                "avahi-daemon is not running: start it with `scripts/avahi-loopback.sh start /tmp/castd-avahi`")
            throw CancellationError()
        }
        return try await withTemporaryDirectory { directory in
            try await withProcesses { launch in
                let name = "E2E TV " + String(UInt32.random(in: 0...UInt32.max), radix: 36)
                let ready = directory + "/emulator.json"
                let log = directory + "/emulator.log"
                let authority = directory + "/authority"
                let emulator = try launch(
                    "cast-emulator",
                    ["--name", name, "--port", "0", "--publish", "--ready-file", ready, "--log", log]
                        + ["--authority", authority] + emulatorArguments,
                    [:])
                try await eventually(timeout: processStartTimeout, "the emulator's ready file") {
                    FileManager.default.fileExists(atPath: ready)
                }
                let socket = directory + "/castd.sock"
                let castd = try launch(
                    "castd",
                    ["--mode", "user", "--socket", socket, "--state-directory", directory + "/state"]
                        + ["--trust-root", authority + "/root.pem"] + castdArguments, [:])
                let setup = Setup(
                    directory: directory, socket: socket, deviceName: name, emulatorLog: log, castd: castd,
                    emulator: emulator)
                try await eventually("castd to discover \(name)") {
                    let listed = try await setup.castc(["devices", "--json"])
                    return listed.status == 0 && listed.stdout.contains(name)
                }
                return try await body(setup)
            }
        }
    }

    @Test func discoverConnectLoadAndControl() async throws {
        try await withSetup { setup in
            let devices = try await setup.castc(["devices", "--json"])
            let listed = try Castd_V1_ListDevicesResponse(jsonString: devices.stdout, options: Setup.lenient)
            let device = try #require(listed.devices.first { $0.friendlyName == setup.deviceName })
            #expect(device.host == "127.0.0.1" && device.source == .mdns && device.model == "Chromecast")

            let connect = try await setup.castc(["connect", setup.deviceName])
            #expect(connect.status == 0, "\(connect)")
            // It authenticated with the emulator's root, which castd was told to trust.
            let table = try await setup.castc(["devices"])
            #expect(table.stdout.contains("AUTH") && table.stdout.contains("verified"), "\(table)")
            let load = try await setup.castc([
                "load", "https://example.com/big_buck_bunny.mp4", "--device", setup.deviceName,
                "--content-type", "video/mp4", "--title", "Big Buck Bunny",
            ])
            #expect(load.status == 0, "\(load)")
            expectSuccess(try await setup.castc(["pause", "--device", setup.deviceName]))
            var status = try await setup.status()
            var media = try #require(status.media.first { $0.deviceID == device.id })
            #expect(media.playerState == .paused)
            #expect(media.media.metadata.title == "Big Buck Bunny")
            expectSuccess(try await setup.castc(["play", "--device", setup.deviceName]))
            expectSuccess(try await setup.castc(["seek", "120", "--device", setup.deviceName]))
            status = try await setup.status()
            media = try #require(status.media.first { $0.deviceID == device.id })
            #expect(media.playerState == .playing)
            #expect(media.currentTime >= 120 && media.currentTime < 125)
            expectSuccess(try await setup.castc(["stop", "--device", setup.deviceName]))
            let disconnect = try await setup.castc(["disconnect", "--device", setup.deviceName, "--stop-app"])
            #expect(disconnect.status == 0, "\(disconnect)")

            // What the device saw, in order.
            let mediaTypes = try setup.received().filter { $0.namespace.hasSuffix(".media") }.map(\.type)
            #expect(mediaTypes.filter { $0 != "GET_STATUS" } == ["LOAD", "PAUSE", "PLAY", "SEEK", "STOP"])
            #expect(try setup.received().contains { $0.type == "STOP" && $0.namespace.hasSuffix(".receiver") })
        }
    }

    @Test func twoCastcProcessesShareOneSession() async throws {
        try await withSetup { setup in
            let load = try await setup.castc(["load", "https://example.com/a.mp4", "--device", setup.deviceName])
            #expect(load.status == 0, "\(load)")
            let watcher = try ChildProcess(
                "castc", ["watch", "--json"], directory: setup.directory, environment: setup.environment)
            defer { watcher.signal(SIGKILL) }
            try await eventually("the watcher's snapshot") { watcher.stdout.contains("snapshot") }
            expectSuccess(try await setup.castc(["pause", "--device", setup.deviceName]))
            try await eventually("the watcher to see PAUSED") { watcher.stdout.contains("PLAYER_STATE_PAUSED") }
            // Ctrl-C ends castc watch cleanly.
            watcher.signal(SIGINT)
            #expect(try await watcher.waitForExit() == 0)
            // Every line is one castd.v1.Event, sequence numbers increasing.
            let events = try watcher.stdout.split(separator: "\n").map {
                try CastdEvent(jsonString: String($0), options: Setup.lenient)
            }
            #expect(events.map(\.sequence) == events.map(\.sequence).sorted())
        }
    }

    @Test func badInputGetsClearErrorsAndExitCodes() async throws {
        try await withSetup { setup in
            let url = try await setup.castc(["load", "https://not a url", "--device", setup.deviceName])
            #expect(url.status == 64, "\(url)")
            #expect(url.stderr.contains("not a url"))
            // Without a scheme, a file here: one castc cannot open exits 66 (EX_NOINPUT).
            let file = try await setup.castc(["load", "not a file", "--device", setup.deviceName])
            #expect(file.status == 66 && file.stderr.contains("cannot open not a file"), "\(file)")

            let unknown = try await setup.castc(["pause", "--device", "No Such TV"])
            #expect(unknown.status == 5, "\(unknown)")  // NOT_FOUND
            #expect(unknown.stderr.contains(setup.deviceName))

            let nothingLoaded = try await setup.castc(["pause", "--device", setup.deviceName])
            #expect(nothingLoaded.status == 9, "\(nothingLoaded)")  // FAILED_PRECONDITION

            let noDaemon = try await run(
                "castc", ["status"], environment: ["CASTD_SOCKET": setup.directory + "/nobody.sock"])
            #expect(noDaemon.status == 14, "\(noDaemon)")  // UNAVAILABLE
            #expect(noDaemon.stderr.contains("nobody.sock"))
            #expect(setup.castd.isRunning)
        }
    }

    /// Custom channels with castc: launch the echo app, listen on its namespace in one process,
    /// send from another, and see the echo arrive.
    @Test func customChannelMessagesGoBothWays() async throws {
        try await withSetup { setup in
            let namespace = "urn:x-cast:com.castd.echo"
            // Other devices may be on the (shared) network: name ours once; later commands pick
            // the device with the session.
            let launched = try await setup.castc(["launch", "E2C0EC40", "--device", setup.deviceName])
            #expect(launched.status == 0, "\(launched)")
            let listener = try ChildProcess(
                "castc", ["listen", namespace, "--count", "2"], directory: setup.directory,
                environment: setup.environment)
            defer { listener.signal(SIGKILL) }
            try await eventually("castc listen to attach") { listener.stderr.contains("listening to") }
            let text = try await setup.castc(["send", namespace, "hello, app"])
            #expect(text.status == 0, "\(text)")
            let json = try await setup.castc(["send", namespace, #"{"n": 2}"#, "--json"])
            #expect(json.status == 0, "\(json)")
            #expect(try await listener.waitForExit(timeout: .seconds(10)) == 0, "\(listener.stderr)")
            #expect(listener.stdout.split(separator: "\n") == ["hello, app", #"{"n":2}"#])

            let undeclared = try await setup.castc(["send", "urn:x-cast:com.example.other", "hi"])
            #expect(undeclared.status == 9 && undeclared.stderr.contains("does not declare"), "\(undeclared)")
            let badNamespace = try await setup.castc(["send", "com.example.other", "hi"])
            #expect(badNamespace.status != 0 && badNamespace.stderr.contains("urn:x-cast:"), "\(badNamespace)")
            let tooBig = try await setup.castc(["send", namespace, String(repeating: "x", count: 70_000)])
            #expect(tooBig.status == 3 && tooBig.stderr.contains("64 KiB"), "\(tooBig)")
        }
    }

    /// A published multizone group is listed as a group with its members, and plays.
    @Test func groupsAreListedWithTheirMembersAndCanPlay() async throws {
        let kitchen = "0123456789abcdef0123456789abcdef"
        try await withSetup(emulatorArguments: [
            "--group-member", "\(kitchen)=Kitchen speaker", "--group-member", "fedcba9876543210fedcba9876543210=Den",
        ]) { setup in
            try await eventually("castd to learn the group's members") {
                let listed = try await setup.castc(["devices", "--json"])
                guard listed.status == 0 else { return false }
                let devices = try Castd_V1_ListDevicesResponse(jsonString: listed.stdout, options: Setup.lenient)
                    .devices
                guard let group = devices.first(where: { $0.friendlyName == setup.deviceName }) else { return false }
                return group.isGroup && Set(group.groupMembers.map(\.name)) == ["Kitchen speaker", "Den"]
                    && group.groupMembers.contains { $0.deviceID == kitchen }
            }
            let text = try await setup.castc(["devices"])
            #expect(text.stdout.contains("Kitchen speaker"), "\(text)")
            let groups = try await setup.castc(["devices", "--capability", "group", "--json"])
            #expect(groups.stdout.contains(setup.deviceName), "\(groups)")
            let played = try await setup.castc([
                "load", "https://example.com/song.mp3", "--content-type", "audio/mpeg", "--device", setup.deviceName,
            ])
            #expect(played.status == 0, "\(played)")
            #expect(try await setup.status().sessions.first?.state == .started)
        }
    }

    /// The queue, tracks, rate and volume buttons through castc, as a user types them.
    @Test func queueTracksRateAndVolumeWithCastc() async throws {
        try await withSetup { setup in
            let loaded = try await setup.castc([
                "queue", "load", "https://example.com/1.mp4", "https://example.com/2.mp4", "https://example.com/3.mp4",
                "--repeat", "all", "--device", setup.deviceName,
            ])
            #expect(loaded.status == 0, "\(loaded)")
            let next = try await setup.castc(["queue", "next"])
            #expect(next.status == 0, "\(next)")
            var media = try #require(try await setup.status().media.first)
            #expect(media.items.count == 3 && media.currentItemID == media.items[1].itemID)
            #expect(media.repeatMode == .all)
            let listed = try await setup.castc(["queue", "list"])
            #expect(listed.status == 0 && listed.stdout.contains("2.mp4"), "\(listed)")
            // Items by position, as the list numbers them, or by #ID.
            let order = media.items.map(\.itemID)
            #expect(listed.stdout.split(separator: "\n").dropFirst().first?.hasPrefix("1 ") == true, "\(listed)")
            expectSuccess(try await setup.castc(["queue", "jump", "3"]))
            #expect(try await setup.status().media.first?.currentItemID == order[2])
            expectSuccess(try await setup.castc(["queue", "jump", "#\(order[0])"]))
            #expect(try await setup.status().media.first?.currentItemID == order[0])
            let past = try await setup.castc(["queue", "jump", "4"])
            #expect(
                past.status == 11 && past.stderr == "castc: OUT_OF_RANGE: the queue has 3 items: give 1 to 3, not 4\n",
                "\(past)")
            expectSuccess(try await setup.castc(["queue", "jump", "2"]))

            let subtitled = try await setup.castc([
                "load", "https://example.com/film.mp4", "--subtitles", "https://example.com/film.en.vtt",
                "--subtitles-lang", "en", "--title", "Film",
            ])
            #expect(subtitled.status == 0, "\(subtitled)")
            media = try #require(try await setup.status().media.first)
            #expect(media.media.tracks.count == 1 && media.activeTrackIds == [1])
            expectSuccess(try await setup.castc(["tracks", "disable", "--all"]))
            #expect(try await setup.status().media.first?.activeTrackIds.isEmpty == true)
            expectSuccess(try await setup.castc(["rate", "1.5"]))
            #expect(try await setup.status().media.first?.playbackRate == 1.5)
            let badRate = try await setup.castc(["rate", "4"])
            #expect(badRate.status != 0 && badRate.stderr.contains("0.5"), "\(badRate)")

            expectSuccess(try await setup.castc(["volume", "0.5"]))
            expectSuccess(try await setup.castc(["volume", "up"]))
            let level = try #require(
                try await setup.status().devices.first { $0.friendlyName == setup.deviceName }?.receiver.volume.level)
            #expect(abs(level - 0.55) < 0.001)
            // Without a level castc shows the device's volume: castd resolves the selector (GetDevice).
            let shown = try await setup.castc(["volume"])
            #expect(shown.status == 0 && shown.stdout.hasPrefix("\(setup.deviceName): volume 55"), "\(shown)")
            let unknown = try await setup.castc(["volume", "--device", "attic"])
            #expect(unknown.status == 5 && unknown.stderr.contains("no device matches 'attic'"), "\(unknown)")
            let noAd = try await setup.castc(["skip-ad"])
            #expect(noAd.status != 0 && noAd.stderr.contains("INVALID_PLAYER_STATE"), "\(noAd)")
        }
    }

    /// A device that fails device authentication is refused: castc says why, and so do
    /// `castc devices` and `castc status`.
    @Test func anImpostorIsRefusedAndCastcSaysWhy() async throws {
        try await withSetup(emulatorArguments: ["--impostor", "wrong-nonce"]) { setup in
            let connect = try await setup.castc(["connect", setup.deviceName])
            #expect(connect.status == 9, "\(connect)")  // FAILED_PRECONDITION: retrying will not help
            #expect(connect.stderr.contains("device authentication failed"), "\(connect)")
            let devices = try await setup.castc(["devices"])
            #expect(devices.stdout.contains("refused: the answer is for another challenge"), "\(devices)")
            let status = try await setup.castc(["status"])
            #expect(status.stdout.contains("auth  refused: the answer is for another challenge"), "\(status)")
            let json = try await setup.castc(["devices", "--json"])
            let listed = try Castd_V1_ListDevicesResponse(jsonString: json.stdout, options: Setup.lenient)
            let fake = try #require(listed.devices.first { $0.friendlyName == setup.deviceName })
            #expect(fake.authentication.state == .refused && fake.linkState == .failed)
            // The device got the challenge and nothing else.
            let received = try setup.received()
            #expect(
                !received.isEmpty && received.allSatisfy { $0.namespace.hasSuffix(".tp.deviceauth") }, "\(received)")
        }
    }

    @Test func anUnusableTrustRootStopsCastdNamingTheFile() async throws {
        try await withTemporaryDirectory { directory in
            let bad = directory + "/not-a-root.pem"
            _ = FileManager.default.createFile(atPath: bad, contents: Data("hello\n".utf8))
            let result = try await run(
                "castd",
                ["--mode", "user", "--socket", directory + "/castd.sock", "--no-discovery", "--trust-root", bad])
            #expect(result.status != 0)
            #expect(result.stderr.contains(bad) && result.stderr.contains("no PEM certificate"), "\(result)")
            let missing = try await run(
                "castd",
                [
                    "--mode", "user", "--socket", directory + "/castd.sock", "--no-discovery", "--trust-root",
                    directory + "/none.pem",
                ])
            #expect(missing.status != 0 && missing.stderr.contains(directory + "/none.pem"), "\(missing)")
        }
    }

    /// castc connect to a static device whose port refuses connections: exit 14 (UNAVAILABLE),
    /// naming the address. (A refused port answers at once; the connect timeout, for a peer
    /// that never answers, is `CastLinkTests.silentTLSPeerHitsTheConnectDeadline`.)
    @Test func castcConnectToAStaticDeviceThatRefusesConnectionsSaysItsAddress() async throws {
        try await withRefusingTCPPort { port in
            try await withSetup(castdArguments: ["--device", "Gone TV=127.0.0.1:\(port)"]) { setup in
                let result = try await setup.castc(["connect", "Gone TV"])
                #expect(result.status == 14, "\(result)")
                #expect(result.stderr.contains("127.0.0.1:\(port)"))
            }
        }
    }

    @Test func sigtermEndsWatchersAndLeavesTheAppPlaying() async throws {
        try await withSetup { setup in
            #expect(
                try await setup.castc(["load", "https://example.com/a.mp4", "--device", setup.deviceName]).status == 0)
            let original = try #require(try await setup.status().sessions.first)
            let watcher = try ChildProcess(
                "castc", ["watch"], directory: setup.directory, environment: setup.environment)
            defer { watcher.signal(SIGKILL) }
            try await eventually("the watcher's snapshot") { watcher.stdout.contains("snapshot") }
            setup.castd.signal(SIGTERM)
            #expect(try await setup.castd.waitForExit(timeout: .seconds(6)) == 0)
            #expect(try await watcher.waitForExit() == 14)  // UNAVAILABLE
            #expect(watcher.stderr.contains("shutting down"))

            // A new castd rejoins the session that kept playing: no relaunch, no STOP.
            let again = try ChildProcess(
                "castd", setup.restartArguments, directory: setup.directory)
            defer { again.signal(SIGKILL) }
            try await setup.waitForResumedSession()
            let join = try await setup.castc(["connect", setup.deviceName, "--json"])
            #expect(join.status == 0, "\(join)")
            let session = try CastdSession(jsonString: join.stdout, options: Setup.lenient)
            #expect(session.sessionID == original.sessionID)
            #expect(try setup.received().filter { $0.type == "LAUNCH" }.count == 1)
            let media = try #require(try await setup.status().media.first)
            #expect(media.playerState == .playing)
            #expect(try !setup.received().contains { $0.type == "STOP" })
            await again.stop()
        }
    }

    /// castd killed with SIGKILL mid-playback, and started again: it rejoins the running
    /// session from its state file, with no LAUNCH and no STOP, and playback never paused.
    @Test func castdKilledMidPlaybackRejoinsTheSessionWhenStartedAgain() async throws {
        try await withSetup { setup in
            #expect(
                try await setup.castc(["load", "https://example.com/a.mp4", "--device", setup.deviceName]).status == 0)
            let original = try #require(try await setup.status().sessions.first)
            let before = try #require(try await setup.status().media.first)
            setup.castd.signal(SIGKILL)
            _ = try await setup.castd.waitForExit()

            let clock = ContinuousClock()
            let started = clock.now
            let again = try ChildProcess(
                "castd", setup.restartArguments, directory: setup.directory)
            defer { again.signal(SIGKILL) }
            try await setup.waitForResumedSession()
            print("castd restart to resumed session: \(clock.now - started)")
            let status = try await setup.status()
            let session = try #require(status.sessions.first)
            #expect(session.sessionID == original.sessionID && session.transportID == original.transportID)
            let media = try #require(status.media.first)
            #expect(media.playerState == .playing)
            #expect(media.mediaSessionID == before.mediaSessionID)
            #expect(media.currentTime >= before.currentTime)
            let sent = try setup.received()
            #expect(sent.filter { $0.type == "LAUNCH" }.count == 1, "relaunched: \(sent.map(\.type))")
            #expect(!sent.contains { $0.type == "STOP" })
            #expect(sent.filter { $0.type == "LOAD" }.count == 1)
            // And it is controlled as before.
            expectSuccess(try await setup.castc(["pause"]))
            await again.stop()
        }
    }

    /// The device goes away (links cut, TLS refused) long enough for castd to back off to waits
    /// of several seconds; then it comes back on another port and mDNS announces it there. castd
    /// does not wait for its next scheduled retry: the announcement makes it retry at once, at
    /// the new address, and the session is resumed.
    @Test func anAnnouncementAtANewPortIsRetriedAtOnce() async throws {
        try await withSetup(emulatorArguments: ["--http-port", "0"]) { setup in
            let ready = try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: setup.directory + "/emulator.json")))
            let httpPort = try #require((ready as? [String: Any])?["httpPort"] as? Int)
            #expect(
                try await setup.castc(["load", "https://example.com/a.mp4", "--device", setup.deviceName]).status == 0)
            let original = try #require(try await setup.status().sessions.first)

            try await Self.control(httpPort, "/emulator/faults", #"{"refuseTLS": true}"#)
            try await Self.control(httpPort, "/emulator/faults/drop-links")
            var away = try #require(try await setup.status().devices.first { $0.friendlyName == setup.deviceName })
            try await eventually(timeout: .seconds(40), "castd to back off to waits of 8 s or more") {
                away = try #require(try await setup.status().devices.first { $0.friendlyName == setup.deviceName })
                return away.reconnectAttempts >= 4 && away.linkState == .reconnecting
            }
            let scheduled = away.nextRetryAtMs
            try await Self.control(httpPort, "/emulator/faults", #"{"refuseTLS": false}"#)
            try await Self.control(httpPort, "/emulator/faults/move-port")
            try await eventually(timeout: .seconds(20), "the session to be resumed") {
                try await setup.status().sessions.first?.state == .resumed
            }
            let back = Int64((Date().timeIntervalSince1970 * 1000).rounded())
            let device = try #require(try await setup.status().devices.first { $0.friendlyName == setup.deviceName })
            #expect(device.port != away.port, "castd follows the new port")
            #expect(back < scheduled, "resumed \(scheduled - back) ms before the retry the backoff had scheduled")
            print("announced at a new port: resumed \(scheduled - back) ms before the scheduled retry")
            #expect(try await setup.status().sessions.first?.sessionID == original.sessionID)
            #expect(try setup.received().filter { $0.type == "LAUNCH" }.count == 1)
        }
    }

    /// A 500-item queue on a device whose statuses carry three items (cast-emulator
    /// --queue-window 3): `castc queue` lists every item, in order, with its title.
    @Test func castcQueueListsAWholeLongQueue() async throws {
        try await withSetup(emulatorArguments: ["--queue-window", "3"]) { setup in
            try await CastdClient.withConnection(socketPath: setup.socket) { client in
                _ = try await client.startSession(device: setup.deviceName)
                _ = try await QueueFixture.loadTracks(500, with: client)
            }
            let listed = try await setup.castc(["queue", "--device", setup.deviceName])
            expectSuccess(listed)
            let rows = listed.stdout.split(separator: "\n").dropFirst()  // the header
            let titles = rows.compactMap { row in row.range(of: "Track ").map { String(row[$0.lowerBound...]) } }
            #expect(titles == (1...500).map { "Track \($0)" }, "\(listed.stdout.prefix(600))")
            #expect(rows.first?.contains("playing") == true || rows.first?.contains("buffering") == true)
        }
    }

    /// castd's launch defaults from its flags: `castc load` starts the default app, with the
    /// default language, and `castc connect` without --app joins it. `castc connect
    /// --credentials` hands credentials to the app it joins (Cast Connect sign-in).
    @Test func launchDefaultsFromFlagsAndCredentialsFromCastcConnect() async throws {
        try await withSetup(castdArguments: ["--launch-app", "233637DE", "--launch-language", "fr-FR"]) { setup in
            expectSuccess(try await setup.castc(["load", "https://example.com/a.mp4", "--device", setup.deviceName]))
            let connected = try await setup.castc(["connect", setup.deviceName])
            expectSuccess(connected)
            #expect(connected.stdout.contains("233637DE"), "\(connected)")
            expectSuccess(
                try await setup.castc(
                    [
                        "connect", setup.deviceName, "--app", "233637DE", "--android-tv", "--credentials", "tok3n",
                        "--credentials-type", "oauth",
                    ]))
            let launches = try setup.received("LAUNCH")
            #expect(launches.count == 2, "one launch by load, one to hand over the credentials: \(launches)")
            #expect(launches.map { $0["appId"] as? String } == ["233637DE", "233637DE"])
            #expect(launches.first?["language"] as? String == "fr-FR")
            let credentials =
                ((launches.last?["appParams"] as? [String: Any])?["launchCheckerParams"] as? [String: Any])?[
                    "credentialsData"] as? [String: Any]
            #expect(credentials?["credentials"] as? String == "tok3n", "\(launches)")
            #expect(credentials?["credentialsType"] as? String == "oauth")
            #expect(launches.last?["supportedAppTypes"] as? [String] == ["WEB", "ANDROID_TV"])
            #expect(try await setup.status().sessions.count == 1)
        }
    }

    /// A TV that reports its state (cast-emulator --tv): `castc devices` and `castc status` show
    /// it, and `castc watch` sees it go to standby.
    @Test func aTVsStateIsShownByDevicesStatusAndWatch() async throws {
        try await withSetup(emulatorArguments: ["--tv", "--http-port", "0"]) { setup in
            let ready = try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: setup.directory + "/emulator.json")))
            let httpPort = try #require((ready as? [String: Any])?["httpPort"] as? Int)
            expectSuccess(try await setup.castc(["connect", setup.deviceName]))
            let table = try await setup.castc(["devices"])
            #expect(table.stdout.contains("  TV  ") && table.stdout.contains("on, this input"), "\(table)")

            let watcher = try ChildProcess(
                "castc", ["watch"], directory: setup.directory, environment: setup.environment)
            defer { watcher.signal(SIGKILL) }
            try await eventually("castc watch's snapshot") { watcher.stdout.contains("snapshot") }
            try await Self.control(httpPort, "/emulator/tv", #"{"standBy": true, "activeInput": false}"#)
            try await eventually("castc watch to see the TV in standby") { watcher.stdout.contains("tv standby") }
            let status = try await setup.castc(["status"])
            #expect(status.stdout.contains("tv") && status.stdout.contains("standby"), "\(status)")
            let device = try #require(try await setup.status().devices.first { $0.friendlyName == setup.deviceName })
            #expect(device.tvPower == .standby && device.tvInput == .other)
        }
    }

    /// `castd --device HOST` with a device on a real device's ports (8009, and eureka_info on
    /// 8443) at a loopback address of its own: castc connects to it by its name, and it is
    /// listed once, under its mDNS id.
    /// A device's refusals, and castd's own for what it knows, as a user meets them: what was
    /// refused, why in words, the device's codes, what to do; and the exit code of each kind.
    @Test func refusalsSayWhatWhyAndWhatToDo() async throws {
        try await withSetup { setup in
            let name = setup.deviceName
            let flv = try await setup.castc(["load", "https://example.com/a.flv", "--content-type", "video/x-flv"])
            #expect(flv.status == 9, "\(flv)")
            #expect(
                flv.stderr
                    == "castc: \(name) refused the load: it cannot play this media's format (LOAD_FAILED, MEDIA_SRC_NOT_SUPPORTED 104); check the URL and --content-type\n",
                "\(flv)")
            let unknown = try await setup.castc(["launch", "ABCDEF12"])
            #expect(unknown.status == 5, "\(unknown)")
            #expect(
                unknown.stderr.contains(
                    "refused the launch of ABCDEF12: it has no app ABCDEF12 (LAUNCH_ERROR, NOT_FOUND); castc apps --device \"\(name)\" ABCDEF12 asks which apps it can run"
                ), "\(unknown)")

            expectSuccess(try await setup.castc(["load", "https://example.com/a.mp4", "--duration", "100"]))
            let past = try await setup.castc(["seek", "200"])
            #expect(past.status == 11 && past.stderr.contains("it can seek from 0 s to 100 s"), "\(past)")
            let before = try await setup.castc(["seek", "--", "-1:00:00"])
            #expect(before.status == 11 && before.stderr.contains("it can seek from 0 s to 100 s"), "\(before)")
            let start = try await setup.castc([
                "load", "https://example.com/b.mp4", "--duration", "100", "--start", "200",
            ])
            #expect(
                start.status == 11
                    && start.stderr.contains("cannot start at 200 s in the media: it runs from 0 s to 100 s"),
                "\(start)")
            // A duration only the device knows: it finished at once, and castd says why.
            let late = try await setup.castc(["load", "https://example.com/c.mp4", "--start", "100000"])
            #expect(
                late.status == 11 && late.stderr.contains("cannot start at 100000 s in the media on \(name)"), "\(late)"
            )
            expectSuccess(try await setup.castc(["load", "https://example.com/a.mp4", "--duration", "100"]))

            // After a stop, castd knows nothing is loaded and says so for each request, as it
            // does for skip-ad and artwork.
            expectSuccess(try await setup.castc(["stop"]))
            for command in [["pause"], ["play"], ["seek", "10"], ["rate", "1.5"], ["skip-ad"]] {
                let refused = try await setup.castc(command)
                #expect(refused.status == 9, "\(command): \(refused)")
                #expect(
                    refused.stderr.contains(
                        "nothing is loaded on \(name) (the last media was stopped); load something first"),
                    "\(command): \(refused)")
            }
        }
    }

    @Test func aDeviceGivenByAddressIsUsedByItsOwnName() async throws {
        let host = "127.\(Int.random(in: 100...250)).\(Int.random(in: 1...250)).\(Int.random(in: 2...250))"
        try await withTemporaryDirectory { directory in
            try await withProcesses { launch in
                let ready = directory + "/emulator.json"
                let authority = directory + "/authority"
                _ = try launch(
                    "cast-emulator",
                    ["--name", "Attic TV", "--host", host, "--port", "8009", "--https-port", "8443"]
                        + ["--ready-file", ready, "--authority", authority],
                    [:])
                try await eventually(timeout: processStartTimeout, "the emulator's ready file") {
                    FileManager.default.fileExists(atPath: ready)
                }
                let info = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: ready)))
                let id = try #require((info as? [String: Any])?["id"] as? String)
                let socket = directory + "/castd.sock"
                _ = try launch(
                    "castd",
                    ["--mode", "user", "--socket", socket, "--no-discovery", "--state-directory", ""]
                        + ["--trust-root", authority + "/root.pem", "--device", host],
                    [:])
                let environment = ["CASTD_SOCKET": socket]
                try await eventually("castd to learn the device's name") {
                    let listed = try? await run("castc", ["devices"], environment: environment)
                    return listed?.stdout.contains("Attic TV") == true
                }
                expectSuccess(try await run("castc", ["connect", "Attic TV"], environment: environment))
                let devices = try await run("castc", ["devices", "--json"], environment: environment)
                let listed = try Castd_V1_ListDevicesResponse(jsonString: devices.stdout, options: Setup.lenient)
                #expect(listed.devices.map(\.id) == [id], "\(devices)")
                #expect(listed.devices.first?.source == .static && listed.devices.first?.manufacturer == "Google Inc.")
                #expect(listed.devices.first?.host == host && listed.devices.first?.linkState == .connected)
            }
        }
    }

    /// POSTs to cast-emulator's control interface.
    static func control(_ port: Int, _ path: String, _ body: String = "{}") async throws {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        #expect(status == 200, "\(path): \(status) \(String(decoding: data, as: UTF8.self))")
    }

    /// Listen streams end at SIGTERM like watchers do, with UNAVAILABLE and the reason. (castd
    /// ends them at once rather than at the end of the 5 s grace for calls; that difference is
    /// one of time only, so it is not asserted here.)
    @Test func sigtermEndsListeners() async throws {
        try await withSetup { setup in
            expectSuccess(try await setup.castc(["launch", "E2C0EC40", "--device", setup.deviceName]))
            let listener = try ChildProcess(
                "castc", ["listen", "urn:x-cast:com.castd.echo"], directory: setup.directory,
                environment: setup.environment)
            defer { listener.signal(SIGKILL) }
            try await eventually("castc listen to attach") { listener.stderr.contains("listening to") }
            setup.castd.signal(SIGTERM)
            let status = try await listener.waitForExit()
            #expect(status == 14, "UNAVAILABLE; castc said: \(listener.stderr)")
            #expect(listener.stderr.contains("shutting down"), "\(listener.stderr)")
            #expect(try await setup.castd.waitForExit(timeout: .seconds(6)) == 0)
        }
    }

    @Test func readyIsNotifiedOnceListening() async throws {
        try await withTemporaryDirectory { directory in
            let notify = try DatagramListener(path: directory + "/notify.sock")
            let socket = directory + "/castd.sock"
            let castd = try ChildProcess(
                "castd", ["--mode", "user", "--socket", socket, "--no-discovery", "--state-directory", ""],
                directory: directory, environment: ["NOTIFY_SOCKET": notify.path])
            defer { castd.signal(SIGKILL) }
            let message = try #require(try await notify.receive(timeout: .seconds(10)))
            #expect(message.contains("READY=1"))
            // READY means a client can connect now.
            let status = try await run("castc", ["status"], environment: ["CASTD_SOCKET": socket])
            #expect(status.status == 0, "\(status)")
            castd.signal(SIGTERM)
            #expect(try await castd.waitForExit() == 0)
            // STATUS lines may come first (castc's connection); then STOPPING.
            var stopping = false
            while !stopping, let message = try await notify.receive(timeout: .seconds(5)) {
                stopping = message.contains("STOPPING=1")
            }
            #expect(stopping)
        }
    }

    @Test func socketActivation() async throws {
        try await withTemporaryDirectory { directory in
            let socket = directory + "/castd.sock"
            let castd = productsDirectory.appendingPathComponent("castd").path
            let activator = try ChildProcess(
                "/usr/bin/systemd-socket-activate",
                ["-l", socket, castd, "--mode", "user", "--socket", socket, "--no-discovery", "--state-directory", ""]
                    + ["--device", "Static TV=127.0.0.1:9"],
                directory: directory)
            defer { activator.signal(SIGKILL) }
            try await eventually("the activation socket") { FileManager.default.fileExists(atPath: socket) }
            // castd is started by this first connection and serves it.
            let devices = try await run("castc", ["devices"], environment: ["CASTD_SOCKET": socket])
            #expect(devices.status == 0, "\(devices)\nactivator: \(activator.stderr)")
            #expect(devices.stdout.contains("Static TV"))
            #expect(activator.stderr.contains("socket activated"))
            let status = try await run("castc", ["status"], environment: ["CASTD_SOCKET": socket])
            #expect(status.stdout.contains(socket), "castd reports the socket it was given")
        }
    }

    /// The system and user units pass castd its files socket too (a second ListenStream=): a
    /// client's first connection may be to it, and starts castd, which serves it.
    @Test func socketActivationPassesTheFilesSocket() async throws {
        try await withTemporaryDirectory { directory in
            let socket = directory + "/castd.sock"
            let castd = productsDirectory.appendingPathComponent("castd").path
            let activator = try ChildProcess(
                "/usr/bin/systemd-socket-activate",
                ["-l", socket, "-l", socket + ".files", castd, "--mode", "user", "--socket", socket]
                    + ["--no-discovery", "--state-directory", "", "--device", "Static TV=127.0.0.1:9"],
                directory: directory)
            defer { activator.signal(SIGKILL) }
            try await eventually("the activation sockets") { FileManager.default.fileExists(atPath: socket + ".files") }
            let file = directory + "/clip.mp4"
            try Data(repeating: 3, count: 100).write(to: URL(fileURLWithPath: file))
            let fd = open(file, O_RDONLY | O_CLOEXEC)
            defer { close(fd) }
            let handles = try await onThread {
                try CastdFileHandover.connect(socketPath: socket).handOver([(fd, "clip.mp4")])
            }
            #expect(handles.count == 1, "activator: \(activator.stderr)")
            let devices = try await run("castc", ["devices"], environment: ["CASTD_SOCKET": socket])
            #expect(devices.status == 0 && devices.stdout.contains("Static TV"), "\(devices)")
            #expect(activator.stderr.contains("socket activated"))
        }
    }
}

/// A datagram socket standing in for systemd's NOTIFY_SOCKET.
final class DatagramListener: @unchecked Sendable {
    // @unchecked: the fd is only read from one test at a time.
    let path: String
    let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = try unixSocket(Int32(SOCK_DGRAM.rawValue), path: path, bindInstead: true)
    }

    deinit { close(fd) }

    /// One datagram, or nil after `timeout`. Blocks a Dispatch thread, not the test's.
    func receive(timeout: Duration) async throws -> String? {
        let seconds = Int(timeout.components.seconds)
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var tv = timeval(tv_sec: seconds, tv_usec: 0)
                setsockopt(self.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                var buffer = [UInt8](repeating: 0, count: 4096)
                let n = buffer.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
                continuation.resume(returning: n > 0 ? String(decoding: buffer[..<n], as: UTF8.self) : nil)
            }
        }
    }
}
