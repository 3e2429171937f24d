import CastTestSupport
import CastClient
import Foundation
import Testing

@testable import castc

/// A media status with everything: a queue, tracks, an ad break, video, a stream volume.
func richStatus() -> CastdMediaStatus {
    var status = media(.playing, at: 73)
    status.playbackRate = 1.5
    status.media.metadata.metadataType = .tvShow
    status.media.metadata.seriesTitle = "The Show"
    status.media.metadata.season = 1
    status.media.metadata.episode = 2

    var english = CastdMediaTrack(subtitlesID: 1, url: "https://example.com/en.vtt", language: "en", name: "English")
    english.subtype = .subtitles
    var german = CastdMediaTrack(subtitlesID: 2, url: "https://example.com/de.vtt", language: "de")
    german.subtype = .captions
    var audio = CastdMediaTrack()
    audio.trackID = 3
    audio.type = .audio
    audio.name = "Director's commentary"
    status.media.tracks = [english, german, audio]
    status.activeTrackIds = [1, 3]

    var first = CastdAdBreakClip()
    first.id = "clip-1"
    first.duration = 30
    var second = CastdAdBreakClip()
    second.id = "clip-2"
    var adBreak = CastdAdBreak()
    adBreak.id = "break-1"
    adBreak.breakClipIds = ["clip-1", "clip-2"]
    status.media.breaks = [adBreak]
    status.media.breakClips = [first, second]
    var breakStatus = CastdBreakStatus()
    breakStatus.breakID = "break-1"
    breakStatus.breakClipID = "clip-1"
    breakStatus.currentBreakClipTime = 2
    breakStatus.secondsUntilSkippable = 8
    status.breakStatus = breakStatus

    status.items = (1...5).map { id in
        var item = CastdQueueItem(
            media: CastdMediaInformation(url: "https://example.com/\(id).mp4", title: id == 3 ? nil : "Episode \(id)"))
        item.itemID = Int64(id)
        item.media.duration = Double(id) * 600
        return item
    }
    status.currentItemID = 2
    status.preloadedItemID = 3
    status.repeatMode = .all

    var video = CastdVideoInfo()
    video.width = 3840
    video.height = 2160
    video.hdrType = "hdr"
    status.videoInfo = video

    var volume = CastdVolume()
    volume.level = 0.5
    status.volume = volume
    status.supportedCommands = ["pause", "seek", "queue_next", "skip_ad"]
    return status
}

