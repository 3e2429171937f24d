/// How castd serves one file to one device: the file as it is, or ffmpeg's output with the
/// chosen video and audio stream each copied or converted, in a container the device opens.
/// ``ConversionPlanner`` makes it from a ``MediaProbe`` and ``DeviceCapabilities``.
public struct ConversionPlan: Sendable, Equatable {
    /// How much work the plan asks for, least first: castd steps one rung down when a device
    /// fails to load what the plan made (``ConversionPlanner/plan(_:for:mode:audioTrack:atLeast:)``).
    public enum Rung: Int, Sendable, Comparable, CaseIterable {
        /// The file unchanged.
        case asIs
        /// Streams copied into another container.
        case remux
        /// The audio converted, the video (if any) copied.
        case audio
        /// The video converted (and the audio too where it needs it).
        case video

        public static func < (lhs: Rung, rhs: Rung) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What castd sends.
    public enum Container: Sendable, Equatable {
        /// The file itself, unchanged.
        case asIs
        /// Fragmented MP4, which ffmpeg can write to a pipe.
        case fragmentedMP4
        case webm
        /// An audio file (for a file without video, or a device without a screen).
        case audio(AudioContainer)
    }

    public enum AudioContainer: String, Sendable, Equatable {
        /// Fragmented MP4 holding audio alone (AAC, AC-3).
        case m4a
        case mp3
        case flac
        case ogg
        case wav
    }

    /// The video stream sent: its index in the file and what becomes of it.
    public struct Video: Sendable, Equatable {
        public var index: Int
        public var action: VideoAction
    }

    public enum VideoAction: Sendable, Equatable {
        case copy
        case transcode(VideoTarget)
    }

    /// What ffmpeg encodes the video to: always H.264 High, 8-bit, SDR, at a level and size the
    /// device decodes.
    public struct VideoTarget: Sendable, Equatable {
        /// `h264`.
        public var codec: String
        /// `High`.
        public var profile: String
        /// ×10, as ffprobe gives it: 41 is 4.1.
        public var level: Int
        public var width: Int
        public var height: Int
        /// The frame rate to convert to when the source's is over what the device decodes at
        /// that size; nil keeps the source's.
        public var frameRate: Double?
        public var bitDepth: Int
        /// The source is HDR: its colours are mapped to SDR (BT.709) as it is converted.
        public var toneMap: Bool
        /// The picture is scaled down (``width`` and ``height`` are smaller than the source's).
        public var scaled: Bool
    }

    /// The audio stream sent: its index in the file and what becomes of it.
    public struct Audio: Sendable, Equatable {
        public var index: Int
        public var action: AudioAction
    }

    public enum AudioAction: Sendable, Equatable {
        case copy
        case transcode(AudioTarget)
    }

    /// What ffmpeg encodes the audio to: AAC-LC (or Opus, to go with VP8 in WebM) at 48 kHz, or
    /// FLAC for lossless audio sent without video.
    public struct AudioTarget: Sendable, Equatable {
        /// `aac`, `opus`, `flac`.
        public var codec: String
        public var channels: Int
        public var sampleRate: Int
        /// FLAC's bits per sample; nil for lossy codecs.
        public var bitDepth: Int?
    }

    public var rung: Rung
    public var container: Container
    public var video: Video?
    public var audio: Audio?
    /// The file has video the device cannot show (a speaker): the audio goes alone.
    public var droppedVideo: Bool
    /// Text subtitle streams, by index, for castd to extract to WebVTT.
    public var subtitles: [Int]
    /// Image subtitle streams (PGS, VobSub, DVB), by index: not converted, castd says why.
    public var imageSubtitles: [Int]
    /// One line for `castc status`: `serving as is`, `remuxing matroska → mp4`,
    /// `transcoding audio dts 5.1 → aac stereo`, `transcoding video hevc → h264`.
    public var summary: String
}

/// Why castd will not send a file to a device, in a sentence for the user.
public struct ConversionRefusal: Error, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// No video or audio stream the device could be sent (none in the file; video alone to a
        /// speaker).
        case nothingPlayable
        /// The file needs converting and `--transcode never` forbids it.
        case transcodingOff
        /// The asked audio track is not an audio stream of the file.
        case noSuchAudioTrack
        /// A lower rung was asked (after a failed load) and there is none.
        case noLowerRung
    }

    public var kind: Kind
    public var reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }
}

/// Whether castd converts: when a device needs it (`auto`), not at all (`never`: a file that
/// needs it is refused), or always at least remuxes (`always`).
public enum TranscodeMode: String, Sendable, Equatable, CaseIterable {
    case auto
    case never
    case always
}
