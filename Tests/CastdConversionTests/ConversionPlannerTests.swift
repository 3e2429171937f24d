import Testing

@testable import CastdConversion

/// Files as ffprobe would describe them.
enum Probes {
    static let matroska = ["matroska", "webm"]
    static let mp4 = ["mov", "mp4", "m4a", "3gp", "3g2", "mj2"]

    static func h264(
        _ index: Int = 0, profile: String = "High", level: Int = 40, width: Int = 1920, height: Int = 1080,
        rate: Double = 24, bitDepth: Int = 8
    ) -> MediaProbe.VideoStream {
        .init(
            index: index, codec: "h264", profile: profile, level: level, width: width, height: height,
            frameRate: rate, bitDepth: bitDepth)
    }

    static func aac(_ index: Int = 1, channels: Int = 2, language: String? = nil, isDefault: Bool = false)
        -> MediaProbe.AudioStream
    {
        .init(
            index: index, codec: "aac", profile: "LC", channels: channels, sampleRate: 48_000, language: language,
            isDefault: isDefault)
    }

    static let mkvH264AC3 = MediaProbe(
        formatNames: matroska, duration: 60, video: [h264()],
        audio: [.init(index: 1, codec: "ac3", channels: 6, sampleRate: 48_000)])
    static let mkvHEVCDTS = MediaProbe(
        formatNames: matroska, duration: 60,
        video: [
            .init(
                index: 0, codec: "hevc", profile: "Main 10", level: 153, width: 3840, height: 2160, frameRate: 24,
                bitDepth: 10)
        ],
        audio: [.init(index: 1, codec: "dts", profile: "DTS", channels: 6, sampleRate: 48_000)])
    static let mp4H264AAC = MediaProbe(formatNames: mp4, duration: 60, video: [h264()], audio: [aac()])

    static func flac(rate: Int, bits: Int) -> MediaProbe {
        MediaProbe(
            formatNames: ["flac"], duration: 200,
            audio: [.init(index: 0, codec: "flac", channels: 2, sampleRate: rate, bitDepth: bits)])
    }
}

@Suite struct ConversionPlannerTests {
    let chromecast = DeviceCapabilities.forModel("Chromecast")
    let googleTV = DeviceCapabilities.forModel("Chromecast with Google TV")
    let nestHub = DeviceCapabilities.forModel("Google Nest Hub")
    let nestAudio = DeviceCapabilities.forModel("Nest Audio")

    func plan(
        _ probe: MediaProbe, _ device: DeviceCapabilities, mode: TranscodeMode = .auto, audioTrack: Int? = nil,
        atLeast: ConversionPlan.Rung = .asIs
    ) throws -> ConversionPlan {
        try ConversionPlanner.plan(probe, for: device, mode: mode, audioTrack: audioTrack, atLeast: atLeast).get()
    }

    func refusal(
        _ probe: MediaProbe, _ device: DeviceCapabilities, mode: TranscodeMode = .auto, audioTrack: Int? = nil,
        atLeast: ConversionPlan.Rung = .asIs
    ) -> ConversionRefusal? {
        if case .failure(let refusal) = ConversionPlanner.plan(
            probe, for: device, mode: mode, audioTrack: audioTrack, atLeast: atLeast)
        {
            return refusal
        }
        return nil
    }

    func audioTarget(_ plan: ConversionPlan) -> ConversionPlan.AudioTarget? {
        if case .transcode(let target)? = plan.audio?.action { return target }
        return nil
    }

    func videoTarget(_ plan: ConversionPlan) -> ConversionPlan.VideoTarget? {
        if case .transcode(let target)? = plan.video?.action { return target }
        return nil
    }

