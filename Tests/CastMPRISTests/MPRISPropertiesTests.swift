import CastMPRIS
import CastdAPI
import Foundation
import Testing

/// The mapping from castd's state to MPRIS2, and the specification's rules for calls, without a
/// bus: each rule on its own.
struct MPRISPropertiesTests {
    static func media(
        _ state: CastdPlayerState = .playing, position: Double = 10, duration: Double = 200,
        commands: [CastdMediaCommand] = [.pause, .seek, .queueNext, .queuePrevious]
    ) -> CastdMediaStatus {
        var media = CastdMediaStatus()
        media.deviceID = "d"
        media.mediaSessionID = 7
        media.playerState = state
        media.currentTime = position
        media.playbackRate = 1
        media.updatedAtMs = 1_700_000_000_000
        media.media.contentID = "https://example.com/a.mp3"
        media.media.duration = duration
        media.media.streamType = .buffered
        media.supportedMediaCommands = commands.reduce(0) { $0 | $1.flag }
        return media
    }

    static func snapshot(_ media: CastdMediaStatus) -> MPRISPlayerSnapshot {
        var device = CastdDevice()
        device.id = "d"
        device.friendlyName = "TV"
        return MPRISPlayerSnapshot(device: device, media: media)
    }

    static let updated = Date(timeIntervalSince1970: 1_700_000_000)

    @Test(arguments: [
        (CastdPlayerState.playing, "Playing"), (.buffering, "Playing"), (.loading, "Playing"),
        (.paused, "Paused"), (.idle, "Stopped"), (.unknown, "Stopped"),
    ])
    func playbackStatus(state: CastdPlayerState, expected: String) {
        #expect(MPRISProperties.playbackStatus(Self.media(state)) == expected)
    }

    @Test(arguments: [
        (CastdRepeatMode.off, "None", false), (.single, "Track", false), (.all, "Playlist", false),
        (.allAndShuffle, "Playlist", true),
    ])
    func loopStatusAndShuffleFromTheRepeatMode(mode: CastdRepeatMode, loop: String, shuffle: Bool) {
        var media = Self.media()
        media.repeatMode = mode
        let properties = MPRISProperties.player(Self.snapshot(media))
        #expect(properties.first { $0.0 == "LoopStatus" }?.1 == .string(loop))
        #expect(properties.first { $0.0 == "Shuffle" }?.1 == .bool(shuffle))
    }

    @Test func writingLoopStatusAndShuffleKeepsTheOtherOne() {
        #expect(MPRISProperties.repeatMode(loopStatus: "Playlist", current: .allAndShuffle) == .allAndShuffle)
        #expect(MPRISProperties.repeatMode(loopStatus: "Playlist", current: .off) == .all)
        #expect(MPRISProperties.repeatMode(loopStatus: "Track", current: .allAndShuffle) == .single)
        #expect(MPRISProperties.repeatMode(loopStatus: "None", current: .all) == .off)
        #expect(MPRISProperties.repeatMode(loopStatus: "Sometimes", current: .all) == nil)
        #expect(MPRISProperties.repeatMode(shuffle: true, current: .single) == .allAndShuffle)
        #expect(MPRISProperties.repeatMode(shuffle: false, current: .allAndShuffle) == .all)
        #expect(MPRISProperties.repeatMode(shuffle: false, current: .single) == .single)
    }

    @Test func positionIsLiveWhilePlayingAndHeldWhilePaused() {
        let playing = Self.media(.playing, position: 10)
        #expect(MPRISProperties.position(playing, at: Self.updated.addingTimeInterval(2.5)) == 12_500_000)
        var faster = playing
        faster.playbackRate = 2
        #expect(MPRISProperties.position(faster, at: Self.updated.addingTimeInterval(2.5)) == 15_000_000)
        let paused = Self.media(.paused, position: 10)
        #expect(MPRISProperties.position(paused, at: Self.updated.addingTimeInterval(60)) == 10_000_000)
        // Never past the end.
        #expect(MPRISProperties.position(playing, at: Self.updated.addingTimeInterval(1000)) == 200_000_000)
    }

