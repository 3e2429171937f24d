import CastdAPI
import Foundation
import SwiftProtobuf
import Testing

@testable import CastClient

/// Every typed CastClient method sends the request its parameters say, and refuses what castd
/// would refuse before calling it.
@Suite(.timeLimit(.minutes(1))) struct ClientMethodTests {
    /// Makes `call` with the client, checks the request the daemon gets, answers `response`.
    func expectRequest<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message & Sendable & Equatable>(
        _ method: CastdMethod,
        as: Request.Type,
        answer response: Response,
        _ call: @escaping @Sendable (CastdClient) async throws -> Response,
        check: (Request) -> Void
    ) async throws {
        try await withMemoryClient { client, daemon in
            let result = Task { try await call(client) }
            let started = try await daemon.nextCall(method, as: Request.self)
            check(started.request)
            try daemon.reply(started.callID, response)
            #expect(try await result.value == response)
        }
    }

    var playing: CastdMediaStatus {
        var status = CastdMediaStatus()
        status.playerState = .playing
        return status
    }

    @Test func listDevicesWithCriteria() async throws {
        var response = Castd_V1_ListDevicesResponse()
        response.devices = [device("a", "TV")]
        try await withMemoryClient { client, daemon in
            let devices = Task {
                try await client.listDevices(appIDs: ["233637DE"], capabilities: [.videoOut, .audioOut])
            }
            let call = try await daemon.nextCall(.listDevices, as: Castd_V1_ListDevicesRequest.self)
            #expect(call.request.appIds == ["233637DE"])
            #expect(call.request.capabilities == 5)
            try daemon.reply(call.callID, response)
            #expect(try await devices.value.map(\.id) == ["a"])
        }
    }

    @Test func appAvailability() async throws {
        var response = CastdAppAvailability()
        response.deviceID = "a"
        response.available = ["CC1AD845": true]
        try await expectRequest(
            .getAppAvailability, as: Castd_V1_AppAvailabilityRequest.self, answer: response,
            { try await $0.appAvailability(device: "TV", appIDs: ["CC1AD845"]) }
        ) { request in
            #expect(request.device == "TV" && request.appIds == ["CC1AD845"])
        }
    }

    @Test func startSessionWithModeAndLaunchOptions() async throws {
        var launch = CastdLaunchOptions()
        launch.androidTv = true
        launch.language = "de-DE"
        let options = launch
        try await expectRequest(
            .startSession, as: Castd_V1_StartSessionRequest.self, answer: CastdSession(),
            { try await $0.startSession(device: "TV", appID: "ABCD1234", mode: .launch, launch: options) }
        ) { request in
            #expect(request.device == "TV" && request.appID == "ABCD1234" && request.mode == .launch)
            #expect(request.launch == options)
        }
        try await expectRequest(
            .startSession, as: Castd_V1_StartSessionRequest.self, answer: CastdSession(),
            { try await $0.startSession() }
        ) { request in
            #expect(request.mode == .joinOrLaunch && !request.hasLaunch && request.appID.isEmpty)
        }
    }

    @Test func loadWithEveryField() async throws {
        var load = CastdLoadRequest()
        load.device = "TV"
        load.media = CastdMediaInformation(url: "https://example.com/a.mp4", title: "A")
        load.media.tracks = [CastdMediaTrack(subtitlesID: 1, url: "https://example.com/en.vtt", language: "en")]
        load.autoplay = false
        load.startTime = 12
        load.playbackRate = 1.5
        load.activeTrackIds = [1]
        load.credentials = "c"
        load.credentialsType = "t"
        load.customDataJson = #"{"a":1}"#
        let sent = load
        try await expectRequest(
            .load, as: CastdLoadRequest.self, answer: playing, { try await $0.load(sent) }
        ) { request in
            #expect(request == sent)
        }
    }

    @Test func mediaCommands() async throws {
        try await expectRequest(
            .setPlaybackRate, as: Castd_V1_SetPlaybackRateRequest.self, answer: playing,
            { try await $0.setPlaybackRate(0.75, device: "TV") }
        ) { #expect($0.rate == 0.75 && $0.device == "TV") }

        var style = CastdTextTrackStyle()
        style.fontScale = 1.2
        let textStyle = style
        try await expectRequest(
            .editTracks, as: Castd_V1_EditTracksRequest.self, answer: playing,
            { try await $0.editTracks(activeTrackIDs: [2, 3], textTrackStyle: textStyle) }
        ) { request in
            #expect(request.hasActiveTracks && request.activeTracks.trackIds == [2, 3])
            #expect(request.textTrackStyle == textStyle)
        }
        try await expectRequest(
            .editTracks, as: Castd_V1_EditTracksRequest.self, answer: playing,
            { try await $0.editTracks(activeTrackIDs: []) }
        ) { request in
            #expect(request.hasActiveTracks && request.activeTracks.trackIds.isEmpty && !request.hasTextTrackStyle)
        }
        try await expectRequest(
            .setStreamVolume, as: Castd_V1_SetVolumeRequest.self, answer: playing,
            { try await $0.setStreamVolume(level: 0.3) }
        ) { #expect($0.hasLevel && $0.level == 0.3 && !$0.hasMuted) }
        try await expectRequest(
            .skipAd, as: Castd_V1_MediaRequest.self, answer: playing, { try await $0.skipAd(device: "TV") }
        ) { #expect($0.device == "TV") }
        try await expectRequest(
            .requestMediaStatus, as: Castd_V1_MediaRequest.self, answer: playing, { try await $0.requestMediaStatus() }
        ) { #expect($0.device.isEmpty) }
        var volume = CastdVolume()
        volume.level = 0.45
        try await expectRequest(
            .setVolume, as: Castd_V1_SetVolumeRequest.self, answer: volume, { try await $0.setVolume(steps: -2) }
        ) { #expect($0.steps == -2 && !$0.hasLevel && !$0.hasMuted) }
    }

    @Test func queueMethods() async throws {
        let items = ["https://x.org/a.mp3", "https://x.org/b.mp3"].map {
            CastdQueueItem(media: CastdMediaInformation(url: $0, contentType: "audio/mpeg"))
        }
        try await expectRequest(
            .queueLoad, as: Castd_V1_QueueLoadRequest.self, answer: playing,
            { try await $0.queueLoad(items, startIndex: 1, repeatMode: .all, startTime: 5, customDataJSON: "{}") }
        ) { request in
            #expect(request.items == items)
            #expect(request.startIndex == 1 && request.repeatMode == .all && request.startTime == 5)
            #expect(request.customDataJson == "{}")
        }
        try await expectRequest(
            .queueInsert, as: Castd_V1_QueueInsertRequest.self, answer: playing,
            { try await $0.queueInsert(items, before: 4, playNow: true) }
        ) { #expect($0.items == items && $0.insertBeforeItemID == 4 && $0.playNow) }
        try await expectRequest(
            .queueRemove, as: Castd_V1_QueueRemoveRequest.self, answer: playing, { try await $0.queueRemove([2, 3]) }
        ) { #expect($0.itemIds == [2, 3]) }
        try await expectRequest(
            .queueReorder, as: Castd_V1_QueueReorderRequest.self, answer: playing,
            { try await $0.queueReorder([3], before: 1) }
        ) { #expect($0.itemIds == [3] && $0.insertBeforeItemID == 1) }
        try await expectRequest(
            .queueUpdate, as: CastdQueueUpdateRequest.self, answer: playing, { try await $0.queueNext() }
        ) { #expect($0.jump == 1 && !$0.hasRepeatMode && $0.currentItemID == 0) }
        try await expectRequest(
            .queueUpdate, as: CastdQueueUpdateRequest.self, answer: playing, { try await $0.queuePrevious() }
        ) { #expect($0.jump == -1) }
        try await expectRequest(
            .queueUpdate, as: CastdQueueUpdateRequest.self, answer: playing,
            { try await $0.queueJump(to: 7, startTime: 30) }
        ) { #expect($0.currentItemID == 7 && $0.currentTime == 30 && $0.jump == 0) }
        try await expectRequest(
            .queueUpdate, as: CastdQueueUpdateRequest.self, answer: playing,
            { try await $0.setRepeatMode(.single) }
        ) { #expect($0.hasRepeatMode && $0.repeatMode == .single && $0.jump == 0) }
    }

    @Test func invalidRequestsFailWithoutReachingTheDaemon() async throws {
        try await withMemoryClient { client, daemon in
            func expectInvalid(_ body: () async throws -> Void) async {
                let error = await #expect(throws: CastdError.self) { try await body() }
                #expect(error?.code == .invalidArgument)
            }
            await expectInvalid { _ = try await client.setPlaybackRate(2.5) }
            await expectInvalid { _ = try await client.editTracks() }
            await expectInvalid { _ = try await client.editTracks(activeTrackIDs: [0]) }
            await expectInvalid { _ = try await client.setStreamVolume() }
            await expectInvalid { _ = try await client.setVolume(steps: 0) }
            await expectInvalid { _ = try await client.queueLoad([]) }
            await expectInvalid {
                _ = try await client.queueLoad(
                    [CastdQueueItem(media: CastdMediaInformation(url: "https://x.org/a"))], startIndex: 1)
            }
            await expectInvalid { _ = try await client.queueInsert([]) }
            await expectInvalid { _ = try await client.queueRemove([]) }
            await expectInvalid { _ = try await client.queueReorder([2], before: 2) }
            await expectInvalid { _ = try await client.queueJump(to: 0) }
            await expectInvalid { _ = try await client.appAvailability(appIDs: []) }
            var load = CastdLoadRequest()
            load.playbackRate = 4
            let badRate = load
            await expectInvalid { _ = try await client.load(badRate) }
            load.playbackRate = 0
            load.customDataJson = "[]"
            let badData = load
            await expectInvalid { _ = try await client.load(badData) }
            await expectInvalid {
                for try await _ in client.serverStream(.play, Castd_V1_MediaRequest(), as: CastdMediaStatus.self) {}
            }
            // Nothing above reached the daemon: the first call it sees is this one.
            let devices = Task { try await client.listDevices() }
            let call = try await daemon.nextCall(.listDevices, as: Castd_V1_ListDevicesRequest.self)
            #expect(call.callID == 1)
            try daemon.reply(call.callID, Castd_V1_ListDevicesResponse())
            _ = try await devices.value
        }
    }
}

@Suite struct MediaStatusHelperTests {
    static let reported = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func supportedCommandNamesFromNamesOrBits() {
        var status = CastdMediaStatus()
        status.supportedMediaCommands = 1 | 2 | 64 | 512 | 8192
        #expect(status.supportedCommandNames == ["pause", "seek", "queue_next", "skip_ad", "playback_rate"])
        #expect(status.supports(.skipAd))
        #expect(!status.supports(.queuePrevious))
        status.supportedCommands = ["pause", "like"]
        #expect(status.supportedCommandNames == ["pause", "like"])
        #expect(status.supports(CastdMediaCommand(name: "like")))
    }

    @Test func currentQueueItem() {
        var status = CastdMediaStatus()
        status.items = [Int64(10), 11, 12].map { id in
            var item = CastdQueueItem()
            item.itemID = id
            return item
        }
        #expect(status.currentQueueItem == nil)
        status.currentItemID = 11
        #expect(status.currentQueueItem?.itemID == 11)
        #expect(status.currentQueueIndex == 1)
        status.currentItemID = 99
        #expect(status.currentQueueItem == nil)
    }

    @Test func secondsUntilSkippableCountsDownWhilePlaying() {
        var status = CastdMediaStatus()
        status.playerState = .playing
        status.playbackRate = 1
        status.updatedAtMs = Int64(Self.reported.timeIntervalSince1970 * 1000)
        #expect(status.secondsUntilSkippable(at: Self.reported) == nil)  // no ad plays
        var breakStatus = CastdBreakStatus()
        breakStatus.secondsUntilSkippable = 5
        status.breakStatus = breakStatus
        #expect(status.secondsUntilSkippable(at: Self.reported) == 5)
        #expect(status.secondsUntilSkippable(at: Self.reported.addingTimeInterval(2)) == 3)
        #expect(status.secondsUntilSkippable(at: Self.reported.addingTimeInterval(9)) == 0)
        status.playbackRate = 2
        #expect(status.secondsUntilSkippable(at: Self.reported.addingTimeInterval(2)) == 1)
        status.playerState = .paused
        #expect(status.secondsUntilSkippable(at: Self.reported.addingTimeInterval(2)) == 5)
        status.breakStatus.secondsUntilSkippable = -1
        #expect(status.secondsUntilSkippable(at: Self.reported) == nil)  // never
    }

    @Test func activeTracksAndAdBreakPosition() {
        var status = CastdMediaStatus()
        status.media.tracks = [1, 2, 3].map { CastdMediaTrack(subtitlesID: $0, url: "https://x.org/\($0).vtt") }
        status.activeTrackIds = [3, 1]
        #expect(status.activeTracks.map(\.trackID) == [1, 3])
        var adBreak = CastdAdBreak()
        adBreak.id = "b"
        adBreak.breakClipIds = ["c1", "c2", "c3"]
        status.media.breaks = [adBreak]
        var clip = CastdAdBreakClip()
        clip.id = "c2"
        status.media.breakClips = [clip]
        #expect(status.adBreakClipPosition == nil)
        status.breakStatus.breakID = "b"
        status.breakStatus.breakClipID = "c2"
        #expect(status.currentAdBreak?.id == "b")
        #expect(status.currentAdBreakClip?.id == "c2")
        #expect(status.adBreakClipPosition?.number == 2)
        #expect(status.adBreakClipPosition?.count == 3)
    }

    @Test func capabilitySets() {
        var device = CastdDevice()
        device.capabilities = 1 | 4 | 32
        #expect(device.capabilitySet == [.videoOut, .audioOut, .multizoneGroup])
        #expect(!device.capabilitySet.contains(.audioIn))
    }
}
