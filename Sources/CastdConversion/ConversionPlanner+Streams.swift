// What the planner asks of each stream: does the device play it, what is it converted to, which
// container holds the result, and how the plan reads to the user.

extension ConversionPlanner {
    /// Why the device cannot play the video stream, as "hevc video (Main 10, level 5.1)" (the
    /// size, rate or bit depth added when it is what is over); nil when it can.
    static func videoProblem(_ stream: MediaProbe.VideoStream, _ device: DeviceCapabilities) -> String? {
        var parts = [stream.profile, stream.level.map { "level " + levelName(stream.codec, $0) }].compactMap { $0 }
        if stream.hdr != .none { parts.append(hdrName(stream.hdr)) }
        var problem = false
        if let limits = device.video[stream.codec] {
            if let profiles = limits.profiles, let profile = stream.profile, !profiles.contains(profile) {
                problem = true
            }
            if let maxLevel = limits.maxLevel, let level = stream.level, level > maxLevel { problem = true }
            if !limits.fits(width: stream.width, height: stream.height, frameRate: stream.frameRate) {
                problem = true
                parts.append(
                    "\(stream.width)×\(stream.height)" + (stream.frameRate.map { " at \(Int($0.rounded())) fps" } ?? "")
                )
            }
            if stream.bitDepth > limits.maxBitDepth {
                problem = true
                parts.append("\(stream.bitDepth)-bit")
            }
            if stream.hdr != .none && !limits.hdr.contains(stream.hdr) { problem = true }
        } else {
            problem = true
        }
        guard problem else { return nil }
        return "\(stream.codec) video" + (parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))")
    }

    /// Why the device cannot play the audio stream, as "dts audio (5.1)"; nil when it can.
    static func audioProblem(_ stream: MediaProbe.AudioStream, _ device: DeviceCapabilities) -> String? {
        let description = "\(stream.codec) audio (\(describe(stream)))"
        if device.passthroughAudioCodecs.contains(stream.codec) { return nil }
        guard device.audioCodecs.contains(stream.codec) else { return description }
        if stream.codec == "aac", let profile = stream.profile, !aacProfiles.contains(profile) {
            return "\(stream.codec) audio (\(profile))"
        }
        if stream.channels > device.maxAudioChannels { return description }
        if isLossless(stream.codec)
            && (stream.sampleRate > device.maxLosslessSampleRate
                || (stream.bitDepth ?? 0) > device.maxLosslessBitDepth)
        {
            return description
        }
        return nil
    }

    static let aacProfiles: Set<String> = ["LC", "HE-AAC", "HE-AACv2"]

    static func isLossless(_ codec: String) -> Bool {
        codec.hasPrefix("pcm_") || ["flac", "alac", "wavpack", "ape", "tta", "truehd", "mlp"].contains(codec)
    }

    /// The audio a stream is converted to: FLAC for lossless audio sent without video (at the
    /// device's highest rate of the same family, 88.2 kHz for 176.4, 96 kHz for 192); else AAC-LC
    /// at 48 kHz, or Opus beside a video MP4 cannot hold (VP8). The channels are kept when the
    /// device takes them, else mixed down to stereo.
    static func audioOutput(
        _ stream: MediaProbe.AudioStream, _ device: DeviceCapabilities, video: String?
    ) -> ConversionPlan.AudioTarget {
        let channels = stream.channels <= device.maxAudioChannels ? stream.channels : 2
        if video == nil && isLossless(stream.codec) {
            let base = stream.sampleRate % 44_100 == 0 ? 44_100 : 48_000
            var rate = stream.sampleRate
            if rate > device.maxLosslessSampleRate {
                rate = base
                while rate * 2 <= device.maxLosslessSampleRate { rate *= 2 }
            }
            let depth = min(stream.bitDepth ?? 16, device.maxLosslessBitDepth)
            return .init(codec: "flac", channels: channels, sampleRate: rate, bitDepth: depth)
        }
        if let video, !mp4Video.contains(video) {
            return .init(codec: "opus", channels: channels, sampleRate: 48_000, bitDepth: nil)
        }
        return .init(codec: "aac", channels: channels, sampleRate: 48_000, bitDepth: nil)
    }

    static let mp4Video: Set<String> = ["h264", "hevc", "vp9", "av1"]
    static let mp4Audio: Set<String> = ["aac", "mp3", "opus", "flac", "ac3", "eac3"]

    /// The container that holds the output streams, by their codecs: WebM when WebM takes them
    /// all, else fragmented MP4; an audio file when there is no video. Nil when none does.
    static func outputContainer(video: String?, audio: String?) -> ConversionPlan.Container? {
        guard let video else {
            switch audio {
            case "aac", "ac3", "eac3": return .audio(.m4a)
            case "mp3": return .audio(.mp3)
            case "flac": return .audio(.flac)
            case "opus", "vorbis": return .audio(.ogg)
            case "pcm_s16le", "pcm_s24le": return .audio(.wav)
            default: return nil
            }
        }
        if MediaContainer.webMVideo.contains(video) && (audio.map { MediaContainer.webMAudio.contains($0) } ?? true) {
            return .webm
        }
        if mp4Video.contains(video) && (audio.map { mp4Audio.contains($0) } ?? true) { return .fragmentedMP4 }
        return nil
    }

    /// H.264 levels (×10) with their largest frame in macroblocks and macroblocks a second.
    static let h264Levels: [(level: Int, frame: Int, rate: Int)] = [
        (30, 1620, 40500), (31, 3600, 108_000), (32, 5120, 216_000), (40, 8192, 245_760), (41, 8192, 245_760),
        (42, 8704, 522_240), (50, 22080, 589_824), (51, 36864, 983_040), (52, 36864, 2_073_600),
    ]

    /// The H.264 the video is converted to: scaled down (keeping its shape) to the largest frame
    /// the device decodes in H.264 and its level allows, the frame rate divided (60 to 30) when
    /// over what the device decodes at that size, and the lowest level that holds the result.
    static func videoOutput(_ stream: MediaProbe.VideoStream, _ device: DeviceCapabilities)
        -> ConversionPlan.VideoTarget
    {
        let limits =
            device.video["h264"] ?? DeviceCapabilities.h264(level: 41, width: 1920, height: 1080, rate: 30)
        let maxLevel = limits.maxLevel ?? 41
        let cap = h264Levels.last { $0.level <= maxLevel } ?? h264Levels[0]
        let long = max(stream.width, stream.height)
        let short = min(stream.width, stream.height)
        var scale = min(
            1, Double(limits.maxWidth) / Double(max(long, 1)), Double(limits.maxHeight) / Double(max(short, 1)))
        var width = stream.width
        var height = stream.height
        while true {
            width = max(2, Int((Double(stream.width) * scale).rounded()) / 2 * 2)
            height = max(2, Int((Double(stream.height) * scale).rounded()) / 2 * 2)
            if macroblocks(width, height) <= cap.frame || width <= 16 { break }
            scale *= 0.98
        }
        let blocks = macroblocks(width, height)
        let deviceRate = limits.maxFrameRate * Double(limits.maxWidth * limits.maxHeight) / Double(width * height)
        let maxRate = min(deviceRate, Double(cap.rate) / Double(blocks), 60)
        var frameRate: Double?
        if let source = stream.frameRate, source > maxRate * 1.01 {
            frameRate = source / (source / maxRate).rounded(.up)
        }
        let rate = frameRate ?? stream.frameRate ?? 30
        let level =
            h264Levels.first {
                $0.level <= maxLevel && blocks <= $0.frame && Double(blocks) * rate <= Double($0.rate) * 1.01
            }?
            .level ?? cap.level
        return .init(
            codec: "h264", profile: "High", level: level, width: width, height: height, frameRate: frameRate,
            bitDepth: 8, toneMap: stream.hdr != .none, scaled: width < stream.width || height < stream.height)
    }

    static func macroblocks(_ width: Int, _ height: Int) -> Int { ((width + 15) / 16) * ((height + 15) / 16) }

    /// ffprobe's level as people write it: H.264 41 and HEVC 153 are both "5.1"… (H.264 ×10,
    /// HEVC ×30, AV1's `seq_level_idx` 13 is 5.1).
    static func levelName(_ codec: String, _ level: Int) -> String {
        switch codec {
        case "h264", "vp9": "\(level / 10).\(level % 10)"
        case "hevc": "\(level / 30).\((level % 30) / 3)"
        case "av1": "\(2 + level / 4).\(level % 4)"
        default: "\(level)"
        }
    }

    static func hdrName(_ hdr: MediaProbe.HDR) -> String {
        switch hdr {
        case .none: "SDR"
        case .hdr10: "HDR10"
        case .hlg: "HLG"
        case .dolbyVision: "Dolby Vision"
        }
    }

    static func channelsName(_ channels: Int) -> String {
        switch channels {
        case 1: "mono"
        case 2: "stereo"
        case 6: "5.1"
        case 8: "7.1"
        default: "\(channels) channels"
        }
    }

    static func describe(_ stream: MediaProbe.AudioStream) -> String {
        var text = channelsName(stream.channels)
        if isLossless(stream.codec) {
            text += ", " + kHz(stream.sampleRate) + (stream.bitDepth.map { ", \($0)-bit" } ?? "")
        }
        return text
    }

    /// 96000 as "96 kHz", 44100 as "44.1 kHz".
    static func kHz(_ rate: Int) -> String {
        rate % 1000 == 0 ? "\(rate / 1000) kHz" : "\(rate / 1000).\((rate % 1000) / 100) kHz"
    }
}