    @Test func metadataHasWhatTheMediaSaysAndNoLengthForALiveStream() throws {
        var media = Self.media()
        media.currentItemID = 3
        media.media.metadata.title = "Song"
        media.media.metadata.artist = "Band"
        media.media.metadata.albumName = "Album"
        media.media.metadata.albumArtist = "Various"
        media.media.metadata.trackNumber = 4
        media.media.metadata.discNumber = 2
        var snapshot = Self.snapshot(media)
        snapshot.artworkPath = "/home/a b/.cache/castd/artwork/x.png"
        let metadata = Dictionary(uniqueKeysWithValues: MPRISProperties.metadata(snapshot).map { ($0.0, $0.1) })
        #expect(metadata["mpris:trackid"] == .objectPath("/org/castd/track/item3"))
        #expect(metadata["mpris:length"] == .int64(200_000_000))
        #expect(metadata["xesam:title"] == .string("Song"))
        #expect(metadata["xesam:artist"] == .strings(["Band"]))
        #expect(metadata["xesam:album"] == .string("Album"))
        #expect(metadata["xesam:albumArtist"] == .strings(["Various"]))
        #expect(metadata["xesam:trackNumber"] == .int32(4))
        #expect(metadata["xesam:discNumber"] == .int32(2))
        #expect(metadata["xesam:url"] == .string("https://example.com/a.mp3"))
        #expect(metadata["mpris:artUrl"] == .string("file:///home/a%20b/.cache/castd/artwork/x.png"))

        media.media.streamType = .live
        let live = MPRISProperties.metadata(Self.snapshot(media))
        #expect(!live.contains { $0.0 == "mpris:length" })
        #expect(live.first?.1 == .objectPath("/org/castd/track/item3"))
    }

    @Test func trackIDsAreStableObjectPaths() {
        var media = Self.media()
        #expect(MPRISProperties.trackID(media) == "/org/castd/track/media7")
        media.currentItemID = -1
        #expect(MPRISProperties.trackID(media) == "/org/castd/track/item18446744073709551615")
        media.currentItemID = 0
        media.mediaSessionID = 0
        #expect(MPRISProperties.trackID(media) == MPRISProperties.noTrack)
    }

    @Test func nextAndPreviousComeFromTheQueueAndTheSupportedCommands() {
        var media = Self.media()
        media.queueItemIds = [1, 2, 3]
        media.currentItemID = 1
        #expect(MPRISProperties.canGoNext(media))
        #expect(!MPRISProperties.canGoPrevious(media))
        media.currentItemID = 3
        #expect(!MPRISProperties.canGoNext(media))
        #expect(MPRISProperties.canGoPrevious(media))
        media.repeatMode = .all
        #expect(MPRISProperties.canGoNext(media), "repeating the queue, the last item has a next")
        media.supportedMediaCommands = CastdMediaCommand.pause.flag
        #expect(!MPRISProperties.canGoNext(media) && !MPRISProperties.canGoPrevious(media))
        // No queue at all: nothing next.
        let single = Self.media()
        #expect(!MPRISProperties.canGoNext(single))
    }

    @Test func seekingNeedsTheCommandAndADurationOrALiveRange() {
        #expect(MPRISProperties.canSeek(Self.media()))
        #expect(!MPRISProperties.canSeek(Self.media(commands: [.pause])))
        var live = Self.media(duration: 0)
        live.media.streamType = .live
        #expect(!MPRISProperties.canSeek(live))
        live.liveSeekableRange.start = 100
        live.liveSeekableRange.end = 400
        #expect(MPRISProperties.canSeek(live))
        #expect(!MPRISProperties.canPause(Self.media(.idle)))
        #expect(!MPRISProperties.canPause(Self.media(commands: [.seek])))
    }

    @Test func seekedIsForJumpsNotForProgressPausesOrResumes() {
        let old = Self.media(.playing, position: 10)
        var progressed = old
        progressed.currentTime = 15.3
        progressed.updatedAtMs += 5_000
        #expect(MPRISProperties.seekedPosition(from: old, to: progressed) == nil)
        var paused = progressed
        paused.playerState = .paused
        #expect(MPRISProperties.seekedPosition(from: old, to: paused) == nil)
        var resumed = paused
        resumed.playerState = .playing
        resumed.updatedAtMs += 60_000
        #expect(MPRISProperties.seekedPosition(from: paused, to: resumed) == nil)
        var sought = progressed
        sought.currentTime = 90
        #expect(MPRISProperties.seekedPosition(from: old, to: sought) == 90_000_000)
        var back = progressed
        back.currentTime = 2
        #expect(MPRISProperties.seekedPosition(from: old, to: back) == 2_000_000)
        // A new track from its start is no jump; one that starts elsewhere is.
        var next = Self.media(.playing, position: 0)
        next.currentItemID = 2
        #expect(MPRISProperties.seekedPosition(from: old, to: next) == nil)
        next.currentTime = 45
        #expect(MPRISProperties.seekedPosition(from: old, to: next) == 45_000_000)
    }