@Suite(.tags(.cpuBound)) struct RichMediaFormattingTests {
    let now = Date(timeIntervalSince1970: 1_700_000_004)  // 4 s after the report: 6 s of ad at 1.5×

    /// A device that sends three items of a long queue: the place is in the whole queue.
    @Test func theQueuePositionIsInTheWholeQueue() {
        var status = richStatus()
        status.queueItemIds = Array(1...500)
        status.currentItemID = 300
        #expect(MediaSummary.queuePosition(status) == "item 300 of 500")
        status.queueItemIds = []
        status.currentItemID = status.items[1].itemID
        #expect(MediaSummary.queuePosition(status) == "item 2 of 5")
    }

    @Test func oneLineWithRateQueueAndAd() {
        #expect(
            MediaSummary.line(richStatus(), at: now)
                == "playing  1:19 / 9:56  Big Buck Bunny  (1.5×, item 2 of 5, ad 1 of 2, skippable in 2 s)")
        #expect(
            MediaSummary.line(richStatus(), at: nil)
                == "playing  1:13 / 9:56  Big Buck Bunny  (1.5×, item 2 of 5, ad 1 of 2, skippable in 8 s)")
    }

    @Test func statusShowsTheWholeMediaStatus() {
        var status = CastdStatusResponse()
        var tv = castDevice("abc", "Living Room TV", model: "Chromecast Ultra", host: "192.168.1.20", link: .connected)
        var receiver = Castd_V1_ReceiverStatus()
        var volume = CastdVolume()
        volume.level = 0.4
        volume.stepInterval = 0.05
        receiver.volume = volume
        tv.receiver = receiver
        status.devices = [tv]
        var started = session("abc", "Living Room TV")
        started.namespaces = ["urn:x-cast:com.google.cast.media", "urn:x-cast:com.example.game"]
        status.sessions = [started]
        status.media = [richStatus()]

        #expect(
            StatusReport.render(status, now: now) == """
                Living Room TV (Chromecast Ultra, 192.168.1.20:8009): connected
                  volume    40%
                  session   Default Media Receiver (CC1AD845), started
                  player    playing
                  title     Big Buck Bunny
                  series    The Show, season 1, episode 2
                  position  1:19 / 9:56
                  rate      1.5×
                  queue     item 2 of 5, repeat all
                  tracks    subtitles en (1), audio Director's commentary (3)
                  ad        ad 1 of 2, skippable in 2 s
                  video     3840×2160 HDR
                  stream    volume 50%
                """
        )
        #expect(
            StatusReport.render(status, now: now, verbose: true) == """
                Living Room TV (Chromecast Ultra, 192.168.1.20:8009): connected
                  volume      40%, step 5%
                  session     Default Media Receiver (CC1AD845), started
                  namespaces  urn:x-cast:com.google.cast.media, urn:x-cast:com.example.game
                  player      playing
                  title       Big Buck Bunny
                  series      The Show, season 1, episode 2
                  position    1:19 / 9:56
                  rate        1.5×
                  queue       item 2 of 5, repeat all
                  tracks      subtitles en (1), audio Director's commentary (3)
                  ad          ad 1 of 2, skippable in 2 s
                  video       3840×2160 HDR
                  stream      volume 50%
                  url         https://example.com/bbb.mp4
                  type        video/mp4
                  commands    pause, seek, queue_next, skip_ad
                """
        )
    }

    @Test func liveStreamWithSeekableRange() {
        var live = media(.playing, at: 3600, duration: 0)
        live.media.streamType = .live
        var range = CastdLiveSeekableRange()
        range.start = 1800
        range.end = 3605
        range.isMovingWindow = true
        live.liveSeekableRange = range
        let rows = StatusReport.mediaRows(live, at: nil, verbose: false)
        #expect(rows.contains(["position", "1:00:00 (live)"]))
        #expect(rows.contains(["live", "seekable 30:00–1:00:05, moving window"]))
        range.isLiveDone = true
        range.isMovingWindow = false
        #expect(MediaSummary.liveRange(range) == "ended, seekable 30:00–1:00:05")
    }

    @Test func adsThatCannotBeSkippedOrCanNow() {
        var status = richStatus()
        status.breakStatus.secondsUntilSkippable = -1
        #expect(MediaSummary.ad(status, at: now) == "ad 1 of 2")
        status.breakStatus.secondsUntilSkippable = 5
        #expect(MediaSummary.ad(status, at: now) == "ad 1 of 2, skippable now")  // 6 s have passed
        status.media.breaks = []
        #expect(MediaSummary.ad(status, at: nil) == "ad, skippable in 5 s")
        status.clearBreakStatus()
        #expect(MediaSummary.ad(status, at: now) == nil)
    }

    @Test func queueAndTrackTables() {
        #expect(
            QueueTable.render(richStatus()) == """
                #  STATE      DURATION  TITLE
                1             10:00     Episode 1
                2  playing    20:00     Episode 2
                3  preloaded  30:00     https://example.com/3.mp4
                4             40:00     Episode 4
                5             50:00     Episode 5
                repeat all
                """
        )
        var style = CastdTextTrackStyle()
        style.fontScale = 1.5
        style.foregroundColor = "#FFFF00FF"
        style.edgeType = "DROP_SHADOW"
        var status = richStatus()
        status.media.textTrackStyle = style
        #expect(
            TrackTable.render(status) == """
                ID  TYPE       LANGUAGE  NAME                   ACTIVE
                1   subtitles  en        English                yes
                2   captions   de        -                      -
                3   audio      -         Director's commentary  yes
                style: scale 1.5, foreground #FFFF00FF, edge drop-shadow
                """
        )
        #expect(TrackTable.render(CastdMediaStatus()) == "Nothing plays.")
        #expect(QueueTable.render(CastdMediaStatus()).hasPrefix("Nothing plays."))
        #expect(QueueTable.render(media(.paused, at: 1)).hasPrefix("No queue: one item plays (Big Buck Bunny)"))
    }

    @Test func groupsAndTheirMembers() {
        var group = castDevice("g1", "Everywhere", model: "Google Cast Group", host: "192.168.1.20")
        group.port = 32187
        group.isGroup = true
        group.groupMembers = [("k", "Kitchen"), ("l", "Living Room speaker")].map { id, name in
            var member = CastdGroupMember()
            member.deviceID = id
            member.name = name
            return member
        }
        let kitchen = castDevice("k", "Kitchen", model: "Google Home", host: "192.168.1.21")
        #expect(
            DeviceTable.render([group, kitchen]) == """
                NAME                ID  MODEL              ADDRESS             STATE         AUTH  APP
                Everywhere (group)  g1  Google Cast Group  192.168.1.20:32187  disconnected  -     -
                  - Kitchen
                  - Living Room speaker
                Kitchen             k   Google Home        192.168.1.21:8009   disconnected  -     -
                """
        )
        #expect(DeviceTable.render([], filtered: true) == DeviceTable.noMatchingDevices)
        let report = StatusReport.device(id: "g1", device: group, sessions: [], media: [], now: now)
        #expect(
            report == """
                Everywhere (group, Google Cast Group, 192.168.1.20:32187): disconnected
                  members  Kitchen, Living Room speaker
                """)
    }

    @Test func aReconnectingDeviceSaysWhyAndWhenCastdTriesNext() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        var tv = castDevice("tv", "Living Room TV", model: "Chromecast", host: "192.168.1.20")
        tv.linkState = .reconnecting
        tv.linkError = "connection refused"
        tv.nextRetryAtMs = 1_700_000_003_200
        tv.reconnectAttempts = 3
        #expect(DeviceTable.state(tv) == "reconnecting")
        #expect(DeviceTable.nextRetry(tv, now: now) == "in 4 s (3 failed)")
        let report = StatusReport.device(id: "tv", device: tv, sessions: [], media: [], now: now)
        #expect(
            report == """
                Living Room TV (Chromecast, 192.168.1.20:8009): reconnecting
                  error  connection refused
                  retry  in 4 s (3 failed)
                """)
        tv.linkState = .connected
        #expect(DeviceTable.nextRetry(tv, now: now) == nil)
    }

    @Test func deviceVolumes() {
        var volume = CastdVolume()
        volume.level = 0.4
        volume.stepInterval = 0.05
        #expect(MediaSummary.deviceVolume(volume) == "40%, step 5%")
        volume.muted = true
        volume.stepInterval = 0.025
        #expect(MediaSummary.deviceVolume(volume) == "40%, muted, step 2.5%")
        var fixed = CastdVolume()
        fixed.level = 1
        fixed.controlType = "fixed"
        #expect(MediaSummary.deviceVolume(fixed) == "100%, fixed (set it on the device or its amplifier)")
        #expect(MediaSummary.volume(fixed) == "100%, fixed")
    }

    @Test func sessionStatesWithReasons() {
        let states: [(CastdSessionState, String)] = [
            (.starting, "starting"), (.started, "started"), (.startFailed, "failed to start"), (.ending, "ending"),
            (.ended, "ended"), (.suspended, "suspended"), (.resuming, "resuming"), (.resumed, "resumed"),
            (.resumeFailed, "could not be resumed"),
        ]
        for (state, name) in states {
            var item = session("abc", "TV", state: state)
            item.reason = "because"
            #expect(MediaSummary.session(item) == "Default Media Receiver (CC1AD845), \(name): because")
        }
        var launched = session("abc", "Living Room TV")
        launched.displayName = "Game"
        launched.appID = "ABCD1234"
        #expect(LaunchCommand.describe(launched) == "Launched Game (ABCD1234) on Living Room TV")
        launched.joined = true
        #expect(LaunchCommand.describe(launched) == "Joined Game (ABCD1234) on Living Room TV")
        launched.joined = false
        launched.state = .startFailed
        launched.reason = "LAUNCH_ERROR: NOT_FOUND"
        #expect(
            LaunchCommand.describe(launched)
                == "Could not launch Game (ABCD1234) on Living Room TV: LAUNCH_ERROR: NOT_FOUND")
    }

    @Test func appAvailabilityTable() {
        var availability = CastdAppAvailability()
        availability.deviceID = "abc"
        availability.available = ["CC1AD845": true, "233637DE": false]
        #expect(
            AppsCommand.render(availability, asked: ["CC1AD845", "233637DE", "ABCD1234"]) == """
                APP       AVAILABLE
                CC1AD845  yes
                233637DE  no
                ABCD1234  unknown (the device did not answer for it)
                """
        )
    }

    @Test func verboseWatchPrintsTheMediaStatusUnderItsLine() throws {
        var formatter = EventFormatter(timeZone: try #require(TimeZone(identifier: "UTC")), verbose: true)
        var event = CastdEvent()
        event.timeMs = 1_700_000_000_000
        var status = media(.paused, at: 73)
        status.supportedCommands = ["pause"]
        event.media = status
        let indent = String(repeating: " ", count: 30)
        #expect(
            formatter.line(for: event, now: now) == """
                22:13:20.000  media           abc: paused  1:13 / 9:56  Big Buck Bunny
                \(indent)title     Big Buck Bunny
                \(indent)position  1:13 / 9:56
                \(indent)url       https://example.com/bbb.mp4
                \(indent)type      video/mp4
                \(indent)commands  pause
                """)
    }
}