    @Test func matroskaH264AC3() throws {
        let old = try plan(Probes.mkvH264AC3, chromecast)
        #expect(old.rung == .audio)
        #expect(old.container == .fragmentedMP4)
        #expect(old.video == .init(index: 0, action: .copy))
        #expect(audioTarget(old) == .init(codec: "aac", channels: 2, sampleRate: 48_000, bitDepth: nil))
        #expect(old.summary == "transcoding audio ac3 5.1 → aac stereo")

        let tv = try plan(Probes.mkvH264AC3, googleTV)
        #expect(tv.rung == .remux)
        #expect(tv.container == .fragmentedMP4)
        #expect(tv.audio == .init(index: 1, action: .copy))
        #expect(tv.summary == "remuxing matroska → mp4")

        let hub = try plan(Probes.mkvH264AC3, nestHub)
        #expect(hub.rung == .video)
        #expect(videoTarget(hub)?.height == 720)
        #expect(audioTarget(hub)?.codec == "aac")
    }

    @Test func matroskaHEVCMain10DTS() throws {
        let old = try plan(Probes.mkvHEVCDTS, chromecast)
        #expect(old.rung == .video)
        let video = try #require(videoTarget(old))
        #expect(video.codec == "h264" && video.profile == "High" && video.bitDepth == 8)
        #expect(video.width == 1920 && video.height == 1080 && video.scaled)
        #expect(video.level == 40)
        #expect(video.level <= 41)
        #expect(!video.toneMap)
        #expect(audioTarget(old)?.codec == "aac")
        #expect(old.container == .fragmentedMP4)
        #expect(old.summary == "transcoding video hevc 2160p → h264 1080p and audio dts 5.1 → aac stereo")

        let tv = try plan(Probes.mkvHEVCDTS, googleTV)
        #expect(tv.rung == .audio)
        #expect(tv.video?.action == .copy)
        #expect(audioTarget(tv)?.channels == 2)
        #expect(tv.container == .fragmentedMP4)
        #expect(tv.summary == "transcoding audio dts 5.1 → aac stereo")
    }

    @Test func aviMPEG4Part2WithMP3() throws {
        let avi = MediaProbe(
            formatNames: ["avi"], duration: 60,
            video: [
                .init(
                    index: 0, codec: "mpeg4", profile: "Advanced Simple Profile", width: 720, height: 480, frameRate: 25
                )
            ],
            audio: [.init(index: 1, codec: "mp3", channels: 2, sampleRate: 44_100)])
        for device in [chromecast, googleTV, nestHub] {
            let result = try plan(avi, device)
            #expect(result.rung == .video)
            #expect(result.audio?.action == .copy)
            #expect(result.container == .fragmentedMP4)
            let video = try #require(videoTarget(result))
            #expect(video.width == 720 && video.height == 480 && !video.scaled)
            #expect(video.level == 30)
            #expect(result.summary == "transcoding video mpeg4 → h264")
        }
    }

    @Test func tenBitH264IsConverted() throws {
        let high10 = MediaProbe(
            formatNames: Probes.mp4, duration: 60, video: [Probes.h264(profile: "High 10", bitDepth: 10)],
            audio: [Probes.aac()])
        for device in [chromecast, googleTV, nestHub] {
            let result = try plan(high10, device)
            #expect(result.rung == .video)
            #expect(videoTarget(result)?.bitDepth == 8)
            #expect(result.audio?.action == .copy)
        }
    }

    @Test func losslessAudioFiles() throws {
        let wav = MediaProbe(
            formatNames: ["wav"], duration: 60,
            audio: [.init(index: 0, codec: "pcm_s16le", channels: 2, sampleRate: 44_100, bitDepth: 16)])
        for device in [chromecast, googleTV, nestHub, nestAudio] {
            #expect(try plan(wav, device).rung == .asIs)
            #expect(try plan(Probes.flac(rate: 96_000, bits: 24), device).rung == .asIs)
            #expect(try plan(Probes.flac(rate: 96_000, bits: 24), device).summary == "serving as is")
        }
        let float = MediaProbe(
            formatNames: ["wav"], duration: 60,
            audio: [.init(index: 0, codec: "pcm_f32le", channels: 2, sampleRate: 48_000, bitDepth: 32)])
        let converted = try plan(float, chromecast)
        #expect(converted.rung == .audio)
        #expect(audioTarget(converted)?.codec == "flac")
        #expect(audioTarget(converted)?.bitDepth == 24)
    }

