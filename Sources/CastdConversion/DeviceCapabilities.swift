/// What a Cast device model plays: the video codecs it decodes and up to what profile, level,
/// size, frame rate, bit depth and HDR; the audio codecs it decodes or passes through; the
/// containers it opens. ``ConversionPlanner`` compares a ``MediaProbe`` against it.
///
/// The rows follow Google's "Supported Media for Google Cast". A device says only its model name
/// (the `md` TXT record, eureka_info's `model_name`), and several models answer to the same name
/// (the 1st, 2nd and 3rd gen Chromecast are all "Chromecast"), so ``forModel(_:)`` picks the
/// least capable row a name may mean, and the conservative 1st/2nd gen row for a name it does
/// not know: converting a file a device could have played costs CPU, sending one it cannot play
/// costs the user a failed load.
public struct DeviceCapabilities: Sendable, Equatable {
    /// The row's name, "Chromecast (1st/2nd gen)", "Google Nest Hub", …
    public var name: String
    /// The model as the device gave it (or the row's usual name); messages to the user name it.
    public var model: String
    /// Video codecs it decodes, by ffprobe's `codec_name` (`h264`, `hevc`, `vp8`, `vp9`, `av1`).
    public var video: [String: VideoLimits]
    /// Audio codecs it decodes, by ffprobe's `codec_name` (`aac`, `mp3`, `pcm_s16le`, …).
    public var audioCodecs: Set<String>
    /// Audio codecs it hands undecoded to the TV or receiver over HDMI (AC-3, E-AC-3 on Google
    /// TV): any channel count goes.
    public var passthroughAudioCodecs: Set<String>
    /// The channels it takes without downmixing; 2 unless the device is known to take more.
    public var maxAudioChannels: Int
    /// The highest sample rate and bit depth it takes in lossless audio (FLAC, WAV).
    public var maxLosslessSampleRate: Int
    public var maxLosslessBitDepth: Int
    /// The containers it opens.
    public var containers: Set<MediaContainer>
    /// A speaker or a group of them: no screen, video is dropped.
    public var isAudioOnly: Bool

    public init(
        name: String, model: String? = nil, video: [String: VideoLimits], audioCodecs: Set<String>,
        passthroughAudioCodecs: Set<String> = [], maxAudioChannels: Int = 2, maxLosslessSampleRate: Int = 96_000,
        maxLosslessBitDepth: Int = 24, containers: Set<MediaContainer> = MediaContainer.castPlayable,
        isAudioOnly: Bool = false
    ) {
        self.name = name
        self.model = model ?? name
        self.video = video
        self.audioCodecs = audioCodecs
        self.passthroughAudioCodecs = passthroughAudioCodecs
        self.maxAudioChannels = maxAudioChannels
        self.maxLosslessSampleRate = maxLosslessSampleRate
        self.maxLosslessBitDepth = maxLosslessBitDepth
        self.containers = containers
        self.isAudioOnly = isAudioOnly
    }

    /// What a device decodes of one video codec.
    public struct VideoLimits: Sendable, Equatable {
        /// ffprobe's profile names it takes (`High`, `Main 10`, `Profile 2`); nil takes any.
        public var profiles: Set<String>?
        /// The highest level in ffprobe's units (H.264 ×10, HEVC ×30, AV1 `seq_level_idx`); nil
        /// when the codec has none ffprobe reports (VP8, VP9), and size and frame rate decide.
        public var maxLevel: Int?
        /// The largest frame, the long side against the width and the short side against the
        /// height, so a portrait phone video fits where its landscape twin does.
        public var maxWidth: Int
        public var maxHeight: Int
        /// Frames a second at the largest frame; a smaller frame may go faster, up to the same
        /// pixel rate (a decoder's bound is pixels a second: 1080p30 is also 720p60).
        public var maxFrameRate: Double
        public var maxBitDepth: Int
        /// The HDR kinds it shows as HDR; any other HDR stream needs tone-mapping to SDR.
        public var hdr: Set<MediaProbe.HDR>

        public init(
            profiles: Set<String>?, maxLevel: Int?, maxWidth: Int, maxHeight: Int, maxFrameRate: Double,
            maxBitDepth: Int = 8, hdr: Set<MediaProbe.HDR> = []
        ) {
            self.profiles = profiles
            self.maxLevel = maxLevel
            self.maxWidth = maxWidth
            self.maxHeight = maxHeight
            self.maxFrameRate = maxFrameRate
            self.maxBitDepth = maxBitDepth
            self.hdr = hdr
        }