@Suite(.tags(.cpuBound)) struct ErrorFormattingTests {
    func deviceError(_ type: String, _ reason: String = "", _ detail: String = "") -> CastdDeviceError {
        var error = CastdDeviceError()
        error.type = type
        error.reason = reason
        error.detail = detail
        return error
    }

    /// castd words a refusal (CastDevicesTests' DeviceRefusalTests); castc prints it as it is.
    @Test func deviceRefusalsAreCastdsSentence() {
        let sentence =
            "Living Room TV refused the load: it cannot play this media's format (LOAD_FAILED, MEDIA_SRC_NOT_SUPPORTED 104); check the URL and --content-type"
        let failure = CastcFailure(
            CastdError(
                .failedPrecondition, sentence, reason: CastdError.Reason.deviceError,
                deviceError: deviceError("LOAD_FAILED", "", "104")))
        #expect(failure.line == "castc: \(sentence)\n")
        #expect(failure.exitCode == 9)
        // From a castd that gives no sentence: what the device said, once.
        #expect(
            CastcFailure(CastdError(.unknown, "", deviceError: deviceError("LAUNCH_ERROR"))).line
                == "castc: the device refused the request: LAUNCH_ERROR\n")
        #expect(
            CastcFailure(CastdError(.aborted, "", deviceError: deviceError("INVALID_REQUEST", "", "code 104"))).line
                == "castc: the device refused the request: INVALID_REQUEST (code 104)\n")
    }

    @Test func supersededRequestsSaySo() {
        let replaced = CastcFailure(.replaced("superseded by a newer seek request before Kitchen answered"))
        #expect(replaced.line == "castc: superseded by a newer seek request before Kitchen answered\n")
        #expect(replaced.exitCode == 10)
        #expect(CastcFailure(.replaced("")).line.hasPrefix("castc: superseded by a newer request of the same kind"))
    }

    @Test func otherErrorsKeepTheirForm() {
        #expect(CastcFailure(CastdError(.notFound, "no device")).line == "castc: NOT_FOUND: no device\n")
    }
}

