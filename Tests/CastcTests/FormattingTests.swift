import CastTestSupport
import CastClient
import Foundation
import Testing

@testable import castc

func media(
    device: String = "abc",
    _ state: CastdPlayerState,
    at time: Double,
    duration: Double = 596,
    title: String? = "Big Buck Bunny"
) -> CastdMediaStatus {
    var status = CastdMediaStatus()
    status.deviceID = device
    status.playerState = state
    status.currentTime = time
    status.playbackRate = 1
    status.updatedAtMs = 1_700_000_000_000
    status.media = CastdMediaInformation(url: "https://example.com/bbb.mp4", contentType: "video/mp4", title: title)
    status.media.duration = duration
    return status
}

func castDevice(
    _ id: String,
    _ name: String,
    model: String = "Chromecast",
    host: String,
    link: CastdLinkState = .disconnected
) -> CastdDevice {
    var device = CastdDevice()
    device.id = id
    device.friendlyName = name
    device.model = model
    device.host = host
    device.port = 8009
    device.linkState = link
    return device
}

func authentication(
    _ state: Castd_V1_AuthState, root: String = "", sha1: Bool = false, detail: String = "", device: String = ""
) -> Castd_V1_DeviceAuthentication {
    var outcome = Castd_V1_DeviceAuthentication()
    outcome.state = state
    outcome.root = root
    outcome.sha1 = sha1
    outcome.detail = detail
    outcome.deviceCertificate = device
    outcome.checkedAtMs = 1_700_000_000_000
    return outcome
}

func session(_ deviceID: String, _ name: String, state: CastdSessionState = .started) -> CastdSession {
    var session = CastdSession()
    session.deviceID = deviceID
    session.deviceName = name
    session.appID = "CC1AD845"
    session.displayName = "Default Media Receiver"
    session.state = state
    return session
}