        /// Whether a frame of this size at this rate is within the limits (an unknown rate is
        /// taken for 30).
        public func fits(width: Int, height: Int, frameRate: Double?) -> Bool {
            let long = max(width, height)
            let short = min(width, height)
            guard long <= maxWidth, short <= maxHeight else { return false }
            let pixelRate = Double(width * height) * (frameRate ?? 30)
            let maxPixelRate = Double(maxWidth * maxHeight) * maxFrameRate
            // 1% slack: 30000/1001 and rounding in avg_frame_rate are not over 30.
            return pixelRate <= maxPixelRate * 1.01
        }
    }

    /// What castd.toml or a call says over the row: the codecs a device decodes (replacing the
    /// row's list, so they restrict or extend it) and the tallest picture to send
    /// (`--max-resolution 720p`), which only lowers the row's limit.
    public struct Overrides: Sendable, Equatable {
        public var videoCodecs: [String]?
        public var audioCodecs: [String]?
        public var maxHeight: Int?

        public init(videoCodecs: [String]? = nil, audioCodecs: [String]? = nil, maxHeight: Int? = nil) {
            self.videoCodecs = videoCodecs
            self.audioCodecs = audioCodecs
            self.maxHeight = maxHeight
        }

        /// The height `--max-resolution` names: `720p`, `1080p`, `2160p` (or `4k`); nil for
        /// anything else.
        public static func maxHeight(resolution: String) -> Int? {
            switch resolution.lowercased() {
            case "720p": 720
            case "1080p": 1080
            case "2160p", "4k": 2160
            default: nil
            }
        }
    }

    /// The row with the overrides applied. A codec added that the row lacks gets the row's
    /// largest frame and rate, any profile and level, up to 10 bits and no HDR: the user said
    /// the device decodes it, not how far. An audio-only device stays without video.
    public func applying(_ overrides: Overrides) -> DeviceCapabilities {
        var result = self
        if let codecs = overrides.videoCodecs, !isAudioOnly {
            let largest = video.values.max { $0.maxWidth * $0.maxHeight < $1.maxWidth * $1.maxHeight }
            let added = VideoLimits(
                profiles: nil, maxLevel: nil, maxWidth: largest?.maxWidth ?? 1920,
                maxHeight: largest?.maxHeight ?? 1080, maxFrameRate: largest?.maxFrameRate ?? 30, maxBitDepth: 10)
            var chosen: [String: VideoLimits] = [:]
            for codec in codecs.map({ $0.lowercased() }) { chosen[codec] = video[codec] ?? added }
            result.video = chosen
        }
        if let codecs = overrides.audioCodecs {
            let listed = Set(codecs.map { $0.lowercased() })
            result.passthroughAudioCodecs = passthroughAudioCodecs.intersection(listed)
            result.audioCodecs = listed.subtracting(result.passthroughAudioCodecs)
        }
        if let height = overrides.maxHeight, height > 0 {
            for (codec, var limits) in result.video where limits.maxHeight > height {
                limits.maxWidth = min(limits.maxWidth, height * 16 / 9)
                limits.maxHeight = height
                result.video[codec] = limits
            }
        }
        return result
    }

    /// Whether it decodes or passes through the codec at all.
    public func playsAudio(codec: String) -> Bool {
        audioCodecs.contains(codec) || passthroughAudioCodecs.contains(codec)
    }
}

/// A file's container as castd tells them apart: ffprobe's `format_name` lumps Matroska and
/// WebM, and a Cast device opens WebM but not Matroska.
public enum MediaContainer: Hashable, Sendable {
    /// MP4, fragmented or not, and its QuickTime kin (ffprobe: `mov,mp4,m4a,3gp,3g2,mj2`).
    case mp4
    case webm
    case matroska
    case mpegTS
    case mp3
    case ogg
    case wav
    case flac
    /// Anything else, by ffprobe's first format name (`avi`, `asf`, `aac`, …).
    case other(String)

    /// What every Cast device opens.
    public static let castPlayable: Set<MediaContainer> = [.mp4, .webm, .mpegTS, .mp3, .ogg, .wav, .flac]

    static let webMVideo: Set<String> = ["vp8", "vp9", "av1"]
    static let webMAudio: Set<String> = ["opus", "vorbis"]