    @Test func hiResFLACIsBroughtTo96k() throws {
        let result = try plan(Probes.flac(rate: 192_000, bits: 24), nestAudio)
        #expect(result.rung == .audio)
        #expect(result.container == .audio(.flac))
        #expect(audioTarget(result) == .init(codec: "flac", channels: 2, sampleRate: 96_000, bitDepth: 24))
        #expect(result.summary == "transcoding audio flac stereo 192 kHz → flac stereo 96 kHz")
        let cd = try plan(Probes.flac(rate: 176_400, bits: 32), chromecast)
        #expect(audioTarget(cd) == .init(codec: "flac", channels: 2, sampleRate: 88_200, bitDepth: 24))
    }

    @Test func mp4WithTextSubtitlesIsServedAsIs() throws {
        var probe = Probes.mp4H264AAC
        probe.subtitles = [.init(index: 2, codec: "mov_text", language: "eng")]
        for device in [chromecast, googleTV] {
            let result = try plan(probe, device)
            #expect(result.rung == .asIs)
            #expect(result.container == .asIs)
            #expect(result.subtitles == [2])
            #expect(result.imageSubtitles.isEmpty)
            #expect(result.summary == "serving as is")
        }
    }

    @Test func matroskaWithTwoAudioLanguages() throws {
        let probe = MediaProbe(
            formatNames: Probes.matroska, duration: 60, video: [Probes.h264(level: 41)],
            audio: [Probes.aac(1, language: "eng"), Probes.aac(2, language: "fra", isDefault: true)],
            subtitles: [.init(index: 3, codec: "ass"), .init(index: 4, codec: "hdmv_pgs_subtitle")])
        let byDefault = try plan(probe, chromecast)
        #expect(byDefault.audio?.index == 2)
        #expect(byDefault.rung == .remux)
        #expect(byDefault.subtitles == [3])
        #expect(byDefault.imageSubtitles == [4])
        let english = try plan(probe, chromecast, audioTrack: 1)
        #expect(english.audio == .init(index: 1, action: .copy))
        #expect(refusal(probe, chromecast, audioTrack: 7)?.kind == .noSuchAudioTrack)

        // In an MP4 the device would play the default track: another one needs a remux.
        var mp4 = probe
        mp4.formatNames = Probes.mp4
        mp4.subtitles = []
        #expect(try plan(mp4, chromecast).rung == .asIs)
        #expect(try plan(mp4, chromecast, audioTrack: 2).rung == .asIs)
        let other = try plan(mp4, chromecast, audioTrack: 1)
        #expect(other.rung == .remux)
        #expect(other.audio?.index == 1)
    }

    @Test func fourKH264IsScaledForTheNestHub() throws {
        let probe = MediaProbe(
            formatNames: Probes.mp4, duration: 60, video: [Probes.h264(level: 51, width: 3840, height: 2160, rate: 30)],
            audio: [Probes.aac()])
        let hub = try plan(probe, nestHub)
        #expect(hub.rung == .video)
        let video = try #require(videoTarget(hub))
        #expect(video.width == 1280 && video.height == 720 && video.scaled)
        #expect(video.level == 31)
        #expect(video.frameRate == nil)
        #expect(hub.summary == "transcoding video h264 2160p → h264 720p")
        #expect(try plan(probe, googleTV).rung == .asIs)
    }

    @Test func frameRateIsHalvedWhenOverTheDevice() throws {
        let probe = MediaProbe(
            formatNames: Probes.mp4, duration: 60, video: [Probes.h264(level: 42, rate: 60)], audio: [Probes.aac()])
        let result = try plan(probe, chromecast)
        let video = try #require(videoTarget(result))
        #expect(video.frameRate == 30)
        #expect(video.height == 1080 && !video.scaled)
        #expect(video.level == 40)
    }