    @Test func callsFollowTheSpecification() throws {
        let playing = Self.snapshot(Self.media(.playing, position: 10))
        let at = Self.updated
        #expect(try MPRISProperties.action(for: .playPause, on: playing, at: at) == .pause)
        #expect(try MPRISProperties.action(for: .playPause, on: Self.snapshot(Self.media(.paused)), at: at) == .play)
        #expect(try MPRISProperties.action(for: .seek(offset: 5_000_000), on: playing, at: at) == .seek(to: 15))
        #expect(try MPRISProperties.action(for: .seek(offset: -60_000_000), on: playing, at: at) == .seek(to: 0))
        // Past the end: Next, when there is a next; else nothing.
        #expect(try MPRISProperties.action(for: .seek(offset: 500_000_000), on: playing, at: at) == nil)
        var queued = Self.media(.playing, position: 10)
        queued.queueItemIds = [1, 2]
        queued.currentItemID = 1
        #expect(
            try MPRISProperties.action(for: .seek(offset: 500_000_000), on: Self.snapshot(queued), at: at) == .next)
        // SetPosition: only for the track that plays, and within it.
        let track = MPRISProperties.trackID(queued)
        #expect(
            try MPRISProperties.action(
                for: .setPosition(trackID: track, position: 30_000_000), on: Self.snapshot(queued), at: at)
                == .seek(to: 30))
        #expect(
            try MPRISProperties.action(
                for: .setPosition(trackID: "/org/castd/track/item99", position: 30_000_000),
                on: Self.snapshot(queued), at: at) == nil)
        #expect(
            try MPRISProperties.action(
                for: .setPosition(trackID: track, position: 300_000_000), on: Self.snapshot(queued), at: at) == nil)
        #expect(try MPRISProperties.action(for: .setRate(0), on: playing, at: at) == .pause)
        #expect(try MPRISProperties.action(for: .setRate(8), on: playing, at: at) == .setRate(2))
        #expect(try MPRISProperties.action(for: .setVolume(1.7), on: playing, at: at) == .setVolume(1))
        #expect(try MPRISProperties.action(for: .setVolume(-1), on: playing, at: at) == .setVolume(0))
        #expect(try MPRISProperties.action(for: .next, on: playing, at: at) == nil)
        #expect(
            try MPRISProperties.action(for: .openURI("https://example.com/b.mp4"), on: playing, at: at)
                == .load(url: "https://example.com/b.mp4"))
        #expect(throws: BusError.self) {
            try MPRISProperties.action(for: .openURI("file:///etc/passwd"), on: playing, at: at)
        }
        #expect(throws: BusError.self) {
            try MPRISProperties.action(for: .setLoopStatus("Sometimes"), on: playing, at: at)
        }
        let noPause = Self.snapshot(Self.media(commands: [.seek]))
        #expect(throws: BusError.self) { try MPRISProperties.action(for: .playPause, on: noPause, at: at) }
        #expect(try MPRISProperties.action(for: .pause, on: noPause, at: at) == nil)
    }

    @Test(arguments: [
        ("0123456789abcdef0123456789abcdef", "_0123456789abcdef0123456789abcdef"),
        ("a1b2", "a1b2"),
        ("127.0.0.1:8009", "_127_2e0_2e0_2e1_3a8009"),
        ("", "_"),
        ("TV_1-x", "TV_5f1_2dx"),
    ])
    func busNamesAreValidAndDistinct(id: String, element: String) {
        #expect(MPRISBusName.element(forDeviceID: id) == element)
        #expect(MPRISBusName.name(forDeviceID: id) == "org.mpris.MediaPlayer2.castd." + element)
    }

    @Test func aVeryLongIDStillGivesAValidName() {
        let name = MPRISBusName.name(forDeviceID: String(repeating: "é", count: 300))
        #expect(name.utf8.count <= 255)
        #expect(name.allSatisfy { $0.isASCII })
    }

    @Test func textForTheBusHasNoNULAndIsBounded() {
        #expect(BusText.valid("a\0b") == "ab")
        let long = String(repeating: "é", count: 5000)
        let cut = BusText.valid(long)
        #expect(cut.utf8.count <= BusText.maximumBytes)
        #expect(cut.allSatisfy { $0 == "é" })
        #expect(BusText.needsCut(long) && !BusText.needsCut("short"))
    }
}