@Suite(.tags(.cpuBound)) struct PlaybackTimeTests {
    @Test func parses() {
        #expect(PlaybackTime.parse("0") == 0)
        #expect(PlaybackTime.parse("90") == 90)
        #expect(PlaybackTime.parse("1:30") == 90)
        #expect(PlaybackTime.parse("01:30") == 90)
        #expect(PlaybackTime.parse("1:30.25") == 90.25)
        #expect(PlaybackTime.parse("2:00:00") == 7200)
        #expect(PlaybackTime.parse("100:00") == 6000)
        for bad in ["", " ", "1:", ":1", "1:60", "1:00:60", "1:60:00", "a", "-1", "+1", "1,5", "0x10", "1 :30"] {
            #expect(PlaybackTime.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func formats() {
        #expect(PlaybackTime.format(0) == "0:00")
        #expect(PlaybackTime.format(5.9) == "0:05")
        #expect(PlaybackTime.format(90) == "1:30")
        #expect(PlaybackTime.format(3723) == "1:02:03")
        #expect(PlaybackTime.format(-3) == "0:00")
        #expect(PlaybackTime.format(.nan) == "0:00")
        #expect(PlaybackTime.formatUptime(45) == "45s")
        #expect(PlaybackTime.formatUptime(310) == "5m 10s")
        #expect(PlaybackTime.formatUptime(7380) == "2h 3m")
        #expect(PlaybackTime.formatUptime(273_600) == "3d 4h")
    }

    @Test func guessesContentTypes() {
        #expect(MediaURL.guessContentType("https://x.org/a.MP4?token=1") == "video/mp4")
        #expect(MediaURL.guessContentType("https://x.org/live/index.m3u8") == "application/x-mpegURL")
        #expect(MediaURL.guessContentType("http://h:8000/song.mp3") == "audio/mpeg")
        #expect(MediaURL.guessContentType("https://x.org/watch?v=1") == nil)
    }
}

@Suite(.tags(.cpuBound)) struct DeviceTableTests {
    @Test func alignedColumns() {
        var tv = castDevice("abc", "Living Room TV", model: "Chromecast Ultra", host: "192.168.1.20", link: .connected)
        var receiver = Castd_V1_ReceiverStatus()
        var app = CastdApplication()
        app.appID = "CC1AD845"
        app.displayName = "Default Media Receiver"
        receiver.applications = [app]
        tv.receiver = receiver
        tv.authentication = authentication(.verified, root: "Cast Root CA")
        var kitchen = castDevice("def", "Kitchen", model: "Google Home", host: "fe80::1")
        kitchen.statusText = "Now Casting: Spotify"
        let table = DeviceTable.render([tv, kitchen])
        #expect(
            table == """
                NAME            ID   MODEL             ADDRESS            STATE         AUTH      APP
                Living Room TV  abc  Chromecast Ultra  192.168.1.20:8009  connected     verified  Default Media Receiver
                Kitchen         def  Google Home       [fe80::1]:8009     disconnected  -         Now Casting: Spotify
                """
        )
    }

    @Test func authenticationOutcomesAndWhyADeviceFailed() {
        var fake = castDevice("a", "Fake TV", host: "10.0.0.9", link: .failed)
        fake.linkError = "device authentication failed: the answer is for another challenge"
        fake.authentication = authentication(.refused, detail: "the answer is for another challenge")
        var odd = castDevice("b", "Odd TV", host: "10.0.0.10", link: .connected)
        odd.authentication = authentication(.unverified, detail: "the TLS certificate expired on 2026-01-01T00:00:00Z")
        var old = castDevice("c", "Old TV", host: "10.0.0.11", link: .connected)
        old.authentication = authentication(
            .verified, root: "Eureka Root CA", sha1: true, detail: "SHA-1 signs the device certificate")
        #expect(
            DeviceTable.render([fake, odd, old]) == """
                NAME     ID  MODEL       ADDRESS         STATE      AUTH             APP
                Fake TV  a   Chromecast  10.0.0.9:8009   failed     refused          -
                  refused: the answer is for another challenge
                Odd TV   b   Chromecast  10.0.0.10:8009  connected  unverified       -
                  unverified (warning): the TLS certificate expired on 2026-01-01T00:00:00Z
                Old TV   c   Chromecast  10.0.0.11:8009  connected  verified, SHA-1  -
                """
        )
        #expect(
            DeviceTable.authenticationSummary(old)
                == "verified by Eureka Root CA (SHA-1: SHA-1 signs the device certificate)")
        #expect(DeviceTable.authenticationSummary(castDevice("d", "New TV", host: "10.0.0.12")) == nil)
    }

    @Test func idleScreenAndNoApp() {
        var device = castDevice("a", "TV", host: "10.0.0.2", link: .connected)
        var receiver = Castd_V1_ReceiverStatus()
        var backdrop = CastdApplication()
        backdrop.displayName = "Backdrop"
        backdrop.isIdleScreen = true
        receiver.applications = [backdrop]
        device.receiver = receiver
        #expect(DeviceTable.app(device) == "idle")
        #expect(DeviceTable.app(castDevice("b", "TV", host: "10.0.0.3")) == "-")
    }

    /// Real ids are 32 hex digits: the ID column shows their first 8, or more until no two of
    /// the listed devices start alike (castd takes the start of an id as the device).
    @Test func idsAreShownByTheirStart() {
        #expect(DeviceTable.shortIDLength(["9940e1163a0e4d8b9f2c", "5f0a77d2c1b34e6f8a90"]) == 8)
        #expect(DeviceTable.shortIDLength(["9940e1163a0e4d8b9f2c", "9940e1163b0e4d8b9f2c"]) == 10)
        #expect(DeviceTable.shortIDLength(["9940e116", "9940e116"]) == 8, "the same id twice ends the search")
    }

    @Test func noDevicesSaysWhy() {
        #expect(DeviceTable.render([]).contains("mDNS"))
    }

    /// The TV column appears when a device says something of its TV; each half is shown only
    /// when known, and in standby the input does not matter.
    @Test func aTVSaysWhetherItIsOnAndShowsThisInput() {
        var den = castDevice("a", "Den TV", model: "Google TV", host: "10.0.0.2", link: .connected)
        den.tvPower = .on
        den.tvInput = .this
        let kitchen = castDevice("b", "Kitchen", model: "Google Home", host: "10.0.0.3", link: .connected)
        #expect(
            DeviceTable.render([den, kitchen]) == """
                NAME     ID  MODEL        ADDRESS        STATE      AUTH  TV              APP
                Den TV   a   Google TV    10.0.0.2:8009  connected  -     on, this input  -
                Kitchen  b   Google Home  10.0.0.3:8009  connected  -     -               -
                """
        )
        #expect(!DeviceTable.render([kitchen]).contains("TV"), "no device says: no column")
        let cases: [(CastdTvPower, CastdTvInput, String?)] = [
            (.on, .other, "on, other input"), (.on, .unknown, "on"), (.standby, .this, "standby"),
            (.standby, .other, "standby"), (.unknown, .this, "this input"), (.unknown, .other, "other input"),
            (.unknown, .unknown, nil), (.UNRECOGNIZED(7), .UNRECOGNIZED(9), nil),
        ]
        for (power, input, text) in cases {
            den.tvPower = power
            den.tvInput = input
            #expect(DeviceTable.tv(den) == text, "\(power), \(input)")
        }
    }
}