    /// The probed file's container: `matroska,webm` is WebM only when every stream is one WebM
    /// allows (VP8, VP9, AV1, Opus, Vorbis, WebVTT), else Matroska.
    public init(_ probe: MediaProbe) {
        let names = Set(probe.formatNames)
        if names.contains("matroska") || names.contains("webm") {
            let hasStreams = !probe.video.isEmpty || !probe.audio.isEmpty
            let webM =
                hasStreams && probe.video.allSatisfy { Self.webMVideo.contains($0.codec) }
                && probe.audio.allSatisfy { Self.webMAudio.contains($0.codec) }
                && probe.subtitles.allSatisfy { $0.codec == "webvtt" }
            self = webM ? .webm : .matroska
        } else if names.contains("mp4") || names.contains("mov") {
            self = .mp4
        } else if names.contains("mpegts") {
            self = .mpegTS
        } else if names.contains("mp3") {
            self = .mp3
        } else if names.contains("ogg") {
            self = .ogg
        } else if names.contains("wav") {
            self = .wav
        } else if names.contains("flac") {
            self = .flac
        } else {
            self = .other(probe.formatNames.first ?? "unknown")
        }
    }

    /// Its name in a plan's summary: `matroska`, `mp4`, `mpegts`, `avi`.
    public var name: String {
        switch self {
        case .mp4: "mp4"
        case .webm: "webm"
        case .matroska: "matroska"
        case .mpegTS: "mpegts"
        case .mp3: "mp3"
        case .ogg: "ogg"
        case .wav: "wav"
        case .flac: "flac"
        case .other(let name): name
        }
    }
}

// MARK: - The rows

extension DeviceCapabilities {
    /// The row a device's model name means, matched without regard to case; the 1st/2nd gen
    /// Chromecast row for nil or a name not known (a TV with Cast built in, a new model). The
    /// result carries the given name as ``model``.
    public static func forModel(_ model: String?) -> DeviceCapabilities {
        let given = model?.trimmingSpaces ?? ""
        var row = Self.row(named: given.lowercased())
        if !given.isEmpty { row.model = given }
        return row
    }

    private static func row(named name: String) -> DeviceCapabilities {
        if name.contains("nest hub") || name.contains("home hub") { return nestHub }
        if name.contains("google tv streamer") { return googleTVStreamer }
        if name == "chromecast hd" || (name.contains("google tv") && name.contains("hd")) { return googleTVHD }
        if name.contains("chromecast with google tv") { return googleTV }
        if name.contains("chromecast ultra") { return chromecastUltra }
        let speakers = ["chromecast audio", "cast group", "nest audio", "nest mini", "google home"]
        if speakers.contains(where: { name.contains($0) }) { return audioOnly }
        return chromecast
    }

    /// What every row with a screen decodes of audio, and every speaker too.
    public static let castAudio: Set<String> = ["aac", "mp3", "opus", "vorbis", "flac", "pcm_s16le", "pcm_s24le"]

    static let h264Profiles: Set<String> = ["Constrained Baseline", "Baseline", "Main", "High"]
    static let hevcProfiles: Set<String> = ["Main", "Main 10"]
    static let vp9Profiles: Set<String> = ["Profile 0", "Profile 2"]

    static func h264(level: Int, width: Int, height: Int, rate: Double) -> VideoLimits {
        VideoLimits(profiles: h264Profiles, maxLevel: level, maxWidth: width, maxHeight: height, maxFrameRate: rate)
    }
    static let vp8 = VideoLimits(profiles: nil, maxLevel: nil, maxWidth: 1920, maxHeight: 1080, maxFrameRate: 30)

    /// Chromecast 1st and 2nd gen (and the 3rd, which gives the same model name): H.264 High up
    /// to level 4.1 (1080p30), VP8.
    public static let chromecast = DeviceCapabilities(
        name: "Chromecast (1st/2nd gen)", model: "Chromecast",
        video: ["h264": h264(level: 41, width: 1920, height: 1080, rate: 30), "vp8": vp8], audioCodecs: castAudio)

    /// Chromecast 3rd gen: H.264 High up to level 4.2 (1080p60), VP8. No model name tells it
    /// from the 2nd gen; castd.toml may name it.
    public static let chromecast3rdGen = DeviceCapabilities(
        name: "Chromecast (3rd gen)", model: "Chromecast",
        video: ["h264": h264(level: 42, width: 1920, height: 1080, rate: 60), "vp8": vp8], audioCodecs: castAudio)