@Suite(.tags(.cpuBound)) struct ChannelEventFormattingTests {
    @Test func messagesOnOneLineNoticesApart() {
        var message = CastdAppMessage()
        message.payload = "{\n  \"type\": \"SCORE\",\n  \"text\": \"a\\nb\"\n}"
        message.isJson = true
        var event = CastdChannelEvent()
        event.message = message
        #expect(ChannelEventFormatter.describe(event) == .message(#"{   "type": "SCORE",   "text": "a\nb" }"#))
        message.payload = "line 1\nline 2\r\n"
        message.isJson = false
        event.message = message
        #expect(ChannelEventFormatter.describe(event) == .message(#"line 1\nline 2\r\n"#))

        event.attached = session("abc", "Living Room TV")
        #expect(
            ChannelEventFormatter.describe(event)
                == .notice("castc: listening to Default Media Receiver (CC1AD845) on Living Room TV"))
        var ended = session("abc", "Living Room TV", state: .ended)
        ended.reason = "the app stopped"
        event.detached = ended
        #expect(
            ChannelEventFormatter.describe(event)
                == .notice(
                    "castc: no longer listening to Default Media Receiver (CC1AD845) on Living Room TV: its session ended (the app stopped)"
                ))
        var lagged = Castd_V1_Lagged()
        lagged.dropped = 4
        event.lagged = lagged
        #expect(ChannelEventFormatter.describe(event) == .notice("castc: fell behind; 4 messages dropped"))
    }
}