    @Test func hdrIsToneMappedWhereTheDeviceTakesNone() throws {
        let probe = MediaProbe(
            formatNames: Probes.mp4, duration: 60,
            video: [
                .init(
                    index: 0, codec: "hevc", profile: "Main 10", level: 150, width: 3840, height: 2160, frameRate: 24,
                    bitDepth: 10, hdr: .hdr10)
            ],
            audio: [Probes.aac()])
        let old = try plan(probe, chromecast)
        #expect(old.rung == .video)
        #expect(videoTarget(old)?.toneMap == true)
        #expect(old.summary == "transcoding video hevc 2160p → h264 1080p (HDR10 → SDR)")
        #expect(try plan(probe, .chromecastUltra).rung == .asIs)
        #expect(try plan(probe, googleTV).rung == .asIs)
    }

    @Test func webMVP9Opus() throws {
        let probe = MediaProbe(
            formatNames: Probes.matroska, duration: 60,
            video: [.init(index: 0, codec: "vp9", profile: "Profile 0", width: 1920, height: 1080, frameRate: 30)],
            audio: [.init(index: 1, codec: "opus", channels: 2, sampleRate: 48_000)])
        let old = try plan(probe, chromecast)
        #expect(old.rung == .video)
        #expect(videoTarget(old)?.codec == "h264")
        #expect(old.audio?.action == .copy)
        #expect(old.container == .fragmentedMP4)
        #expect(old.summary == "transcoding video vp9 → h264")
        #expect(try plan(probe, googleTV).rung == .asIs)
        let remuxed = try plan(probe, googleTV, atLeast: .remux)
        #expect(remuxed.container == .webm)
        #expect(remuxed.summary == "remuxing webm → webm")
    }

    @Test func vp8WithDTSGetsOpusInWebM() throws {
        let probe = MediaProbe(
            formatNames: Probes.matroska, duration: 60,
            video: [.init(index: 0, codec: "vp8", width: 1280, height: 720, frameRate: 30)],
            audio: [.init(index: 1, codec: "dts", channels: 6, sampleRate: 48_000)])
        let result = try plan(probe, chromecast)
        #expect(result.rung == .audio)
        #expect(result.container == .webm)
        #expect(audioTarget(result)?.codec == "opus")
    }

    @Test func tooManyChannelsAreMixedDown() throws {
        let probe = MediaProbe(
            formatNames: Probes.mp4, duration: 60, video: [Probes.h264()], audio: [Probes.aac(channels: 6)])
        let result = try plan(probe, chromecast)
        #expect(result.rung == .audio)
        #expect(audioTarget(result)?.channels == 2)
        let surround = try plan(probe, chromecast.applying(.init()).withChannels(6))
        #expect(surround.rung == .asIs)
        let forced = try plan(probe, chromecast.withChannels(6), atLeast: .audio)
        #expect(audioTarget(forced)?.channels == 6)
    }