@Suite(.tags(.cpuBound)) struct MediaSummaryTests {
    let now = Date(timeIntervalSince1970: 1_700_000_010)  // 10 s after the report

    @Test func playingLineEstimatesThePosition() {
        #expect(MediaSummary.line(media(.playing, at: 73), at: now) == "playing  1:23 / 9:56  Big Buck Bunny")
        #expect(MediaSummary.line(media(.playing, at: 73), at: nil) == "playing  1:13 / 9:56  Big Buck Bunny")
    }

    @Test func pausedIdleLiveAndUntitled() {
        #expect(MediaSummary.line(media(.paused, at: 73), at: now) == "paused  1:13 / 9:56  Big Buck Bunny")
        var finished = media(.idle, at: 596)
        finished.idleReason = "FINISHED"
        #expect(MediaSummary.line(finished, at: now) == "idle (finished)  9:56 / 9:56  Big Buck Bunny")
        var live = media(.playing, at: 5, duration: 0)
        live.media.streamType = .live
        #expect(MediaSummary.line(live, at: nil) == "playing  0:05 (live)  Big Buck Bunny")
        let untitled = media(.buffering, at: 5, duration: 0, title: nil)
        #expect(MediaSummary.line(untitled, at: nil) == "buffering  0:05  https://example.com/bbb.mp4")
        var empty = CastdMediaStatus()
        empty.playerState = .idle
        #expect(MediaSummary.line(empty, at: now) == "idle")
    }

    @Test func sessionsAndVolume() {
        #expect(MediaSummary.session(session("abc", "TV")) == "Default Media Receiver (CC1AD845), started")
        var failed = session("abc", "TV", state: .startFailed)
        failed.reason = "LAUNCH_ERROR: app not found"
        failed.joined = false
        #expect(
            MediaSummary.session(failed)
                == "Default Media Receiver (CC1AD845), failed to start: LAUNCH_ERROR: app not found")
        var volume = CastdVolume()
        volume.level = 0.4
        #expect(MediaSummary.volume(volume) == "40%")
        volume.muted = true
        #expect(MediaSummary.volume(volume) == "40%, muted")
        #expect(
            ConnectCommand.describe(session("abc", "Living Room TV"))
                == "Started Default Media Receiver (CC1AD845) on Living Room TV")
        #expect(
            DisconnectCommand.describe(session("abc", "TV"), stoppedApp: true) == "Stopped Default Media Receiver on TV"
        )
        #expect(
            DisconnectCommand.describe(session("abc", "TV"), stoppedApp: false)
                == "Left the session on TV; Default Media Receiver keeps running")
    }
}

