/// The bits of `supportedMediaCommands` the emulated player sets, as the Cast media protocol
/// defines them.
///
/// The emulator keeps its own table, apart from castd's (`CastdMediaCommand` in CastdAPI, the
/// one castd names commands by): it is the device, an implementation of the protocol of its own,
/// so that castd agrees with it because both follow the protocol, not because they share a
/// constant (the same reason pychromecast drives it too).
public enum CastMediaCommand {
    public static let pause: Int64 = 1
    public static let seek: Int64 = 2
    public static let streamVolume: Int64 = 4
    public static let streamMute: Int64 = 8
    public static let skipForward: Int64 = 16
    public static let skipBackward: Int64 = 32
    public static let queueNext: Int64 = 64
    public static let queuePrevious: Int64 = 128
    public static let queueShuffle: Int64 = 256
    public static let skipAd: Int64 = 512
    public static let queueRepeatAll: Int64 = 1024
    public static let queueRepeatOne: Int64 = 2048
    public static let editTracks: Int64 = 4096
    public static let playbackRate: Int64 = 8192
}