    /// Chromecast Ultra: the 3rd gen's codecs, and HEVC Main and Main 10 up to level 5.1 and VP9
    /// profiles 0 and 2 at 4K60, in HDR10 or Dolby Vision.
    public static let chromecastUltra = DeviceCapabilities(
        name: "Chromecast Ultra",
        video: [
            "h264": h264(level: 42, width: 1920, height: 1080, rate: 60), "vp8": vp8,
            "hevc": VideoLimits(
                profiles: hevcProfiles, maxLevel: 153, maxWidth: 3840, maxHeight: 2160, maxFrameRate: 60,
                maxBitDepth: 10, hdr: [.hdr10, .dolbyVision]),
            "vp9": VideoLimits(
                profiles: vp9Profiles, maxLevel: nil, maxWidth: 3840, maxHeight: 2160, maxFrameRate: 60,
                maxBitDepth: 10, hdr: [.hdr10]),
        ], audioCodecs: castAudio)

    /// Chromecast with Google TV (4K): H.264 up to level 5.1 (4K30), HEVC up to level 5.1 and VP9
    /// profiles 0 and 2 at 4K60 in HDR10, HLG or Dolby Vision; AC-3 and E-AC-3 passed through.
    public static let googleTV = DeviceCapabilities(
        name: "Chromecast with Google TV",
        video: [
            "h264": h264(level: 51, width: 3840, height: 2160, rate: 30),
            "hevc": VideoLimits(
                profiles: hevcProfiles, maxLevel: 153, maxWidth: 3840, maxHeight: 2160, maxFrameRate: 60,
                maxBitDepth: 10, hdr: [.hdr10, .hlg, .dolbyVision]),
            "vp9": VideoLimits(
                profiles: vp9Profiles, maxLevel: nil, maxWidth: 3840, maxHeight: 2160, maxFrameRate: 60,
                maxBitDepth: 10, hdr: [.hdr10, .hlg]),
        ], audioCodecs: castAudio, passthroughAudioCodecs: ["ac3", "eac3"])

    /// Chromecast with Google TV (HD), model name "Chromecast HD": the 4K model's codecs at
    /// 1080p60 (H.264 to level 4.2, HEVC to level 4.1).
    public static let googleTVHD = DeviceCapabilities(
        name: "Chromecast with Google TV (HD)", model: "Chromecast HD",
        video: [
            "h264": h264(level: 42, width: 1920, height: 1080, rate: 60),
            "hevc": VideoLimits(
                profiles: hevcProfiles, maxLevel: 123, maxWidth: 1920, maxHeight: 1080, maxFrameRate: 60,
                maxBitDepth: 10, hdr: [.hdr10, .hlg]),
            "vp9": VideoLimits(
                profiles: vp9Profiles, maxLevel: nil, maxWidth: 1920, maxHeight: 1080, maxFrameRate: 60,
                maxBitDepth: 10, hdr: [.hdr10, .hlg]),
        ], audioCodecs: castAudio, passthroughAudioCodecs: ["ac3", "eac3"])

    /// Google TV Streamer: the Chromecast with Google TV's codecs and AV1 Main up to level 5.1
    /// (`seq_level_idx` 13) at 4K60.
    public static let googleTVStreamer: DeviceCapabilities = {
        var row = googleTV
        row.name = "Google TV Streamer"
        row.model = row.name
        row.video["av1"] = VideoLimits(
            profiles: ["Main"], maxLevel: 13, maxWidth: 3840, maxHeight: 2160, maxFrameRate: 60, maxBitDepth: 10,
            hdr: [.hdr10, .hlg])
        return row
    }()

    /// Google Nest Hub and Hub Max: H.264 up to level 4.1 and VP9 profile 0 (level 4.0), at 720p.
    public static let nestHub = DeviceCapabilities(
        name: "Google Nest Hub",
        video: [
            "h264": h264(level: 41, width: 1280, height: 720, rate: 60),
            "vp9": VideoLimits(
                profiles: ["Profile 0"], maxLevel: nil, maxWidth: 1280, maxHeight: 720, maxFrameRate: 60),
        ], audioCodecs: castAudio)

    /// Speakers and groups (Nest Audio, Nest Mini, Google Home, Chromecast Audio, a Cast group):
    /// no video; FLAC up to 96 kHz and 24 bits.
    public static let audioOnly = DeviceCapabilities(
        name: "Audio-only (speakers and groups)", model: "Speaker", video: [:], audioCodecs: castAudio,
        isAudioOnly: true)
}

extension String {
    fileprivate var trimmingSpaces: String {
        var text = Substring(self)
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        return String(text)
    }
}