@Suite(.tags(.cpuBound)) struct StatusReportTests {
    @Test func daemonThenDevicesWithSessionAndMedia() {
        var status = CastdStatusResponse()
        var daemon = CastdDaemonInfo()
        daemon.version = "0.1.0"
        daemon.startedAtMs = 1_700_000_000_000 - 7_380_000
        daemon.socketPath = "/run/user/1000/castd/castd.sock"
        daemon.discovery = "running (Avahi reachable)"
        daemon.clients = 2
        daemon.mode = "user"
        daemon.pid = 4321
        daemon.access = .control
        status.daemon = daemon
        var tv = castDevice("abc", "Living Room TV", model: "Chromecast Ultra", host: "192.168.1.20", link: .connected)
        var receiver = Castd_V1_ReceiverStatus()
        var volume = CastdVolume()
        volume.level = 0.4
        receiver.volume = volume
        tv.receiver = receiver
        tv.authentication = authentication(.verified, root: "Cast Root CA")
        var kitchen = castDevice("def", "Kitchen", model: "Google Home", host: "192.168.1.21", link: .failed)
        kitchen.linkError = "cannot connect to 192.168.1.21:8009: connection refused"
        status.devices = [tv, kitchen]
        status.sessions = [session("abc", "Living Room TV")]
        status.media = [media(.playing, at: 73)]

        let report = StatusReport.render(status, now: Date(timeIntervalSince1970: 1_700_000_010))
        #expect(
            report == """
                castd      0.1.0, up 2h 3m, user mode, pid 4321
                socket     /run/user/1000/castd/castd.sock, you may control
                discovery  running (Avahi reachable)
                serving    2 devices (1 connected), 1 session, 2 clients

                Living Room TV (Chromecast Ultra, 192.168.1.20:8009): connected
                  auth      verified by Cast Root CA
                  volume    40%
                  session   Default Media Receiver (CC1AD845), started
                  player    playing
                  title     Big Buck Bunny
                  position  1:23 / 9:56

                Kitchen (Google Home, 192.168.1.21:8009): failed
                  error  cannot connect to 192.168.1.21:8009: connection refused
                """
        )
    }

    @Test func aRefusedDeviceSaysWhyOnceAndVerboseNamesTheCertificate() {
        var fake = castDevice("a", "Fake TV", host: "10.0.0.9", link: .failed)
        fake.linkError = "device authentication failed: the TLS certificate is valid until 2027-01-01T00:00:00Z"
        fake.authentication = authentication(
            .refused, detail: "the TLS certificate is valid until 2027-01-01T00:00:00Z", device: "CN=fake")
        #expect(
            StatusReport.device(id: "a", device: fake, sessions: [], media: [], now: .now) == """
                Fake TV (Chromecast, 10.0.0.9:8009): failed
                  auth  refused: the TLS certificate is valid until 2027-01-01T00:00:00Z
                """)
        #expect(
            StatusReport.device(id: "a", device: fake, sessions: [], media: [], now: .now, verbose: true) == """
                Fake TV (Chromecast, 10.0.0.9:8009): failed
                  auth         refused: the TLS certificate is valid until 2027-01-01T00:00:00Z
                  certificate  CN=fake
                """)
        // A failure of another kind after an earlier refusal is still shown.
        fake.linkError = "cannot connect to 10.0.0.9:8009: connection refused"
        #expect(
            StatusReport.device(id: "a", device: fake, sessions: [], media: [], now: .now).contains(
                "error  cannot connect"))
    }

    @Test func noDevices() {
        #expect(StatusReport.render(CastdStatusResponse(), now: .now) == DeviceTable.noDevices)
    }

    /// The first line is castd's cast state, with the device it is about.
    @Test func theCastStateComesFirst() throws {
        var status = CastdStatusResponse()
        status.daemon.version = "0.1.0"
        status.daemon.discovery = "running"
        var tv = castDevice("abc", "Living Room TV", host: "192.168.1.20", link: .connected)
        let kitchen = castDevice("def", "Kitchen", host: "192.168.1.21")
        let cases: [(CastdCastState, CastdCastState, String)] = [
            (.noDevicesAvailable, .unspecified, "cast       no devices available"),
            (.notConnected, .notConnected, "cast       not connected (2 devices available)"),
            (.connecting, .connecting, "cast       connecting to Living Room TV"),
            (.connected, .connected, "cast       connected to Living Room TV"),
        ]
        for (castd, device, line) in cases {
            status.castState = castd
            tv.castState = device
            status.devices = castd == .noDevicesAvailable ? [] : [tv, kitchen]
            let first = StatusReport.render(status, now: .now).split(separator: "\n").first
            #expect(first.map(String.init) == line)
        }
        // --device: the cast state of that device, not castd's.
        status.castState = .connected
        let narrowed = try DeviceFilter.status(status, matching: "Kitchen")
        #expect(narrowed.castState == .notConnected)
        #expect(StatusReport.render(narrowed, now: .now).hasPrefix("cast       not connected (1 device available)"))
        // An older castd gives none: no line for it.
        status.castState = .unspecified
        #expect(try #require(StatusReport.render(status, now: .now).split(separator: "\n").first).hasPrefix("castd"))
    }

    @Test func verboseSaysWhatADeviceGivenByAddressToldOfItself() {
        var den = castDevice("a", "Den TV", model: "Chromecast Ultra", host: "10.0.0.2", link: .connected)
        #expect(
            !StatusReport.device(id: "a", device: den, sessions: [], media: [], now: .now, verbose: true).contains(
                "build"))
        den.manufacturer = "Google Inc."
        den.build = "1.56.500000"
        #expect(
            StatusReport.device(id: "a", device: den, sessions: [], media: [], now: .now, verbose: true) == """
                Den TV (Chromecast Ultra, 10.0.0.2:8009): connected
                  device  Google Inc. Chromecast Ultra, build 1.56.500000
                """)
        den.manufacturer = ""
        #expect(DeviceTable.madeBy(den) == "Chromecast Ultra, build 1.56.500000")
    }

    @Test func aTVInStandbySaysSo() {
        var den = castDevice("a", "Den TV", model: "Google TV", host: "10.0.0.2", link: .connected)
        den.tvPower = .standby
        den.tvInput = .other
        #expect(
            StatusReport.device(id: "a", device: den, sessions: [], media: [], now: .now) == """
                Den TV (Google TV, 10.0.0.2:8009): connected
                  tv  standby
                """)
    }
}

