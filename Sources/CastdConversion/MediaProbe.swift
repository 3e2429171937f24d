/// What a media file holds, as ffprobe tells it: its container and duration, and each stream's
/// codec and the parameters a Cast device's decoder cares about. castd decides from it whether a
/// device can play the file as it is, remuxed, or converted (``ConversionPlanner``).
///
/// Every value comes from a file castd did not write: strings are bounded, numbers are
/// range-checked as they are read (``FFprobe``), and what is missing or unknown is nil.
public struct MediaProbe: Sendable, Equatable {
    /// ffprobe's `format_name`, split at its commas: `["matroska", "webm"]`,
    /// `["mov", "mp4", "m4a", "3gp", "3g2", "mj2"]`, `["avi"]`, `["wav"]`, `["flac"]`, `["mp3"]`,
    /// `["ogg"]`, `["mpegts"]`.
    public var formatNames: [String]
    /// Seconds; nil when the file does not say (a stream of unknown length).
    public var duration: Double?
    public var video: [VideoStream]
    public var audio: [AudioStream]
    public var subtitles: [SubtitleStream]

    public init(
        formatNames: [String], duration: Double?, video: [VideoStream] = [], audio: [AudioStream] = [],
        subtitles: [SubtitleStream] = []
    ) {
        self.formatNames = formatNames
        self.duration = duration
        self.video = video
        self.audio = audio
        self.subtitles = subtitles
    }

    /// A video stream (cover art attached to an audio file is not one: ffprobe's
    /// `disposition.attached_pic`, left out).
    public struct VideoStream: Sendable, Equatable {
        /// The stream's index in the file (ffmpeg's `-map 0:INDEX`).
        public var index: Int
        /// ffprobe's `codec_name`: `h264`, `hevc`, `vp8`, `vp9`, `av1`, `mpeg4`, `mpeg2video`, …
        public var codec: String
        /// ffprobe's `profile`: `High`, `Main`, `Main 10`, `High 10`, `Profile 0`, `Profile 2`, …
        public var profile: String?
        /// ffprobe's `level`: H.264 ×10 (41 is 4.1), HEVC ×30 (153 is 5.1); nil when unknown.
        public var level: Int?
        public var width: Int
        public var height: Int
        /// Frames a second (`avg_frame_rate`, else `r_frame_rate`); nil when unknown.
        public var frameRate: Double?
        /// Bits per sample: 8, 10, 12 (from `bits_per_raw_sample` or the pixel format).
        public var bitDepth: Int
        public var hdr: HDR
        public var language: String?

        public init(
            index: Int, codec: String, profile: String? = nil, level: Int? = nil, width: Int, height: Int,
            frameRate: Double? = nil, bitDepth: Int = 8, hdr: HDR = .none, language: String? = nil
        ) {
            self.index = index
            self.codec = codec
            self.profile = profile
            self.level = level
            self.width = width
            self.height = height
            self.frameRate = frameRate
            self.bitDepth = bitDepth
            self.hdr = hdr
            self.language = language
        }
    }

    /// High dynamic range, as the stream's transfer characteristics and side data say.
    public enum HDR: String, Sendable, Equatable {
        case none
        /// SMPTE ST 2084 (PQ): HDR10, HDR10+.
        case hdr10
        /// ARIB STD-B67.
        case hlg
        /// A Dolby Vision configuration record in the stream's side data.
        case dolbyVision
    }

    public struct AudioStream: Sendable, Equatable {
        public var index: Int
        /// ffprobe's `codec_name`: `aac`, `mp3`, `opus`, `vorbis`, `flac`, `ac3`, `eac3`, `dts`,
        /// `truehd`, `pcm_s16le`, `pcm_s24le`, `alac`, …
        public var codec: String
        /// ffprobe's `profile`: `LC`, `HE-AAC`, `HE-AACv2`, `DTS-HD MA`, …
        public var profile: String?
        public var channels: Int
        public var sampleRate: Int
        /// Bits per sample where the codec keeps it (PCM, FLAC); nil otherwise.
        public var bitDepth: Int?
        /// ISO 639-2 (`eng`, `fra`), from the stream's `language` tag.
        public var language: String?
        public var title: String?
        /// The file marks it the default track.
        public var isDefault: Bool

        public init(
            index: Int, codec: String, profile: String? = nil, channels: Int, sampleRate: Int, bitDepth: Int? = nil,
            language: String? = nil, title: String? = nil, isDefault: Bool = false
        ) {
            self.index = index
            self.codec = codec
            self.profile = profile
            self.channels = channels
            self.sampleRate = sampleRate
            self.bitDepth = bitDepth
            self.language = language
            self.title = title
            self.isDefault = isDefault
        }
    }

    public struct SubtitleStream: Sendable, Equatable {
        public var index: Int
        /// ffprobe's `codec_name`: `subrip`, `ass`, `ssa`, `mov_text`, `webvtt` (text);
        /// `hdmv_pgs_subtitle`, `dvd_subtitle`, `dvb_subtitle` (images).
        public var codec: String
        public var language: String?
        public var title: String?
        public var isDefault: Bool
        public var isForced: Bool

        public init(
            index: Int, codec: String, language: String? = nil, title: String? = nil, isDefault: Bool = false,
            isForced: Bool = false
        ) {
            self.index = index
            self.codec = codec
            self.language = language
            self.title = title
            self.isDefault = isDefault
            self.isForced = isForced
        }

        /// Text subtitles castd can convert to WebVTT; image subtitles it cannot.
        public var isText: Bool { Self.textCodecs.contains(codec) }
        static let textCodecs: Set<String> = ["subrip", "srt", "ass", "ssa", "mov_text", "webvtt", "text"]
    }
}
