/// A media command a player may support (the bits of `CastdMediaStatus.supportedMediaCommands`,
/// which are the Cast media protocol's), by the name castd gives it in
/// `CastdMediaStatus.supportedCommands`. castd's one table of them: castd names a device's bits
/// with it, and clients read them with it. (The emulator, being the device, has its own.)
///
/// ```swift
/// if status.supports(.skipAd) { try await client.skipAd() }
/// ```
public struct CastdMediaCommand: Hashable, Sendable, CustomStringConvertible {
    /// castd's name: "pause", "queue_next", …
    public let name: String
    /// The Cast bit flag; 0 for names this library does not know a flag for.
    public let flag: UInt64

    public init(name: String, flag: UInt64 = 0) {
        self.name = name
        self.flag = flag
    }

    public var description: String { name }

    public static let pause = CastdMediaCommand(name: "pause", flag: 1)
    public static let seek = CastdMediaCommand(name: "seek", flag: 2)
    public static let streamVolume = CastdMediaCommand(name: "stream_volume", flag: 4)
    public static let streamMute = CastdMediaCommand(name: "stream_mute", flag: 8)
    public static let skipForward = CastdMediaCommand(name: "skip_forward", flag: 16)
    public static let skipBackward = CastdMediaCommand(name: "skip_backward", flag: 32)
    public static let queueNext = CastdMediaCommand(name: "queue_next", flag: 64)
    public static let queuePrevious = CastdMediaCommand(name: "queue_prev", flag: 128)
    public static let queueShuffle = CastdMediaCommand(name: "queue_shuffle", flag: 256)
    public static let skipAd = CastdMediaCommand(name: "skip_ad", flag: 512)
    public static let queueRepeatAll = CastdMediaCommand(name: "queue_repeat_all", flag: 1024)
    public static let queueRepeatOne = CastdMediaCommand(name: "queue_repeat_one", flag: 2048)
    public static let editTracks = CastdMediaCommand(name: "edit_tracks", flag: 4096)
    public static let playbackRate = CastdMediaCommand(name: "playback_rate", flag: 8192)
    public static let like = CastdMediaCommand(name: "like", flag: 16384)
    public static let dislike = CastdMediaCommand(name: "dislike", flag: 32768)
    public static let follow = CastdMediaCommand(name: "follow", flag: 65536)
    public static let unfollow = CastdMediaCommand(name: "unfollow", flag: 131072)
    public static let streamTransfer = CastdMediaCommand(name: "stream_transfer", flag: 262144)
    public static let lyrics = CastdMediaCommand(name: "lyrics", flag: 524288)

    /// The commands castd knows, in flag order: castd names them in `supported_commands` from
    /// these, and clients decode bits with them.
    public static let known: [CastdMediaCommand] = [
        .pause, .seek, .streamVolume, .streamMute, .skipForward, .skipBackward, .queueNext, .queuePrevious,
        .queueShuffle, .skipAd, .queueRepeatAll, .queueRepeatOne, .editTracks, .playbackRate, .like, .dislike,
        .follow, .unfollow, .streamTransfer, .lyrics,
    ]

    /// The names of the commands whose bits are set.
    public static func names(in bits: UInt64) -> [String] {
        known.filter { bits & $0.flag != 0 }.map(\.name)
    }
}