@Suite(.tags(.cpuBound)) struct DeviceFilterTests {
    let devices = [
        castDevice("abc", "Living Room TV", host: "192.168.1.20"),
        castDevice("def", "Kitchen", host: "192.168.1.21"),
    ]

    @Test func selectorsMatchByIdNameOrAddress() throws {
        for selector in ["def", "kitchen", "KITCHEN", "192.168.1.21", "192.168.1.21:8009"] {
            #expect(try DeviceFilter.devices(devices, matching: selector).map(\.id) == ["def"], "\(selector)")
        }
        #expect(!devices[1].matches(selector: "192.168.1.21:8010"))
        #expect(!devices[1].matches(selector: ""))
        #expect(castDevice("v6", "TV", host: "fe80::1").matches(selector: "[fe80::1]:8009"))
    }

    @Test func noMatchIsNotFoundNamingTheChoices() {
        #expect(throws: CastdError(.notFound, "no device matches 'attic' (devices: Living Room TV, Kitchen)")) {
            try DeviceFilter.devices(devices, matching: "attic")
        }
    }

    @Test func statusIsNarrowedToTheDevice() throws {
        var status = CastdStatusResponse()
        status.devices = devices
        status.sessions = [session("abc", "Living Room TV"), session("def", "Kitchen")]
        status.media = [media(device: "abc", .playing, at: 1), media(device: "def", .paused, at: 2)]
        let narrowed = try DeviceFilter.status(status, matching: "Kitchen")
        #expect(narrowed.devices.map(\.id) == ["def"])
        #expect(narrowed.sessions.map(\.deviceID) == ["def"])
        #expect(narrowed.media.map(\.currentTime) == [2])
    }

    @Test func watchFollowsOneDevice() {
        var filter = DeviceFilter(selector: "kitchen")
        var snapshot = CastdSnapshot()
        snapshot.devices = devices
        snapshot.media = [media(device: "abc", .playing, at: 1), media(device: "def", .paused, at: 2)]
        var event = CastdEvent()
        event.snapshot = snapshot
        let admitted = filter.admit(event)
        #expect(admitted?.snapshot.devices.map(\.id) == ["def"])
        #expect(admitted?.snapshot.media.map(\.deviceID) == ["def"])

        var mediaEvent = CastdEvent()
        mediaEvent.media = media(device: "abc", .playing, at: 5)
        #expect(filter.admit(mediaEvent) == nil)
        mediaEvent.media = media(device: "def", .playing, at: 5)
        #expect(filter.admit(mediaEvent) != nil)

        var added = CastdEvent()
        added.deviceAdded = castDevice("ghi", "Kitchen", host: "10.0.0.9")  // a second device by that name
        #expect(filter.admit(added) != nil)
        var other = CastdEvent()
        other.deviceAdded = castDevice("jkl", "Garage", host: "10.0.0.10")
        #expect(filter.admit(other) == nil)
        var lagged = CastdEvent()
        lagged.lagged = Castd_V1_Lagged()
        #expect(filter.admit(lagged) != nil)
    }
}

