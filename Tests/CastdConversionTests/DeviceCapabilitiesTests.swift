import Testing

@testable import CastdConversion

@Suite struct DeviceCapabilitiesTests {
    @Test func modelNamesMapToRows() {
        let rows: [(String, DeviceCapabilities)] = [
            ("Chromecast", .chromecast),
            ("Chromecast Ultra", .chromecastUltra),
            ("Chromecast HD", .googleTVHD),
            ("Chromecast with Google TV", .googleTV),
            ("Google TV Streamer", .googleTVStreamer),
            ("Google Nest Hub", .nestHub),
            ("Google Nest Hub Max", .nestHub),
            ("Nest Audio", .audioOnly),
            ("Google Nest Mini", .audioOnly),
            ("Google Home", .audioOnly),
            ("Chromecast Audio", .audioOnly),
            ("Google Cast Group", .audioOnly),
        ]
        for (model, row) in rows {
            let found = DeviceCapabilities.forModel(model)
            #expect(found.name == row.name, "\(model)")
            #expect(found.video == row.video, "\(model)")
            #expect(found.model == model)
        }
    }

    @Test func namesMatchWithoutRegardToCaseOrSpaces() {
        #expect(DeviceCapabilities.forModel("CHROMECAST ULTRA").name == DeviceCapabilities.chromecastUltra.name)
        #expect(DeviceCapabilities.forModel("  google nest hub  ").name == DeviceCapabilities.nestHub.name)
        #expect(DeviceCapabilities.forModel("  google nest hub  ").model == "google nest hub")
    }

    @Test func unknownOrMissingModelIsTheConservativeRow() {
        for model in [nil, "", "BRAVIA 4K GB", "SHIELD Android TV"] as [String?] {
            let row = DeviceCapabilities.forModel(model)
            #expect(row.name == DeviceCapabilities.chromecast.name)
            #expect(Set(row.video.keys) == ["h264", "vp8"])
            #expect(row.video["h264"]?.maxLevel == 41)
        }
        #expect(DeviceCapabilities.forModel(nil).model == "Chromecast")
    }

    @Test func rowsFollowTheTable() {
        #expect(DeviceCapabilities.chromecast3rdGen.video["h264"]?.maxLevel == 42)
        let ultra = DeviceCapabilities.chromecastUltra
        #expect(ultra.video["hevc"]?.maxLevel == 153)
        #expect(ultra.video["hevc"]?.hdr == [.hdr10, .dolbyVision])
        #expect(ultra.video["vp9"]?.profiles == ["Profile 0", "Profile 2"])
        #expect(DeviceCapabilities.googleTV.passthroughAudioCodecs == ["ac3", "eac3"])
        #expect(DeviceCapabilities.googleTV.video["av1"] == nil)
        #expect(DeviceCapabilities.googleTVStreamer.video["av1"]?.profiles == ["Main"])
        #expect(DeviceCapabilities.googleTVStreamer.video["hevc"] == DeviceCapabilities.googleTV.video["hevc"])
        #expect(DeviceCapabilities.nestHub.video["h264"]?.maxHeight == 720)
        #expect(DeviceCapabilities.nestHub.passthroughAudioCodecs.isEmpty)
        let speaker = DeviceCapabilities.audioOnly
        #expect(speaker.isAudioOnly && speaker.video.isEmpty)
        #expect(speaker.maxLosslessSampleRate == 96_000 && speaker.maxLosslessBitDepth == 24)
        #expect(!DeviceCapabilities.chromecast.containers.contains(.matroska))
        #expect(DeviceCapabilities.chromecast.containers.contains(.webm))
    }

    @Test func limitsCountPixelsASecondAndTurnPortraitFrames() {
        let limits = DeviceCapabilities.chromecast.video["h264"]!
        #expect(limits.fits(width: 1920, height: 1080, frameRate: 30000.0 / 1001))
        #expect(!limits.fits(width: 1920, height: 1080, frameRate: 60))
        #expect(limits.fits(width: 1280, height: 720, frameRate: 60))
        #expect(limits.fits(width: 1080, height: 1920, frameRate: 30))
        #expect(!limits.fits(width: 3840, height: 2160, frameRate: 24))
    }

    @Test func overridesRestrictAndExtendCodecs() {
        let restricted = DeviceCapabilities.googleTV.applying(.init(videoCodecs: ["h264"]))
        #expect(Set(restricted.video.keys) == ["h264"])
        #expect(restricted.video["h264"] == DeviceCapabilities.googleTV.video["h264"])

        let extended = DeviceCapabilities.chromecast.applying(.init(videoCodecs: ["H264", "hevc"]))
        #expect(Set(extended.video.keys) == ["h264", "hevc"])
        #expect(extended.video["hevc"]?.maxBitDepth == 10)
        #expect(extended.video["hevc"]?.maxHeight == 1080)

        let audio = DeviceCapabilities.googleTV.applying(.init(audioCodecs: ["aac", "eac3", "dts"]))
        #expect(audio.passthroughAudioCodecs == ["eac3"])
        #expect(audio.audioCodecs == ["aac", "dts"])
        #expect(!audio.playsAudio(codec: "ac3"))
        #expect(audio.playsAudio(codec: "dts"))

        #expect(DeviceCapabilities.audioOnly.applying(.init(videoCodecs: ["h264"])).video.isEmpty)
    }

    @Test func maxResolutionOnlyLowersTheLimit() {
        #expect(DeviceCapabilities.Overrides.maxHeight(resolution: "720p") == 720)
        #expect(DeviceCapabilities.Overrides.maxHeight(resolution: "2160P") == 2160)
        #expect(DeviceCapabilities.Overrides.maxHeight(resolution: "900p") == nil)
        let capped = DeviceCapabilities.googleTV.applying(.init(maxHeight: 720))
        #expect(capped.video["hevc"]?.maxHeight == 720)
        #expect(capped.video["hevc"]?.maxWidth == 1280)
        let raised = DeviceCapabilities.chromecast.applying(.init(maxHeight: 2160))
        #expect(raised.video["h264"]?.maxHeight == 1080)
    }

    @Test func matroskaIsWebMOnlyWithWebMCodecs() {
        let vp9 = MediaProbe.VideoStream(index: 0, codec: "vp9", width: 1920, height: 1080)
        let opus = MediaProbe.AudioStream(index: 1, codec: "opus", channels: 2, sampleRate: 48_000)
        let aac = MediaProbe.AudioStream(index: 1, codec: "aac", channels: 2, sampleRate: 48_000)
        let names = ["matroska", "webm"]
        #expect(MediaContainer(MediaProbe(formatNames: names, duration: 1, video: [vp9], audio: [opus])) == .webm)
        #expect(MediaContainer(MediaProbe(formatNames: names, duration: 1, video: [vp9], audio: [aac])) == .matroska)
        let ass = MediaProbe.SubtitleStream(index: 2, codec: "ass")
        #expect(
            MediaContainer(MediaProbe(formatNames: names, duration: 1, video: [vp9], audio: [opus], subtitles: [ass]))
                == .matroska)
        #expect(MediaContainer(MediaProbe(formatNames: names, duration: 1)) == .matroska)
        let mp4 = ["mov", "mp4", "m4a", "3gp", "3g2", "mj2"]
        #expect(MediaContainer(MediaProbe(formatNames: mp4, duration: 1)) == .mp4)
        #expect(MediaContainer(MediaProbe(formatNames: ["avi"], duration: 1)) == .other("avi"))
        #expect(MediaContainer(MediaProbe(formatNames: ["mpegts"], duration: 1)).name == "mpegts")
    }
}
