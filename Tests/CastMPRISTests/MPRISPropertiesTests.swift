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
        // A file here is opened by cast-mpris with the user's permissions and handed to castd.
        #expect(
            try MPRISProperties.action(for: .openURI("file:///home/me/My%20Film.mp4"), on: playing, at: at)
                == .loadFile(path: "/home/me/My Film.mp4"))
        #expect(throws: BusError.self) {
            try MPRISProperties.action(for: .openURI("file://nas/films/a.mp4"), on: playing, at: at)
        }
        #expect(throws: BusError.self) {
            try MPRISProperties.action(for: .openURI("smb://nas/films/a.mp4"), on: playing, at: at)
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
        ("127.0.0.1:8009", "_127__2e0__2e0__2e1__3a8009"),
        ("", "_"),
        ("TV_1-x", "TV__5f1__2dx"),
        ("1a", "_1a"),
        ("\u{1a}", "__1a"),
    ])
    func busNamesAreValidAndDistinct(id: String, element: String) {
        #expect(MPRISBusName.element(forDeviceID: id) == element)
        #expect(MPRISBusName.name(forDeviceID: id) == "org.mpris.MediaPlayer2.castd." + element)
        #expect(Self.isValidBusName(MPRISBusName.name(forDeviceID: id)))
    }

    /// The D-Bus specification's rules for a well-known bus name.
    static func isValidBusName(_ name: String) -> Bool {
        let elements = name.split(separator: ".", omittingEmptySubsequences: false)
        return name.utf8.count <= 255 && elements.count >= 2
            && elements.allSatisfy { element in
                guard let first = element.first, !first.isNumber else { return false }
                return element.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
            }
    }

    /// Ids that the old mapping gave one name: a leading digit and an escaped byte, and ids cut
    /// at the same length.
    @Test func idsThatLookAlikeGetNamesOfTheirOwn() {
        let pairs: [(String, String)] = [
            ("1a2b", "\u{1a}2b"), ("0", "\u{0}"), ("_31", "1"), ("a:b", "a__3ab"),
            (String(repeating: "é", count: 300), String(repeating: "é", count: 300) + "x"),
            (String(repeating: "a", count: 226), String(repeating: "a", count: 227)),
            (String(repeating: ":", count: 100) + "1", String(repeating: ":", count: 100) + "2"),
        ]
        for (a, b) in pairs {
            let (nameA, nameB) = (MPRISBusName.name(forDeviceID: a), MPRISBusName.name(forDeviceID: b))
            #expect(nameA != nameB, "\(nameA)")
            #expect(Self.isValidBusName(nameA) && Self.isValidBusName(nameB), "\(nameA) \(nameB)")
        }
        // The longest id that fits is kept whole; one byte more is hashed, and still fits.
        let fits = String(repeating: "a", count: 255 - MPRISBusName.prefix.utf8.count)
        #expect(MPRISBusName.element(forDeviceID: fits) == fits)
        #expect(MPRISBusName.name(forDeviceID: fits + "a").utf8.count == 255)
    }

    /// Many random ids over a small alphabet (digits, letters, `_`, `:` and bytes that escape
    /// into what digits look like), some long: every name valid, no two alike.
    @Test func randomIDsGiveValidDistinctNames() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [String] = ["0", "1", "a", "A", "_", ":", "\u{1}", "\u{1a}", "\u{31}", "é", "-"]
        var seen: [String: String] = [:]
        for _ in 0..<5000 {
            let length = Bool.random(using: &generator) ? Int.random(in: 0...6) : Int.random(in: 60...140)
            let id = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }.joined()
            let name = MPRISBusName.name(forDeviceID: id)
            #expect(Self.isValidBusName(name), "\(name)")
            if let other = seen[name], other != id {
                Issue.record("'\(id)' and '\(other)' share \(name)")
                return
            }
            seen[name] = id
        }
    }

    @Test func aVeryLongIDStillGivesAValidName() {
        let name = MPRISBusName.name(forDeviceID: String(repeating: "é", count: 300))
        #expect(name.utf8.count <= 255)
        #expect(name.allSatisfy { $0.isASCII })
        #expect(Self.isValidBusName(name))
    }

    @Test func textForTheBusHasNoNULAndIsBounded() {
        #expect(BusText.valid("a\0b") == "ab")
        let long = String(repeating: "é", count: 5000)
        let cut = BusText.valid(long)
        #expect(cut.utf8.count <= BusText.maximumBytes)
        #expect(cut.allSatisfy { $0 == "é" })
        #expect(BusText.needsCut(long) && !BusText.needsCut("short"))
    }

    /// What sd-bus refuses in a string (its UTF-8 check) becomes U+FFFD; its neighbours stay.
    @Test func charactersSDBusRefusesBecomeReplacementCharacters() {
        // By value: Swift's string literals refuse U+FFFE and U+FFFF.
        let refused = [0xFDD0, 0xFDEF, 0xFFFE, 0xFFFF, 0x1FFFE, 0x1FFFF, 0xEFFFF, 0x10FFFE, 0x10FFFF].map {
            Unicode.Scalar(UInt32($0))!
        }
        let kept = [0xFDCF, 0xFDF0, 0xFFFD, 0xFFFC, 0x1FFFD, 0x10000, 0xE9].map { Unicode.Scalar(UInt32($0))! }
        for scalar in refused {
            #expect(BusText.valid("a" + String(scalar) + "b") == "a\u{FFFD}b", "U+\(String(scalar.value, radix: 16))")
            #expect(BusText.needsCut(String(scalar)))
        }
        for scalar in kept {
            #expect(BusText.valid("a" + String(scalar) + "b") == "a" + String(scalar) + "b")
            #expect(!BusText.needsCut(String(scalar)))
        }
        // Cut at the bound, counting the replacement's three bytes.
        let long = String(repeating: String(Unicode.Scalar(0xFFFF as UInt32)!), count: 2000)
        #expect(BusText.valid(long) == String(repeating: "\u{FFFD}", count: BusText.maximumBytes / 3))
    }

    @Test func errorNamesAreValidForDBus() {
        #expect(BusText.errorName("org.castd.Error.NOT_FOUND") == "org.castd.Error.NOT_FOUND")
        #expect(
            BusText.errorName("org.castd.Error.1-x" + String(Unicode.Scalar(0xFFFF as UInt32)!))
                == "org.castd.Error._1_x___")
        #expect(BusText.errorName("org..Error") == "org._.Error")
        #expect(BusText.errorName("Failed") == "org.freedesktop.DBus.Error.Failed")
        #expect(BusText.errorName("") == "org.freedesktop.DBus.Error.Failed")
        #expect(BusText.errorName("org.x." + String(repeating: "y", count: 300)) == "org.freedesktop.DBus.Error.Failed")
    }
}
