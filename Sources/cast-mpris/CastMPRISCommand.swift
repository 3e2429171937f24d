import ArgumentParser
import CastArtwork
import CastMPRIS
import CastdSupport
import Dispatch
import Foundation
import Logging

@main
struct CastMPRISCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cast-mpris",
        abstract: "Show the media on Cast devices in the desktop's media controls (MPRIS2).",
        discussion: """
            cast-mpris is a client of castd, the Cast daemon: for each device that has a media \
            session, it puts an MPRIS2 player on the session bus, named \
            org.mpris.MediaPlayer2.castd.<device id>. GNOME Shell's and KDE Plasma's media \
            controls, the lock screen, the keyboard's media keys, playerctl and status bars then \
            show what the device plays, with its artwork, and control it: play, pause, next, \
            previous, seek, volume, loop and shuffle. Commands go to castd, which every other \
            client of the device (castc, scripts) shares.

            Run it once per desktop session, as the user: its systemd user unit does that \
            (systemctl --user enable --now cast-mpris.service). It finds castd by the usual \
            rules ($CASTD_SOCKET, $XDG_RUNTIME_DIR/castd/castd.sock, /run/castd/castd.sock), \
            and the session bus by $DBUS_SESSION_BUS_ADDRESS. When castd stops, the players \
            go; cast-mpris reconnects (with backoff) and they come back.

            Artwork is downloaded once into $XDG_CACHE_HOME/castd/artwork/ (64 MiB at most by \
            default, least recently used first out; shared with `castc artwork`), and shown as a \
            file:// URL. Only http and https, 10 MiB per image, 10 s (--artwork-timeout), 5 \
            redirects, and only PNG, JPEG, GIF and WebP bytes.

            Examples:
              cast-mpris                            as the unit runs it
              cast-mpris --log-level debug          see every call and change
              playerctl -l                          the players it shows
              playerctl -p castd play-pause         control the one castd player
            """,
        version: CastdVersion.current
    )

    @Option(name: .long, help: "castd's socket (default: $CASTD_SOCKET, the session's, the system's).")
    var socket: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Log level, as castd's: verbose (or trace), debug, info, notice, warning, error or critical.",
            valueName: "level"),
        transform: LogLevelArgument.parse)
    var logLevel: Logger.Level = .info

    @Flag(name: .long, help: "Show no artwork (download nothing).")
    var noArtwork = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "What the artwork cache may hold, in MiB (least recently used first out).", valueName: "MiB"))
    var artworkCacheSize = 64

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The most one artwork download may take, redirects and all, in seconds.", valueName: "seconds"))
    var artworkTimeout = 10

    func validate() throws {
        guard (1...4096).contains(artworkCacheSize) else {
            throw ValidationError("--artwork-cache-size is in MiB, from 1 to 4096, not \(artworkCacheSize)")
        }
        guard (1...300).contains(artworkTimeout) else {
            throw ValidationError("--artwork-timeout is in seconds, from 1 to 300, not \(artworkTimeout)")
        }
    }

    func run() async throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "cast-mpris")
        do throws(BusError) {
            try BusLoop.checkSessionBus()
        } catch {
            // The one thing cast-mpris needs that it cannot wait for: say so and stop.
            let address = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"]
            let bus = address.map { "DBUS_SESSION_BUS_ADDRESS=\($0)" } ?? "DBUS_SESSION_BUS_ADDRESS is not set"
            FileHandle.standardError.write(
                Data("cast-mpris: \(error.message); it runs in a desktop session, on its D-Bus (\(bus))\n".utf8))
            throw ExitCode(69)  // EX_UNAVAILABLE
        }
        let loop: BusLoop
        do {
            loop = try BusLoop()
        } catch {
            throw ValidationError("cannot start the D-Bus event loop: \(error)")
        }
        let loopEnded = Task { await loop.runOnThread() }
        var artwork: MPRISArtwork?
        if !noArtwork {
            do {
                let cache = try ArtworkCache(
                    maximumTotalBytes: artworkCacheSize << 20,
                    fetcher: ArtworkFetcher(timeout: .seconds(artworkTimeout)), logger: logger)
                artwork = MPRISArtwork(cache: cache, logger: logger)
                logger.info("artwork cache: \(cache.directory), at most \(artworkCacheSize) MiB")
            } catch {
                // The players work without artwork; say why there is none.
                logger.warning("no artwork: \(error)")
            }
        }
        let bridge = MPRISBridge(options: .init(socketPath: socket), loop: loop, artwork: artwork, logger: logger)
        let task = Task { await bridge.run() }
        let signal = await TerminationSignal.next()
        logger.info("\(signal ?? "cancelled"): leaving the session bus")
        // The bridge removes its players (on the loop) as it ends; the loop stops after that.
        task.cancel()
        await task.value
        loop.stop()
        await loopEnded.value
    }
}

/// castd's and castc's level names, and swift-log's `trace` for verbose.
enum LogLevelArgument {
    static func parse(_ text: String) throws -> Logger.Level {
        if text == "verbose" { return .trace }
        guard let level = Logger.Level(rawValue: text) else {
            throw ValidationError(
                "'\(text)' is not a log level: give verbose, debug, info, notice, warning, error or critical")
        }
        return level
    }
}