@Suite(.tags(.cpuBound)) struct EventFormatterTests {
    func event(_ sequence: UInt64, at milliseconds: Int64, _ configure: (inout CastdEvent) -> Void) -> CastdEvent {
        var event = CastdEvent()
        event.sequence = sequence
        event.timeMs = milliseconds
        configure(&event)
        return event
    }

    @Test func aCastStateChangeIsOneLine() throws {
        var formatter = EventFormatter(timeZone: try #require(TimeZone(identifier: "UTC")))
        var change = Castd_V1_CastStateChange()
        change.state = .connecting
        change.previous = .notConnected
        let line = formatter.line(for: event(7, at: 1_700_000_000_000) { $0.castState = change }, now: .now)
        #expect(line == "22:13:20.000  cast state      connecting (was not connected)")
    }

    @Test func queueChangesSayWhatChangedAndWhere() throws {
        var change = CastdQueueChange()
        change.deviceID = "tv"
        change.kind = .inserted
        change.itemIds = [7, 8]
        change.insertBefore = 3
        change.index = 2
        #expect(EventFormatter.queueChange(change) == "2 items (#7, #8) inserted at 3")
        change.index = -1
        #expect(EventFormatter.queueChange(change) == "2 items (#7, #8) inserted before #3")
        change.kind = .removed
        change.itemIds = [4]
        #expect(EventFormatter.queueChange(change) == "item #4 removed")
        change.kind = .updated
        #expect(EventFormatter.queueChange(change) == "item #4 updated")
        change.kind = .reordered
        change.order = [5, 3, 4]
        #expect(EventFormatter.queueChange(change) == "reordered: #5, #3, #4")
        var formatter = EventFormatter(timeZone: try #require(TimeZone(identifier: "UTC")))
        let line = formatter.line(for: event(9, at: 1_700_000_000_000) { $0.queue = change }, now: .now)
        #expect(line == "22:13:20.000  queue           tv: reordered: #5, #3, #4")
    }

    @Test func oneTimestampedLinePerEvent() throws {
        var formatter = EventFormatter(timeZone: try #require(TimeZone(identifier: "UTC")))
        let base: Int64 = 1_700_000_000_000  // 22:13:20 UTC
        let now = Date(timeIntervalSince1970: 0)
        let tv = castDevice("abc", "Living Room TV", model: "Chromecast Ultra", host: "192.168.1.20", link: .connected)
        var snapshot = CastdSnapshot()
        snapshot.devices = [tv]
        snapshot.sessions = [session("abc", "Living Room TV")]

        var lines: [String] = []
        lines.append(formatter.line(for: event(40, at: base) { $0.snapshot = snapshot }, now: now))
        lines.append(
            formatter.line(
                for: event(41, at: base + 250) {
                    $0.deviceAdded = castDevice("def", "Kitchen", model: "Google Home", host: "192.168.1.21")
                },
                now: now
            )
        )
        lines.append(formatter.line(for: event(42, at: base + 1000) { $0.media = media(.playing, at: 73) }, now: now))
        lines.append(
            formatter.line(
                for: event(43, at: base + 2000) { $0.session = session("abc", "Living Room TV", state: .ended) },
                now: now))
        lines.append(
            formatter.line(
                for: event(44, at: base + 3000) { $0.deviceRemoved = castDevice("def", "", host: "") }, now: now))
        lines.append(
            formatter.line(
                for: event(45, at: base + 4000) {
                    var lagged = Castd_V1_Lagged()
                    lagged.dropped = 12
                    $0.lagged = lagged
                },
                now: now
            )
        )
        #expect(
            lines == [
                "22:13:20.000  snapshot        1 device, 1 session, 0 media (sequence 40)",
                "22:13:20.250  device added    Kitchen: Google Home, 192.168.1.21:8009, disconnected",
                "22:13:21.000  media           Living Room TV: playing  1:13 / 9:56  Big Buck Bunny",
                "22:13:22.000  session         Living Room TV: Default Media Receiver (CC1AD845), ended",
                "22:13:23.000  device removed  Kitchen",
                "22:13:24.000  lagged          fell behind, 12 events dropped; a fresh snapshot follows",
            ]
        )
    }

    @Test func aTVGoingToStandbyIsADeviceUpdate() throws {
        var formatter = EventFormatter(timeZone: try #require(TimeZone(identifier: "UTC")))
        var den = castDevice("a", "Den TV", model: "Google TV", host: "10.0.0.2", link: .connected)
        den.tvPower = .standby
        den.tvInput = .other
        let line = formatter.line(for: event(7, at: 1_700_000_000_000) { $0.deviceUpdated = den }, now: .now)
        #expect(line == "22:13:20.000  device updated  Den TV: connected, tv standby")
    }

    @Test func eventsWithoutATimeUseNow() throws {
        var formatter = EventFormatter(timeZone: try #require(TimeZone(identifier: "UTC")))
        let line = formatter.line(for: CastdEvent(), now: Date(timeIntervalSince1970: 3661.5))
        #expect(line.hasPrefix("01:01:01.500  unknown"))
    }
}
