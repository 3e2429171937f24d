import ArgumentParser
import CastEmulator
import CastdConversion
import CastdSupport
import Foundation
import Logging

@main
struct CastEmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cast-emulator",
        abstract: "Pretend to be a Google Cast device (a Chromecast) on this machine.",
        discussion: """
            cast-emulator speaks the device side of CastV2: a TLS server with a self-signed \
            certificate, virtual connections, heartbeats, the platform receiver (GET_STATUS, \
            LAUNCH, STOP, SET_VOLUME, GET_APP_AVAILABILITY) and a media player for the Default \
            Media Receiver (CC1AD845) whose clock really runs. Senders such as castd, \
            pychromecast or catt can drive it without a real device.

            Senders that look a device up over HTTP(S) need --http-port 8008 and \
            --https-port 8443: pychromecast reads https://HOST:8443/setup/eureka_info before \
            it connects to port 8009. Every 127.x.y.z address is loopback on Linux, so several \
            emulators can each have the real ports.

            Device authentication (tp.deviceauth) is answered like a real device does: a \
            device certificate issued through an intermediate by the emulator's own root, and \
            a signature over the sender's nonce and the TLS certificate. A sender that trusts \
            the root authenticates the emulator as a genuine device. --write-root FILE writes \
            it; --authority DIR keeps the root and intermediate in DIR (made on first use), so \
            that every emulator started with the same DIR, and castd, share one root:

              cast-emulator --name "Test TV" --authority /tmp/cast-ca &
              castd --trust-root /tmp/cast-ca/root.pem

            --impostor NAME makes the device fail authentication in one way, keeping the rest \
            genuine, for testing senders (castd refuses it; castd --device-auth warn uses it \
            with a warning):

            \(EmulatorImpostor.allCases.map { "  \($0.rawValue)\n      \($0.summary)" }.joined(separator: "\n"))

              cast-emulator --name "Fake TV" --impostor wrong-nonce \\
                --authority /tmp/cast-ca

            It logs one line per event to standard error; with --log it also writes every \
            CastV2 message received and sent as a JSON line. SIGINT or SIGTERM stops it (exit 0).

            Example: a device that pychromecast can use, with a message log and a ready file:

              cast-emulator --name "Test TV" --host 127.0.0.2 --port 8009 \\
                --http-port 8008 --https-port 8443 \\
                --log /tmp/cast.jsonl --ready-file /tmp/ready.json &

              python3 -c 'import pychromecast, uuid
              cast = pychromecast.get_chromecast_from_host(
                  ("127.0.0.2", 8009, uuid.uuid4(), "Chromecast", "Test TV"))
              cast.wait(timeout=10); print(cast.status)'

            Tests should use --port 0 (a free port) and read the port from the ready file.

            Apps: Backdrop (idle screen), the Default Media Receiver (CC1AD845), YouTube, \
            Netflix, Spotify, an Android TV app (A7CC5A5E, appType ANDROID_TV: launches only \
            when the LAUNCH lists ANDROID_TV in supportedAppTypes) and an echo app (E2C0EC40: \
            sends every message on urn:x-cast:com.castd.echo back to its sender, and to every \
            sender when the JSON says "broadcast": true). Add your own with --app:

              cast-emulator --app "ABCD1234:Chat:urn:x-cast:com.example.chat" \\
                --app "BEEF0001:TV:urn:x-cast:com.google.cast.media,urn:x-cast:tv.ctl"

            The media player does what the Default Media Receiver does for the sender SDK: \
            LOAD (tracks, text track style, ad breaks, credentials), queues (QUEUE_LOAD, \
            INSERT, REMOVE, REORDER, UPDATE, repeat modes), SEEK, SET_PLAYBACK_RATE, \
            EDIT_TRACKS_INFO, SKIP_AD and stream volume. A LOAD of a content type listed by \
            --unplayable-content-type fails with LOAD_FAILED (detailedErrorCode 104):

              cast-emulator --unplayable-content-type video/x-flv \\
                --unplayable-content-type application/vnd.ms-sstr+xml

            Media fetching (--fetch-media, on by default with --publish): like a real \
            device, the media player GETs what it plays. When an item becomes current (LOAD, \
            QUEUE_LOAD, the next item) it stays BUFFERING while it fetches the start of \
            contentId (Range: bytes=0-65535, 200 or 206) and each text track (whole, at most \
            1 MiB); a refused connection, no answer within 5 s or an HTTP error ends the \
            session IDLE ERROR and fails the LOAD with LOAD_FAILED, detailedErrorCode 103 \
            (MEDIA_NETWORK). After a SEEK it reads 64 KiB where the position maps to in the \
            file, and while PLAYING it reads on, 64 KiB at a time, at the rate the content \
            plays (size / duration x playbackRate; 256 KiB/s without a duration), one request \
            at a time, until PAUSE, STOP, the end or another load. Only http:// URLs whose host \
            is an IP address or localhost are fetched (what castd's media server hands out); \
            https:// URLs and host names are left alone, never resolved, and load as before. \
            --log records every fetch as {"fetch": {"url", "purpose", "range", "status", \
            "bytes", "size", "error" or "notFetched"}}; /emulator/state lists them in "fetches":

              cast-emulator --port 0 --fetch-media --log /tmp/cast.jsonl

            A multizone group: each --group-member ID=NAME is a member (MULTIZONE_STATUS on \
            urn:x-cast:com.google.cast.multizone); TXT ca gains bit 32 and the model is \
            "Google Cast Group" unless --model says otherwise:

              cast-emulator --name "Downstairs" --port 42001 \\
                --group-member 0123456789abcdef0123456789abcdef=Kitchen \\
                --group-member fedcba9876543210fedcba9876543210=Living\\ Room

            A device whose volume cannot be changed (SET_VOLUME with a level is refused with \
            BAD_PARAMETER, muting works): cast-emulator --fixed-volume

            A Google TV, or a Chromecast in a TV's HDMI port, says whether the TV is in \
            standby and whether it shows the device's input (isStandBy, isActiveInput in \
            RECEIVER_STATUS). --tv reports them (on, this input, at start); the TV changes \
            with POST /emulator/tv while it runs:

              cast-emulator --tv --http-port 8008 &
              curl -s -X POST http://127.0.0.1:8008/emulator/tv -d '{"standBy": true}'

            What the emulator saw, for tests and app developers: with --http-port, \
            GET /emulator/state returns JSON with the running app, the media session, the \
            volume, the connected senders and the last 100 launches and loads (with their \
            language, supportedAppTypes and credentials):

              cast-emulator --port 0 --http-port 8008 &
              curl -s http://127.0.0.1:8008/emulator/state

            Fault injection, for testing a sender's reconnection and liveness checks: the same \
            interface takes POSTs (GET /emulator lists every route). A slow device from the \
            start: --reply-delay 400. While it runs:

              curl -s -X POST http://127.0.0.1:8008/emulator/faults -d '{"heartbeat": "stopped"}'
              curl -s -X POST http://127.0.0.1:8008/emulator/faults/drop-links
              curl -s -X POST http://127.0.0.1:8008/emulator/faults/restart -d '{"downtimeMs": 3000}'
              curl -s -X POST http://127.0.0.1:8008/emulator/faults/move-port -d '{"port": 0}'
              curl -s -X POST http://127.0.0.1:8008/emulator/transfer -d '{"to": "http://127.0.0.2:8008"}'

            heartbeat "stopped": no PONG and no PING; "silent": nothing at all is sent while the \
            connections stay open. After move-port the ready file and the mDNS announcement \
            (--publish) carry the new port. A transfer moves the running app's session to the \
            emulator whose --http-port is given (stream transfer, as CAF's STORE_SESSION and \
            RESUME_SESSION do it).

            A hostile device, for testing a sender's parsers and limits: each POST writes one \
            bad frame on every open link, below the emulator's own encoder:

              curl -s -X POST http://127.0.0.1:8008/emulator/faults/hostile -d '{"kind": "oversized-frame", "length": 4294967295}'
              curl -s -X POST http://127.0.0.1:8008/emulator/faults/hostile -d '{"kind": "current-time-object"}'
              curl -s -X POST http://127.0.0.1:8008/emulator/faults/flood -d '{"perSecond": 10000, "durationMs": 5000}'

            Kinds: oversized-frame (length over 65536, trailingBytes after it), \
            zero-length-frame, garbage-frame (length), truncated-message, empty-source-id, \
            empty-destination-id, empty-namespace, string-type-binary-payload, \
            binary-type-utf8-payload, binary-payload (namespace), media-status-string, \
            media-session-id-letters, current-time-object, volume-level-string, \
            receiver-volume-level-string, applications-not-array, out-of-range-numbers, \
            not-json (namespace), \
            deeply-nested (depth, namespace). The first two break the framing (a sender must \
            close the link); the others must be skipped or read leniently. flood broadcasts \
            the media session's MEDIA_STATUS, currentTime moving on, to the app's senders at \
            that rate, each by its deadline, slowed down by TCP if they read slower, and \
            answers how many it sent.
            """,
        version: CastdVersion.current
    )

    @Option(help: "The friendly name (TXT fn, eureka_info name).")
    var name = "Emulated TV"

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: ArgumentHelp("The CastV2 (TLS) port. 0 picks a free one.", valueName: "port"))
    var port = 8009

    @Option(
        help: ArgumentHelp(
            "Serve /setup/eureka_info over HTTP on this port (real devices: 8008). 0 picks one.", valueName: "port"))
    var httpPort: Int?

    @Option(
        help: ArgumentHelp(
            "Serve /setup/eureka_info over HTTPS on this port (real devices: 8443). 0 picks one.", valueName: "port"))
    var httpsPort: Int?

    @Option(help: ArgumentHelp("The device id: 32 hex digits. Random when not given.", valueName: "hex"))
    var id: String?

    @Option(
        help: ArgumentHelp(
            "The model name (TXT md, eureka_info model_name). Default: Chromecast, or Google Cast Group with --group-member.",
            valueName: "model"))
    var model: String?

    @Option(
        help: ArgumentHelp(
            "Capability bits (TXT ca): video out 1, video in 2, audio out 4, audio in 8. 4 makes an audio device.",
            valueName: "bits"))
    var capabilities: UInt32 = 5

    @Option(
        name: .customLong("log"),
        help: ArgumentHelp(
            "Write every CastV2 message received and sent (and every media fetch) to FILE, one JSON object per line.",
            valueName: "file")
    )
    var logFile: String?

    @Option(
        help: ArgumentHelp(
            "Once listening, write FILE (atomically) with JSON {host, port, httpPort, httpsPort, id, name, model, pid}.",
            valueName: "file"
        )
    )
    var readyFile: String?

    @Option(
        help: ArgumentHelp(
            "Write the root certificate (PEM) that senders must trust to authenticate this device (tp.deviceauth).",
            valueName: "file"
        )
    )
    var writeRoot: String?

    @Option(
        help: ArgumentHelp(
            "Keep the device authentication root and intermediate in DIR, made on first use and shared by every emulator given DIR; writes DIR/root.pem for castd --trust-root.",
            valueName: "dir"
        )
    )
    var authority: String?

    @Option(
        help: ArgumentHelp(
            "Fail device authentication in this way, for testing senders (each is explained above).",
            valueName: "name"
        )
    )
    var impostor: EmulatorImpostor?

    @Flag(help: "Announce the device over mDNS (_googlecast._tcp).")
    var publish = false

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "Fetch media as a real device does (default: on with --publish, off without): a LOAD waits for the start of the content (Range bytes=0-65535) and each text track, and fails (LOAD_FAILED 103) when a fetch does; SEEK and playing read on. Only http:// URLs whose host is an IP address or localhost are fetched: https:// and host names are never fetched nor resolved (logged as not fetched)."
        )
    )
    var fetchMedia: Bool?

    @Flag(
        help: ArgumentHelp(
            "Play only what the model (--model) plays, as a real device does: probe fetched media with ffprobe (needs ffmpeg) and fail a LOAD whose container or codecs the model cannot play with LOAD_FAILED 104 (MEDIA_SRC_NOT_SUPPORTED). Needs fetching (--fetch-media or --publish)."
        )
    )
    var probeMedia = false

    @Option(
        name: .customLong("app"),
        help: ArgumentHelp(
            "Add an app that echoes on its custom namespaces (and plays media if it lists urn:x-cast:com.google.cast.media). Repeatable. Example: --app 'ABCD1234:Chat:urn:x-cast:com.example.chat'",
            valueName: "id:name:namespace[,namespace…]"
        )
    )
    var apps: [String] = []

    @Option(
        name: .customLong("unplayable-content-type"),
        help: ArgumentHelp(
            "A content type whose LOAD fails (LOAD_FAILED, detailedErrorCode 104). Repeatable; replaces the default video/x-flv, video/x-ms-wmv, application/x-castd-unplayable. Example: --unplayable-content-type video/webm",
            valueName: "type"
        )
    )
    var unplayableContentTypes: [String] = []

    @Option(
        name: .customLong("group-member"),
        help: ArgumentHelp(
            "Make the device a multizone group with this member. Repeatable. Example: --group-member 0123456789abcdef0123456789abcdef=Kitchen",
            valueName: "id=name"
        )
    )
    var groupMembers: [String] = []

    @Flag(help: "The device volume is fixed: SET_VOLUME with a level is refused (BAD_PARAMETER); mute still works.")
    var fixedVolume = false

    @Option(
        help: ArgumentHelp(
            "MEDIA_STATUS carries only N queue items around the current one, as real receivers do with long queues (senders fetch the rest with QUEUE_GET_ITEM_IDS and QUEUE_GET_ITEMS). Default: every item.",
            valueName: "n"))
    var queueWindow: Int?

    @Flag(
        help:
            "The device is on a TV that says whether it is in standby and shows this input (on, this input, at start). Changeable at run time: POST /emulator/tv {\"standBy\": true}."
    )
    var tv = false

    @Option(
        help: ArgumentHelp(
            "Fault injection: send every reply and status (but tp.* messages) this many milliseconds late, like a slow device. Changeable at run time: POST /emulator/faults {\"replyDelayMs\": MS}.",
            valueName: "ms"
        )
    )
    var replyDelay: Int = 0

    @Option(
        help: ArgumentHelp(
            "Standard error log level: trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel: String = "info"

    func validate() throws {
        if probeMedia, !(fetchMedia ?? publish) {
            throw ValidationError("--probe-media needs the device to fetch its media: add --fetch-media (or --publish)")
        }
        if probeMedia, FFprobe.locate() == nil {
            throw ValidationError("--probe-media needs ffprobe, which is not on PATH (apt-get install ffmpeg)")
        }
        if let queueWindow, queueWindow < 1 {
            throw ValidationError("--queue-window must be 1 or more (the current item is always sent)")
        }
        if let id, id.count != 32 || !id.allSatisfy(\.isHexDigit) {
            throw ValidationError("--id must be 32 hex digits, like 8d8f27dc2b7d4e0a9d4b1b1e6c1f3f2a")
        }
        for (flag, value) in [("--port", port), ("--http-port", httpPort), ("--https-port", httpsPort)] {
            if let value, !(0...65535).contains(value) {
                throw ValidationError("\(flag) must be between 0 and 65535")
            }
        }
        if Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        if name.isEmpty { throw ValidationError("--name must not be empty") }
        if !(0...600_000).contains(replyDelay) {
            throw ValidationError("--reply-delay must be between 0 and 600000 milliseconds")
        }
        _ = try parsedApps()
        _ = try parsedGroupMembers()
        for type in unplayableContentTypes where !Self.isContentType(type) {
            throw ValidationError("--unplayable-content-type must be a content type like video/x-flv; got “\(type)”")
        }
    }

    func parsedApps() throws -> [EmulatorApp] {
        var parsed: [EmulatorApp] = []
        for value in apps {
            let app: EmulatorApp
            do {
                app = try EmulatorApp(parsing: value)
            } catch {
                throw ValidationError("--app: \(error.message)")
            }
            if parsed.contains(where: { $0.appID == app.appID }) {
                throw ValidationError("--app: the app id \(app.appID) is given twice")
            }
            parsed.append(app)
        }
        return parsed
    }

    func parsedGroupMembers() throws -> [EmulatorGroupMember] {
        var parsed: [EmulatorGroupMember] = []
        for value in groupMembers {
            do {
                parsed.append(try EmulatorGroupMember(parsing: value))
            } catch {
                throw ValidationError("--group-member: \(error.message)")
            }
        }
        return parsed
    }

    /// type/subtype, without spaces.
    static func isContentType(_ value: String) -> Bool {
        let parts = value.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty } && !value.contains(where: \.isWhitespace)
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "cast-emulator")

        var configuration = EmulatorConfiguration()
        configuration.name = name
        configuration.host = host
        configuration.port = port
        configuration.httpPort = httpPort
        configuration.httpsPort = httpsPort
        if let id { configuration.deviceID = id.lowercased() }
        configuration.capabilities = capabilities
        configuration.logFile = logFile
        let members = try parsedGroupMembers()
        if !members.isEmpty { configuration.makeGroup(of: members) }
        if let model { configuration.model = model }
        // Apps given on the command line come first: one with a built-in app's id replaces it.
        configuration.apps = try parsedApps() + configuration.apps
        if !unplayableContentTypes.isEmpty { configuration.unplayableContentTypes = Set(unplayableContentTypes) }
        configuration.fixedVolume = fixedVolume
        configuration.queueWindow = queueWindow
        configuration.fetchMedia = fetchMedia ?? publish
        configuration.probeMedia = probeMedia
        if tv { configuration.tv = EmulatorTV() }
        configuration.replyDelay = .milliseconds(replyDelay)
        configuration.impostor = impostor
        if let authority {
            do {
                configuration.deviceAuthority = try EmulatorDeviceAuthority.loadOrCreate(directory: authority)
            } catch {
                throw ValidationError("--authority: \(error)")
            }
        }

        let emulator = CastDeviceEmulator(configuration: configuration, logger: logger)
        let endpoints = try await emulator.start()
        if let writeRoot {
            try emulator.deviceAuthority().writeRoot(to: writeRoot)
        }
        if let readyFile {
            try ReadyFile(endpoints: endpoints, configuration: configuration).write(to: readyFile)
        }
        let publisher = publish ? try publishOverMDNS(emulator, endpoints: endpoints, logger: logger) : nil
        defer { publisher?.stop() }

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await emulator.run() }
            if let publisher {
                group.addTask {
                    for await txt in emulator.txtRecordChanges() {
                        do { try publisher.updateTXT(txt) } catch {
                            logger.warning("cannot update the TXT record: \(error)")
                        }
                    }
                }
            }
            // The CastV2 port moves with POST /emulator/faults/move-port: announce it, and say
            // it in the ready file.
            group.addTask { [readyFile, configuration] in
                for await moved in emulator.endpointChanges().dropFirst() {
                    if let publisher {
                        do { try publisher.updatePort(moved.port) } catch {
                            logger.warning("cannot announce the new port: \(error)")
                        }
                    }
                    if let readyFile {
                        do { try ReadyFile(endpoints: moved, configuration: configuration).write(to: readyFile) } catch
                        {
                            logger.warning("cannot rewrite the ready file: \(error)")
                        }
                    }
                }
            }
            group.addTask {
                guard let signal = await TerminationSignal.next() else { return }
                logger.info("received \(signal), shutting down")
                await emulator.shutdown()
            }
            // Whichever ends first ends both: run() after a signal, or the signal wait after run().
            try await group.next()
            group.cancelAll()
            try await group.waitForAll()
        }
    }
}

extension EmulatorImpostor: ExpressibleByArgument {}
