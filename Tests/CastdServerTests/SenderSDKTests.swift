import CastSenderLink
import CastClient
import CastDevices
import CastEmulator
import CastProtocol
import CastdSupport
import CastTestSupport
import CastdAPI
import Foundation
import SwiftProtobuf
import Testing

/// The sender SDK's session manager and remote media client through castd: every request as a
/// client sends it over the real socket, answered by cast-emulator over real TLS.
struct SenderSDKTests {
    /// One emulator, one in-process castd with it as a static device, one client.
    func withDevice<T>(
        _ configuration: EmulatorConfiguration = .init(),
        launch: LaunchDefaults = .init(),
        _ body: (CastdClient, CastDeviceEmulator, EmulatorEndpoints) async throws -> T
    ) async throws -> T {
        try await withEmulator(configuration) { emulator, endpoints in
            let device = StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            return try await withDaemon(devices: [device], launch: launch) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    try await body(client, emulator, endpoints)
                }
            }
        }
    }

    static func media(_ url: String, duration: Double = 600) -> CastdMediaInformation {
        var media = CastdMediaInformation()
        media.contentURL = url
        media.contentType = "video/mp4"
        media.duration = duration
        return media
    }

    static func load(_ client: CastdClient, _ request: Castd_V1_LoadRequest) async throws -> CastdMediaStatus {
        try await client.unary(.load, request, as: CastdMediaStatus.self)
    }

    static func item(_ url: String, duration: Double = 300) -> CastdQueueItem {
        var item = CastdQueueItem()
        item.media = media(url, duration: duration)
        return item
    }

    // MARK: LOAD

    @Test func loadCarriesTheWholeMediaInformation() async throws {
        try await withDevice { client, emulator, _ in
            var request = Castd_V1_LoadRequest()
            var media = Self.media("https://example.com/song.mp4", duration: 245)
            media.contentType = "audio/mp4"
            media.metadata.metadataType = .musicTrack
            media.metadata.title = "Song"
            media.metadata.artist = "Artist"
            media.metadata.albumName = "Album"
            media.metadata.albumArtist = "Album Artist"
            media.metadata.composer = "Composer"
            media.metadata.trackNumber = 3
            media.metadata.discNumber = 1
            media.metadata.releaseDate = "2011-05-01"
            media.metadata.extraJson = #"{"mood":"calm"}"#
            var image = Castd_V1_Image()
            image.url = "https://example.com/cover.jpg"
            image.width = 600
            image.height = 600
            media.metadata.images = [image]
            var subtitles = CastdMediaTrack()
            subtitles.trackID = 1
            subtitles.type = .text
            subtitles.subtype = .subtitles
            subtitles.contentID = "https://example.com/song.en.vtt"
            subtitles.contentType = "text/vtt"
            subtitles.language = "en"
            subtitles.name = "English"
            var audio = CastdMediaTrack()
            audio.trackID = 2
            audio.type = .audio
            audio.language = "fr"
            media.tracks = [subtitles, audio]
            media.textTrackStyle.fontScale = 1.25
            media.textTrackStyle.foregroundColor = "#FFFFFFFF"
            media.customDataJson = #"{"playlist":7}"#
            request.media = media
            request.activeTrackIds = [1]
            request.playbackRate = 1.5
            request.startTime = 10
            request.credentials = "token-123"
            request.credentialsType = "bearer"
            let status = try await Self.load(client, request)

            #expect(status.playerState == .playing)
            #expect(status.playbackRate == 1.5)
            #expect(status.activeTrackIds == [1])
            #expect(status.supportedCommands.contains("pause") && status.supportedCommands.contains("seek"))
            let metadata = status.media.metadata
            #expect(metadata.metadataType == .musicTrack)
            #expect(metadata.albumArtist == "Album Artist" && metadata.composer == "Composer")
            #expect(metadata.trackNumber == 3 && metadata.discNumber == 1 && metadata.releaseDate == "2011-05-01")
            #expect(metadata.images.first?.width == 600)
            #expect(try JSONValue.parse(metadata.extraJson)["mood"]?.stringValue == "calm")
            #expect(status.media.tracks.map(\.trackID) == [1, 2])
            #expect(status.media.tracks.first?.contentID == "https://example.com/song.en.vtt")
            #expect(status.media.tracks.first?.subtype == .subtitles)
            #expect(status.media.textTrackStyle.fontScale == 1.25)
            #expect(try JSONValue.parse(status.media.customDataJson)["playlist"]?.intValue == 7)
            // What reached the device, as the device keeps it.
            let device = try #require(await emulator.state().mediaStatusJSON)
            #expect(device["media"]?["metadata"]?["albumArtist"]?.stringValue == "Album Artist")
            #expect(device["media"]?["metadata"]?["mood"]?.stringValue == "calm")
            #expect(device["media"]?["tracks"]?.arrayValue?.count == 2)
            #expect(device["playbackRate"]?.doubleValue == 1.5)
        }
    }

    @Test func loadFailedComesBackWithTheDevicesOwnReason() async throws {
        try await withDevice { client, _, _ in
            var request = Castd_V1_LoadRequest()
            request.media = Self.media("https://example.com/old.flv")
            request.media.contentType = "video/x-flv"
            let error = await #expect(throws: CastdError.self) { try await Self.load(client, request) }
            #expect(error?.code == .failedPrecondition)
            #expect(error?.reason == "DEVICE_ERROR")
            #expect(error?.deviceError?.type == "LOAD_FAILED")
            #expect(error?.message.contains("LOAD_FAILED") == true)
        }
    }

    // MARK: control

    @Test func rateTracksStyleAndStreamVolume() async throws {
        try await withDevice { client, emulator, _ in
            var request = Castd_V1_LoadRequest()
            request.media = Self.media("https://example.com/film.mp4")
            var english = CastdMediaTrack()
            english.trackID = 1
            english.type = .text
            english.contentID = "https://example.com/film.en.vtt"
            var german = english
            german.trackID = 2
            german.contentID = "https://example.com/film.de.vtt"
            request.media.tracks = [english, german]
            _ = try await Self.load(client, request)

            var rate = Castd_V1_SetPlaybackRateRequest()
            rate.rate = 2
            let faster = try await client.unary(.setPlaybackRate, rate, as: CastdMediaStatus.self)
            #expect(faster.playbackRate == 2)

            var tracks = Castd_V1_EditTracksRequest()
            tracks.activeTracks.trackIds = [2]
            tracks.textTrackStyle.fontScale = 1.5
            tracks.textTrackStyle.edgeType = "OUTLINE"
            let edited = try await client.unary(.editTracks, tracks, as: CastdMediaStatus.self)
            #expect(edited.activeTrackIds == [2])
            #expect(
                await emulator.state().mediaStatusJSON?["activeTrackIds"]?.arrayValue?.compactMap(\.intValue) == [2])

            var off = Castd_V1_EditTracksRequest()
            off.activeTracks = Castd_V1_ActiveTracks()
            let none = try await client.unary(.editTracks, off, as: CastdMediaStatus.self)
            #expect(none.activeTrackIds.isEmpty)

            var volume = Castd_V1_SetVolumeRequest()
            volume.level = 0.3
            volume.muted = true
            let quieter = try await client.unary(.setStreamVolume, volume, as: CastdMediaStatus.self)
            #expect(abs(quieter.volume.level - 0.3) < 0.001 && quieter.volume.muted)

            var seek = Castd_V1_SeekRequest()
            seek.position = 30
            seek.resumeState = .pause
            let paused = try await client.unary(.seek, seek, as: CastdMediaStatus.self)
            #expect(paused.playerState == .paused && abs(paused.currentTime - 30) < 0.5)

            let refreshed = try await client.unary(
                .requestMediaStatus, Castd_V1_MediaRequest(), as: CastdMediaStatus.self)
            #expect(refreshed.playerState == .paused && refreshed.playbackRate == 2)
        }
    }

    @Test func outOfRangeValuesAreRefusedBeforeReachingTheDevice() async throws {
        try await withDevice { client, emulator, _ in
            var request = Castd_V1_LoadRequest()
            request.media = Self.media("https://example.com/film.mp4", duration: 100)
            var track = CastdMediaTrack()
            track.trackID = 1
            track.type = .text
            request.media.tracks = [track]
            _ = try await Self.load(client, request)
            let before = await emulator.state().mediaStatusJSON

            func refused<R: SwiftProtobuf.Message>(
                _ method: CastdMethod, _ request: R, _ expected: String, code: CastdCode = .invalidArgument
            ) async {
                let error = await #expect(throws: CastdError.self) {
                    _ = try await client.unary(method, request, as: CastdMediaStatus.self)
                }
                #expect(error?.code == code, "\(method): \(String(describing: error))")
                #expect(error?.message.contains(expected) == true, "\(method): \(String(describing: error))")
            }
            var rate = Castd_V1_SetPlaybackRateRequest()
            rate.rate = 3
            await refused(.setPlaybackRate, rate, "between 0.5 and 2.0")
            var seek = Castd_V1_SeekRequest()
            seek.position = 500
            await refused(.seek, seek, "it can seek from 0 s to 100 s", code: .outOfRange)
            seek.position = -150
            seek.relative = true
            await refused(.seek, seek, "it can seek from 0 s to 100 s", code: .outOfRange)
            var tracks = Castd_V1_EditTracksRequest()
            tracks.activeTracks.trackIds = [9]
            await refused(.editTracks, tracks, "no track 9", code: .notFound)
            var style = Castd_V1_EditTracksRequest()
            style.textTrackStyle.foregroundColor = "white"
            await refused(.editTracks, style, "#RRGGBBAA")
            var volume = Castd_V1_SetVolumeRequest()
            volume.level = 1.5
            await refused(.setStreamVolume, volume, "between 0.0 and 1.0")
            var remove = Castd_V1_QueueRemoveRequest()
            remove.itemIds = [9999]
            await refused(.queueRemove, remove, "no item 9999", code: .notFound)
            var badLoad = Castd_V1_LoadRequest()
            badLoad.media = Self.media("https://example.com/x.mp4")
            badLoad.customDataJson = "{not json"
            await refused(.load, badLoad, "not valid JSON")

            let after = await emulator.state().mediaStatusJSON
            #expect(after?["playbackRate"] == before?["playbackRate"])
            #expect(after?["activeTrackIds"] == before?["activeTrackIds"])
            #expect(after?["mediaSessionId"] == before?["mediaSessionId"])
        }
    }

    // MARK: queue

    @Test func queueFollowsTheDevice() async throws {
        try await withDevice { client, emulator, _ in
            var load = Castd_V1_QueueLoadRequest()
            load.items = ["a", "b", "c"].map { Self.item("https://example.com/\($0).mp4") }
            load.startIndex = 1
            load.repeatMode = .all
            let loaded = try await client.unary(.queueLoad, load, as: CastdMediaStatus.self)
            let ids = loaded.items.map(\.itemID)
            #expect(ids.count == 3)
            #expect(loaded.currentItemID == ids[1])
            #expect(loaded.repeatMode == .all)
            #expect(loaded.media.contentURL == "https://example.com/b.mp4")

            func update(_ change: (inout Castd_V1_QueueUpdateRequest) -> Void) async throws -> CastdMediaStatus {
                var request = Castd_V1_QueueUpdateRequest()
                change(&request)
                return try await client.unary(.queueUpdate, request, as: CastdMediaStatus.self)
            }
            #expect(try await update { $0.jump = 1 }.currentItemID == ids[2])
            #expect(try await update { $0.jump = 1 }.currentItemID == ids[0], "repeat all wraps around")
            #expect(try await update { $0.jump = -1 }.currentItemID == ids[2])
            let jumped = try await update { $0.currentItemID = ids[1] }
            #expect(jumped.currentItemID == ids[1])
            #expect(jumped.media.contentURL == "https://example.com/b.mp4")

            var insert = Castd_V1_QueueInsertRequest()
            insert.items = [Self.item("https://example.com/new.mp4")]
            insert.insertBeforeItemID = ids[1]
            let inserted = try await client.unary(.queueInsert, insert, as: CastdMediaStatus.self)
            #expect(inserted.items.count == 4)
            let newID = try #require(inserted.items.first { !ids.contains($0.itemID) }?.itemID)
            #expect(inserted.items.map(\.itemID) == [ids[0], newID, ids[1], ids[2]])

            var reorder = Castd_V1_QueueReorderRequest()
            reorder.itemIds = [ids[0]]
            let moved = try await client.unary(.queueReorder, reorder, as: CastdMediaStatus.self)
            #expect(moved.items.map(\.itemID) == [newID, ids[1], ids[2], ids[0]])

            var remove = Castd_V1_QueueRemoveRequest()
            remove.itemIds = [newID]
            let removed = try await client.unary(.queueRemove, remove, as: CastdMediaStatus.self)
            #expect(removed.items.map(\.itemID) == [ids[1], ids[2], ids[0]])

            let single = try await update { $0.repeatMode = .single }
            #expect(single.repeatMode == .single)
            #expect(await emulator.state().mediaStatusJSON?["repeatMode"]?.stringValue == "REPEAT_SINGLE")
            let off = try await update { $0.repeatMode = .off }
            #expect(off.repeatMode == .off)
            _ = try await update { $0.currentItemID = ids[0] }  // the last item now
            let error = await #expect(throws: CastdError.self) { _ = try await update { $0.jump = 1 } }
            #expect(error?.code == .outOfRange)
        }
    }

    // MARK: ad breaks

    @Test func preRollAdsPlayFirstAndSkipOnlyWhenSkippable() async throws {
        try await withDevice { client, _, _ in
            var request = Castd_V1_LoadRequest()
            request.media = Self.media("https://example.com/show.mp4")
            var skippable = Castd_V1_AdBreakClip()
            skippable.id = "clip-1"
            skippable.title = "First ad"
            skippable.contentURL = "https://example.com/ad1.mp4"
            skippable.duration = 15
            skippable.whenSkippable = 0
            var forced = Castd_V1_AdBreakClip()
            forced.id = "clip-2"
            forced.contentURL = "https://example.com/ad2.mp4"
            forced.duration = 30
            forced.whenSkippable = 25
            var preRoll = Castd_V1_AdBreak()
            preRoll.id = "break-1"
            preRoll.position = 0
            preRoll.breakClipIds = ["clip-1", "clip-2"]
            request.media.breaks = [preRoll]
            request.media.breakClips = [skippable, forced]
            let loaded = try await Self.load(client, request)
            #expect(loaded.breakStatus.breakID == "break-1")
            #expect(loaded.breakStatus.breakClipID == "clip-1")
            #expect(loaded.breakStatus.secondsUntilSkippable == 0)
            #expect(loaded.supportedCommands.contains("skip_ad"))

            let next = try await client.unary(.skipAd, Castd_V1_MediaRequest(), as: CastdMediaStatus.self)
            #expect(next.breakStatus.breakClipID == "clip-2")
            #expect(next.breakStatus.secondsUntilSkippable > 20)

            // castd knows when the ad can be skipped, and says so without asking the device.
            let error = await #expect(throws: CastdError.self) {
                _ = try await client.unary(.skipAd, Castd_V1_MediaRequest(), as: CastdMediaStatus.self)
            }
            #expect(error?.code == .failedPrecondition)
            #expect(error?.message.contains("can be skipped in") == true, "\(String(describing: error))")
        }
    }

    // MARK: device volume

    @Test func volumeButtonsStepByTheDevicesInterval() async throws {
        try await withDevice { client, _, _ in
            _ = try await client.setVolume(level: 0.5)
            var up = Castd_V1_SetVolumeRequest()
            up.steps = 1
            let louder = try await client.unary(.setVolume, up, as: CastdVolume.self)
            #expect(abs(louder.level - 0.55) < 0.001)
            #expect(louder.stepInterval > 0.04 && louder.stepInterval < 0.06)
            var down = Castd_V1_SetVolumeRequest()
            down.steps = -3
            let quieter = try await client.unary(.setVolume, down, as: CastdVolume.self)
            #expect(abs(quieter.level - 0.40) < 0.001)
            var both = Castd_V1_SetVolumeRequest()
            both.steps = 1
            both.level = 0.2
            let error = await #expect(throws: CastdError.self) {
                _ = try await client.unary(.setVolume, both, as: CastdVolume.self)
            }
            #expect(error?.code == .invalidArgument)
        }
    }

    // MARK: sessions

    @Test func launchOptionsJoinOnlyAndRelaunch() async throws {
        try await withDevice { client, emulator, _ in
            var join = Castd_V1_StartSessionRequest()
            join.appID = "CC1AD845"
            join.mode = .join
            let nothing = await #expect(throws: CastdError.self) {
                _ = try await client.unary(.startSession, join, as: CastdSession.self)
            }
            #expect(nothing?.code == .notFound)

            var launch = Castd_V1_StartSessionRequest()
            launch.appID = "CC1AD845"
            launch.launch.language = "fr-FR"
            let first = try await client.unary(.startSession, launch, as: CastdSession.self)
            #expect(first.state == .started && first.namespaces.contains("urn:x-cast:com.google.cast.media"))

            launch.mode = .launch
            let relaunched = try await client.unary(.startSession, launch, as: CastdSession.self)
            #expect(relaunched.state == .started && relaunched.sessionID != first.sessionID)
            #expect(await emulator.state().runningApp?.sessionID == relaunched.sessionID)

            let joined = try await client.unary(.startSession, join, as: CastdSession.self)
            #expect(joined.sessionID == relaunched.sessionID)

            var unknown = Castd_V1_StartSessionRequest()
            unknown.appID = "NOPE1234"
            let failed = await #expect(throws: CastdError.self) {
                _ = try await client.unary(.startSession, unknown, as: CastdSession.self)
            }
            #expect(failed?.code == .notFound && failed?.deviceError?.type == "LAUNCH_ERROR")
        }
    }

    /// castd's launch defaults: the app a LOAD starts and a session without an app id joins,
    /// with the default language.
    @Test func theDefaultAppIsLaunchedByLoadAndJoinedWithoutAnAppID() async throws {
        var options = CastdLaunchOptions()
        options.language = "fr-FR"
        try await withDevice(launch: LaunchDefaults(appID: "233637DE", options: options)) { client, emulator, _ in
            var load = Castd_V1_LoadRequest()
            load.media = Self.media("https://example.com/film.mp4")
            _ = try await Self.load(client, load)
            let state = await emulator.state()
            #expect(state.runningApp?.appID == "233637DE")
            #expect(state.launches.map(\.appID) == ["233637DE"])
            #expect(state.launches.last?.language == "fr-FR")
            #expect(state.loads.last?.appID == "233637DE")

            let joined = try await client.startSession()
            #expect(joined.appID == "233637DE" && joined.sessionID == state.runningApp?.sessionID)
            #expect(await emulator.state().launches.count == 1)  // joined, not launched again
        }
    }

    @Test func theRelaunchPolicyRelaunchesTheDefaultAppOnly() async throws {
        try await withDevice(launch: LaunchDefaults(appID: "233637DE", relaunch: true)) { client, emulator, _ in
            let first = try await client.startSession()
            let second = try await client.startSession()
            #expect(first.appID == "233637DE" && second.sessionID != first.sessionID)
            #expect(await emulator.state().launches.count == 2)
            // An app the client names is joined as usual.
            let named = try await client.startSession(appID: "233637DE")
            #expect(named.sessionID == second.sessionID)
            #expect(await emulator.state().launches.count == 2)
        }
    }

    /// Cast Connect sign-in: credentials reach the app when castd launches it and when it joins
    /// the app that runs (a LAUNCH of the running app, which keeps its session).
    @Test func credentialsReachTheAppAtLaunchAndAtJoin() async throws {
        try await withDevice { client, emulator, _ in
            var launch = CastdLaunchOptions()
            launch.credentials = "first-token"
            launch.credentialsType = "android"
            let launched = try await client.startSession(appID: "233637DE", launch: launch)
            #expect(!launched.joined)

            launch.credentials = "second-token"
            launch.credentialsType = "oauth"
            let joined = try await CastdClient.withConnection(socketPath: client.socketPath) { other in
                try await other.startSession(appID: "233637DE", mode: .join, launch: launch)
            }
            #expect(joined.sessionID == launched.sessionID)
            let state = await emulator.state()
            #expect(state.runningApp?.sessionID == launched.sessionID)
            #expect(state.launches.map(\.credentials) == ["first-token", "second-token"])
            #expect(state.launches.last?.credentialsType == "oauth")

            // Without credentials, joining sends no LAUNCH.
            _ = try await client.startSession(appID: "233637DE", mode: .join)
            #expect(await emulator.state().launches.count == 2)
        }
    }

    @Test func appAvailabilityAndDiscoveryCriteria() async throws {
        try await withEmulator { _, tv in
            var speakerConfiguration = EmulatorConfiguration()
            speakerConfiguration.capabilities = 4  // audio out only
            try await withEmulator(speakerConfiguration) { _, speaker in
                let devices = [
                    StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: tv.host, port: tv.port)),
                    StaticDevice(name: "Speaker", endpoint: DeviceEndpoint(host: speaker.host, port: speaker.port)),
                ]
                try await withDaemon(devices: devices) { socket, _ in
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        var ask = Castd_V1_AppAvailabilityRequest()
                        ask.device = "TV"
                        ask.appIds = ["CC1AD845", "NOPE1234"]
                        let answer = try await client.unary(
                            .getAppAvailability, ask, as: Castd_V1_AppAvailabilityResponse.self)
                        #expect(answer.available == ["CC1AD845": true, "NOPE1234": false])

                        // Both links up first: the criteria below give each device 5 s to
                        // answer, which a sanitizer build on a loaded machine can spend on
                        // connecting alone. (Each device is still asked about CC1AD845 by the
                        // criteria: the speaker only about NOPE1234 here.)
                        ask.device = "Speaker"
                        ask.appIds = ["NOPE1234"]
                        _ = try await client.unary(.getAppAvailability, ask, as: Castd_V1_AppAvailabilityResponse.self)

                        var able = Castd_V1_ListDevicesRequest()
                        able.appIds = ["CC1AD845"]
                        let both = try await client.unary(.listDevices, able, as: Castd_V1_ListDevicesResponse.self)
                        #expect(both.devices.map(\.friendlyName) == ["Speaker", "TV"])
                        able.appIds = ["NOPE1234"]
                        let none = try await client.unary(.listDevices, able, as: Castd_V1_ListDevicesResponse.self)
                        #expect(none.devices.isEmpty)
                    }
                }
            }
        }
    }

    /// castd's own criterion (launch.filter_devices): ListDevices without criteria lists only the
    /// devices that can run the default app, and says so; `all` lists every device, and a client's
    /// own criterion replaces castd's.
    @Test func castdsOwnCriterionListsOnlyDevicesThatCanRunTheDefaultApp() async throws {
        try await withEmulator { _, tv in
            var speakerConfiguration = EmulatorConfiguration()
            speakerConfiguration.apps = EmulatorApp.builtIn.filter { $0.appID != "233637DE" }
            try await withEmulator(speakerConfiguration) { _, speaker in
                let devices = [
                    StaticDevice(name: "TV", endpoint: DeviceEndpoint(host: tv.host, port: tv.port)),
                    StaticDevice(name: "Speaker", endpoint: DeviceEndpoint(host: speaker.host, port: speaker.port)),
                ]
                let launch = LaunchDefaults(appID: "233637DE", filterDevices: true)
                try await withDaemon(devices: devices, launch: launch) { socket, _ in
                    try await CastdClient.withConnection(socketPath: socket) { client in
                        // Both links up first (see appAvailabilityAndDiscoveryCriteria).
                        for name in ["TV", "Speaker"] {
                            _ = try await client.appAvailability(device: name, appIDs: ["CC1AD845"])
                        }
                        let listed = try await client.unary(
                            .listDevices, Castd_V1_ListDevicesRequest(), as: Castd_V1_ListDevicesResponse.self)
                        #expect(listed.devices.map(\.friendlyName) == ["TV"])
                        #expect(listed.criterionAppIds == ["233637DE"])
                        #expect(try await client.listDevices(all: true).map(\.friendlyName) == ["Speaker", "TV"])
                        let own = try await client.listDevices(appIDs: ["CC1AD845"]).map(\.friendlyName)
                        #expect(own == ["Speaker", "TV"])
                    }
                }
            }
        }
    }

    /// Another sender's pause, on the same session, reaches castd's watchers from the device's
    /// own broadcast: castd asks the device nothing in between (no GET_STATUS after the pause).
    @Test func anotherSendersPauseReachesWatchersFromTheDevicesBroadcast() async throws {
        // What castd's links send on the media namespace, in order, once `marked` is set.
        let afterPause = Locked<(marked: Bool, types: [String])>((false, []))
        var configuration = EmulatorConfiguration()
        configuration.messageTap = { direction, _, message in
            guard direction == .received, message.namespace == CastNamespace.media,
                let type = try? CastEnvelope(message.jsonPayload()).type
            else { return }
            afterPause.withLock { if $0.marked { $0.types.append(type) } }
        }
        try await withDevice(configuration) { client, _, endpoints in
            let loaded = try await client.load(Self.media("https://example.com/film.mp4"))
            let session = try #require(try await client.status().sessions.first)
            var events = client.watch().makeAsyncIterator()
            _ = try await events.next()  // the snapshot
            try await CastLink.withConnection(
                host: endpoints.host, port: endpoints.port, configuration: .trustingEmulators(),
                logger: .emulatorForTests(label: "other sender")
            ) { other in
                try await other.connect(to: session.transportID)
                afterPause.withLock { $0.marked = true }
                _ = try await other.request(namespace: CastNamespace.media, destination: session.transportID) {
                    MediaRequest.pause.payload(requestID: $0, mediaSessionID: loaded.mediaSessionID)
                }
                while let event = try await events.next() {
                    if case .media(let media)? = event.kind, media.playerState == .paused { break }
                }
            }
            let sent = afterPause.withLock { $0.types }
            #expect(sent == ["PAUSE"], "the device received \(sent) after the other sender's pause")
        }
    }

    // MARK: outcomes

    /// A second seek sent before the device answered the first supersedes it: the first
    /// caller is told REPLACED, the second gets the status, and the device saw both.
    @Test func aNewerSeekReplacesOneStillWaiting() async throws {
        try await withDevice { client, emulator, _ in
            _ = try await client.load(Self.media("https://example.com/film.mp4"))
            // From now on the device answers late: long enough for the second seek to reach it
            // before the first is answered, even on a loaded machine (it took 400 ms, and then a
            // stall of seconds sent the second after the first's answer); within castd's 10 s
            // request timeout in a sanitizer build too (CASTD_TEST_TIME_SCALE).
            emulator.updateFaults { $0.replyDelay = Duration.milliseconds(1500).scaledForTests }
            var first = Castd_V1_SeekRequest()
            first.position = 100
            var second = Castd_V1_SeekRequest()
            second.position = 200
            async let firstOutcome: Result<CastdMediaStatus, CastdError> = {
                do {
                    return .success(try await client.unary(.seek, first, as: CastdMediaStatus.self))
                } catch {
                    return .failure(error as? CastdError ?? CastdError(.unknown, "\(error)"))
                }
            }()
            // The second goes out once the first has reached the device.
            try await eventually("the first SEEK to reach the device") {
                await emulator.state().mediaStatusJSON?["currentTime"]?.doubleValue.map { $0 >= 99 } == true
            }
            let secondStatus = try await client.unary(.seek, second, as: CastdMediaStatus.self)
            #expect(abs(secondStatus.currentTime - 200) < 1)
            guard case .failure(let error) = await firstOutcome else {
                Issue.record("the first seek should have been replaced")
                return
            }
            #expect(error.code == .aborted && error.reason == "REPLACED", "\(error)")
        }
    }

    // MARK: launch options

    @Test func androidTVReceiverAndCredentials() async throws {
        try await withDevice { client, emulator, _ in
            var webOnly = Castd_V1_StartSessionRequest()
            webOnly.appID = "A7CC5A5E"
            let refused = await #expect(throws: CastdError.self) {
                _ = try await client.unary(.startSession, webOnly, as: CastdSession.self)
            }
            #expect(refused?.code == .notFound && refused?.deviceError?.type == "LAUNCH_ERROR")

            var connect = webOnly
            connect.launch.androidTv = true
            connect.launch.credentials = "user-token"
            connect.launch.credentialsType = "android"
            connect.launch.language = "de-DE"
            let session = try await client.unary(.startSession, connect, as: CastdSession.self)
            #expect(session.appType == "ANDROID_TV" && session.state == .started)

            var load = Castd_V1_LoadRequest()
            load.media = Self.media("https://example.com/film.mp4")
            load.credentials = "load-token"
            load.credentialsType = "bearer"
            _ = try await Self.load(client, load)

            let state = await emulator.state()
            let launch = try #require(state.launches.last)
            #expect(launch.appID == "A7CC5A5E")
            #expect(launch.supportedAppTypes == ["WEB", "ANDROID_TV"])
            #expect(launch.credentials == "user-token" && launch.credentialsType == "android")
            #expect(launch.language == "de-DE")
            let loaded = try #require(state.loads.last)
            #expect(loaded.appID == "A7CC5A5E")
            #expect(loaded.credentials == "load-token" && loaded.credentialsType == "bearer")
        }
    }

    @Test func fixedVolumeDevicesAreReportedAndRefuseLevels() async throws {
        var fixed = EmulatorConfiguration()
        fixed.fixedVolume = true
        try await withDevice(fixed) { client, _, _ in
            let muted = try await client.setVolume(muted: true)
            #expect(muted.fixed && muted.controlType == "fixed" && muted.muted)
            let error = await #expect(throws: CastdError.self) { _ = try await client.setVolume(level: 0.5) }
            #expect(error?.code == .failedPrecondition && error?.message.contains("fixed volume") == true)
            var up = Castd_V1_SetVolumeRequest()
            up.steps = 1
            let stepped = await #expect(throws: CastdError.self) {
                _ = try await client.unary(.setVolume, up, as: CastdVolume.self)
            }
            #expect(stepped?.code == .failedPrecondition)
        }
    }
}