    @Test func neverRefusesConversionNamingCodecAndDevice() throws {
        let hevc = refusal(Probes.mkvHEVCDTS, chromecast, mode: .never)
        #expect(hevc?.kind == .transcodingOff)
        #expect(
            hevc?.reason
                == "the Chromecast cannot play hevc video (Main 10, level 5.1) and converting is turned off (--transcode never)"
        )
        let dts = refusal(Probes.mkvHEVCDTS, googleTV, mode: .never)
        #expect(dts?.reason.hasPrefix("the Chromecast with Google TV cannot play dts audio (5.1)") == true)
        let container = refusal(Probes.mkvH264AC3, googleTV, mode: .never)
        #expect(container?.reason.hasPrefix("the Chromecast with Google TV cannot play the matroska container") == true)
        #expect(try plan(Probes.mp4H264AAC, chromecast, mode: .never).rung == .asIs)
        #expect(refusal(Probes.mp4H264AAC, chromecast, mode: .never, atLeast: .remux)?.kind == .transcodingOff)
    }

    @Test func alwaysRemuxesAtLeast() throws {
        let result = try plan(Probes.mp4H264AAC, chromecast, mode: .always)
        #expect(result.rung == .remux)
        #expect(result.container == .fragmentedMP4)
        #expect(result.video?.action == .copy && result.audio?.action == .copy)
        #expect(result.summary == "remuxing mp4 → mp4")
        #expect(try plan(Probes.mkvHEVCDTS, chromecast, mode: .always).rung == .video)
    }

    @Test func atLeastStepsDownOneRungAtATime() throws {
        let probe = Probes.mp4H264AAC
        #expect(try plan(probe, chromecast).rung == .asIs)
        #expect(try plan(probe, chromecast, atLeast: .remux).rung == .remux)
        let audio = try plan(probe, chromecast, atLeast: .audio)
        #expect(audio.rung == .audio && audio.video?.action == .copy)
        #expect(audioTarget(audio)?.codec == "aac")
        let video = try plan(probe, chromecast, atLeast: .video)
        #expect(video.rung == .video)
        #expect(videoTarget(video)?.level == 40)
        #expect(video.audio?.action == .copy)

        let silent = MediaProbe(formatNames: Probes.mp4, duration: 60, video: [Probes.h264()])
        #expect(try plan(silent, chromecast).rung == .asIs)
        #expect(try plan(silent, chromecast, atLeast: .audio).rung == .video)

        let song = Probes.flac(rate: 44_100, bits: 16)
        #expect(try plan(song, chromecast, atLeast: .audio).container == .audio(.flac))
        #expect(refusal(song, chromecast, atLeast: .video)?.kind == .noLowerRung)
    }

    @Test func speakersGetTheAudioAlone() throws {
        let result = try plan(Probes.mp4H264AAC, nestAudio)
        #expect(result.droppedVideo)
        #expect(result.video == nil)
        #expect(result.rung == .remux)
        #expect(result.container == .audio(.m4a))
        #expect(result.summary == "remuxing mp4 → m4a (video dropped: audio-only device)")

        let ac3 = try plan(Probes.mkvH264AC3, nestAudio)
        #expect(ac3.rung == .audio)
        #expect(ac3.container == .audio(.m4a))
        #expect(audioTarget(ac3)?.channels == 2)

        let silent = MediaProbe(formatNames: Probes.mp4, duration: 60, video: [Probes.h264()])
        #expect(refusal(silent, nestAudio)?.kind == .nothingPlayable)
        #expect(refusal(Probes.mp4H264AAC, nestAudio, mode: .never)?.reason.contains("plays audio only") == true)
    }

    @Test func nothingPlayable() {
        let empty = MediaProbe(formatNames: Probes.matroska, duration: 1)
        let refused = refusal(empty, chromecast)
        #expect(refused?.kind == .nothingPlayable)
        #expect(refused?.reason.hasPrefix("nothing playable") == true)
    }

    @Test func overridesChangeThePlan() throws {
        let hevc = MediaProbe(
            formatNames: Probes.matroska, duration: 60,
            video: [
                .init(index: 0, codec: "hevc", profile: "Main 10", level: 123, width: 1920, height: 1080, bitDepth: 10)
            ],
            audio: [Probes.aac()])
        #expect(try plan(hevc, chromecast).rung == .video)
        let hevcTV = chromecast.applying(.init(videoCodecs: ["h264", "hevc"]))
        #expect(try plan(hevc, hevcTV).video?.action == .copy)
        #expect(try plan(hevc, hevcTV).rung == .remux)
        let capped = googleTV.applying(.init(maxHeight: 720))
        #expect(videoTarget(try plan(Probes.mkvH264AC3, capped))?.height == 720)
    }
}

extension DeviceCapabilities {
    fileprivate func withChannels(_ channels: Int) -> DeviceCapabilities {
        var copy = self
        copy.maxAudioChannels = channels
        return copy
    }
}
