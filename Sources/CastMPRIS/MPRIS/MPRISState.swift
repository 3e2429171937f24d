import CastdAPI
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What one device's MPRIS2 player shows: the device as castd describes it, what it plays, and
/// the artwork's file once it is cached. Values, computed into D-Bus properties by
/// ``MPRISProperties``.
public struct MPRISPlayerSnapshot: Sendable, Equatable {
    public var device: CastdDevice
    public var media: CastdMediaStatus
    /// The cached artwork's path, once it is on disk.
    public var artworkPath: String?

    public init(device: CastdDevice, media: CastdMediaStatus, artworkPath: String? = nil) {
        self.device = device
        self.media = media
        self.artworkPath = artworkPath
    }
}

/// The mapping from castd's state to the properties of MPRIS2's two interfaces, as the
/// specification (https://specifications.freedesktop.org/mpris-spec/latest/) names them.
public enum MPRISProperties {
    public static let rootInterface = "org.mpris.MediaPlayer2"
    public static let playerInterface = "org.mpris.MediaPlayer2.Player"
    public static let objectPath = "/org/mpris/MediaPlayer2"
    /// The track id MPRIS reserves for "no track".
    public static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"
    /// The playback rates castd takes (``CastdValidation/playbackRates``).
    public static let minimumRate = CastdValidation.playbackRates.lowerBound
    public static let maximumRate = CastdValidation.playbackRates.upperBound

    /// What the Default Media Receiver plays (Google's list of supported media), by scheme and
    /// by type.
    public static let supportedURISchemes = ["http", "https", "file"]
    public static let supportedMIMETypes = [
        "video/mp4", "video/webm", "video/mp2t", "video/x-matroska",
        "audio/mp4", "audio/mpeg", "audio/aac", "audio/flac", "audio/ogg", "audio/wav", "audio/webm",
        "application/x-mpegurl", "application/vnd.apple.mpegurl", "application/dash+xml",
        "application/vnd.ms-sstr+xml",
        "image/jpeg", "image/png", "image/gif", "image/webp", "image/bmp",
    ]

    /// `org.mpris.MediaPlayer2`'s properties.
    public static func root(_ snapshot: MPRISPlayerSnapshot) -> [(String, BusValue)] {
        [
            ("CanQuit", .bool(false)),
            ("CanRaise", .bool(false)),
            ("HasTrackList", .bool(false)),
            ("Identity", .string(identity(snapshot.device))),
            ("DesktopEntry", .string("castd")),
            ("SupportedUriSchemes", .strings(supportedURISchemes)),
            ("SupportedMimeTypes", .strings(supportedMIMETypes)),
        ]
    }

    /// `org.mpris.MediaPlayer2.Player`'s properties but Position, which is read live
    /// (``position(_:at:)``) and is never in PropertiesChanged.
    public static func player(_ snapshot: MPRISPlayerSnapshot) -> [(String, BusValue)] {
        let media = snapshot.media
        return [
            ("PlaybackStatus", .string(playbackStatus(media))),
            ("LoopStatus", .string(loopStatus(media.repeatMode))),
            ("Rate", .double(rate(media))),
            ("Shuffle", .bool(media.repeatMode == .allAndShuffle)),
            ("Metadata", .dictionary(metadata(snapshot))),
            ("Volume", .double(snapshot.device.receiver.volume.level)),
            ("MinimumRate", .double(minimumRate)),
            ("MaximumRate", .double(maximumRate)),
            ("CanGoNext", .bool(canGoNext(media))),
            ("CanGoPrevious", .bool(canGoPrevious(media))),
            ("CanPlay", .bool(canPlay(media))),
            ("CanPause", .bool(canPause(media))),
            ("CanSeek", .bool(canSeek(media))),
            ("CanControl", .bool(true)),
        ]
    }

    public static func identity(_ device: CastdDevice) -> String {
        device.friendlyName.isEmpty ? device.id : device.friendlyName
    }

    /// Playing (BUFFERING and LOADING count: the device is on its way to play), Paused, or
    /// Stopped (IDLE, or nothing known).
    public static func playbackStatus(_ media: CastdMediaStatus) -> String {
        switch media.playerState {
        case .playing, .buffering, .loading: "Playing"
        case .paused: "Paused"
        default: "Stopped"
        }
    }

    public static func loopStatus(_ mode: CastdRepeatMode) -> String {
        switch mode {
        case .single: "Track"
        case .all, .allAndShuffle: "Playlist"
        default: "None"
        }
    }

    /// The repeat mode for LoopStatus `status` (nil: not a LoopStatus), keeping shuffle on for
    /// Playlist if it is on.
    public static func repeatMode(loopStatus status: String, current: CastdRepeatMode) -> CastdRepeatMode? {
        switch status {
        case "None": .off
        case "Track": .single
        case "Playlist": current == .allAndShuffle ? .allAndShuffle : .all
        default: nil
        }
    }

    /// The repeat mode for Shuffle `on`: Cast shuffles only while it repeats the whole queue.
    public static func repeatMode(shuffle on: Bool, current: CastdRepeatMode) -> CastdRepeatMode {
        if on { return .allAndShuffle }
        return current == .allAndShuffle ? .all : current
    }

    public static func rate(_ media: CastdMediaStatus) -> Double {
        media.playbackRate > 0 ? media.playbackRate : 1
    }

    /// The position in microseconds at `date`, as castd's status estimates it.
    public static func position(_ media: CastdMediaStatus, at date: Date = .now) -> Int64 {
        microseconds(media.estimatedPosition(at: date))
    }

    static func microseconds(_ seconds: Double) -> Int64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return seconds >= Double(Int64.max / 1_000_000) ? Int64.max : Int64(seconds * 1_000_000)
    }

    /// The track's length in microseconds; nil for a live stream or an unknown duration.
    public static func length(_ media: CastdMediaStatus) -> Int64? {
        guard media.media.streamType != .live, media.media.duration > 0 else { return nil }
        return microseconds(media.media.duration)
    }

    /// A stable object path for what plays: the queue item (`…/item/ID`) or, outside a queue, the
    /// media session (`…/media/ID`).
    public static func trackID(_ media: CastdMediaStatus) -> String {
        if media.currentItemID != 0 { return "/org/castd/track/item\(UInt64(bitPattern: media.currentItemID))" }
        if media.mediaSessionID != 0 { return "/org/castd/track/media\(UInt64(bitPattern: media.mediaSessionID))" }
        return noTrack
    }

    public static func metadata(_ snapshot: MPRISPlayerSnapshot) -> [(String, BusValue)] {
        let media = snapshot.media
        let info = media.media
        let meta = info.metadata
        var result: [(String, BusValue)] = [("mpris:trackid", .objectPath(trackID(media)))]
        if let length = length(media) { result.append(("mpris:length", .int64(length))) }
        if !meta.title.isEmpty { result.append(("xesam:title", .string(meta.title))) }
        if !meta.artist.isEmpty { result.append(("xesam:artist", .strings([meta.artist]))) }
        if !meta.albumName.isEmpty { result.append(("xesam:album", .string(meta.albumName))) }
        if !meta.albumArtist.isEmpty { result.append(("xesam:albumArtist", .strings([meta.albumArtist]))) }
        if meta.trackNumber > 0 { result.append(("xesam:trackNumber", .int32(Int32(clamping: meta.trackNumber)))) }
        if meta.discNumber > 0 { result.append(("xesam:discNumber", .int32(Int32(clamping: meta.discNumber)))) }
        let url = info.contentURL.isEmpty ? info.contentID : info.contentURL
        if url.hasPrefix("http://") || url.hasPrefix("https://") { result.append(("xesam:url", .string(url))) }
        if let path = snapshot.artworkPath { result.append(("mpris:artUrl", .string(fileURL(path)))) }
        return result
    }

    /// The metadata texts of `media` that D-Bus clients get cut (``BusText``): name and size in
    /// bytes, for a log line.
    public static func cutTexts(_ media: CastdMediaStatus) -> [(field: String, bytes: Int)] {
        let meta = media.media.metadata
        return [
            ("xesam:title", meta.title), ("xesam:artist", meta.artist), ("xesam:album", meta.albumName),
            ("xesam:albumArtist", meta.albumArtist),
        ].filter { BusText.needsCut($0.1) }.map { ($0.0, $0.1.utf8.count) }
    }

    /// A `file://` URL for an absolute path, percent-encoding what a URL cannot hold.
    public static func fileURL(_ path: String) -> String {
        var url = "file://"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                UInt8(ascii: "."), UInt8(ascii: "~"):
                url.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                url += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return url
    }

    /// The ids of the queue in play order: castd's whole order once it has it, else the items the
    /// device sent.
    static func queueOrder(_ media: CastdMediaStatus) -> [Int64] {
        media.queueItemIds.isEmpty ? media.items.map(\.itemID) : media.queueItemIds
    }

    static func repeatsQueue(_ media: CastdMediaStatus) -> Bool {
        media.repeatMode == .all || media.repeatMode == .allAndShuffle
    }

    public static func canGoNext(_ media: CastdMediaStatus) -> Bool {
        guard media.supports(.queueNext) else { return false }
        let order = queueOrder(media)
        guard let index = order.firstIndex(of: media.currentItemID) else { return false }
        return index + 1 < order.count || (repeatsQueue(media) && order.count > 1)
    }

    public static func canGoPrevious(_ media: CastdMediaStatus) -> Bool {
        guard media.supports(.queuePrevious) else { return false }
        let order = queueOrder(media)
        guard let index = order.firstIndex(of: media.currentItemID) else { return false }
        return index > 0 || (repeatsQueue(media) && order.count > 1)
    }

    /// Whether there is media to play or resume.
    public static func canPlay(_ media: CastdMediaStatus) -> Bool {
        media.mediaSessionID != 0 && media.playerState != .unknown
    }

    public static func canPause(_ media: CastdMediaStatus) -> Bool {
        media.supports(.pause) && media.mediaSessionID != 0 && media.playerState != .idle
    }

    /// Seeking needs the device's SEEK and somewhere to seek: a duration, or a live stream's
    /// seekable range.
    public static func canSeek(_ media: CastdMediaStatus) -> Bool {
        guard media.supports(.seek), media.mediaSessionID != 0 else { return false }
        if media.media.streamType == .live || media.media.duration <= 0 {
            return media.hasLiveSeekableRange && media.liveSeekableRange.end > media.liveSeekableRange.start
        }
        return true
    }

    /// The position to announce with Seeked when `new` follows `old`: when the position moved
    /// otherwise than playing at the rate would move it (a seek by any client; a track that
    /// starts elsewhere than at its beginning). Ordinary progress, a pause and a resume are not
    /// jumps. `tolerance` is in seconds: the devices report positions to a fraction of one.
    public static func seekedPosition(
        from old: CastdMediaStatus, to new: CastdMediaStatus, tolerance: Double = 1
    ) -> Int64? {
        guard new.mediaSessionID != 0, new.playerState != .idle else { return nil }
        if trackID(old) != trackID(new) {
            return new.currentTime > tolerance ? microseconds(new.currentTime) : nil
        }
        let at = Date(timeIntervalSince1970: Double(new.updatedAtMs) / 1000)
        let expected = old.estimatedPosition(at: at)
        return abs(new.currentTime - expected) > tolerance ? microseconds(new.currentTime) : nil
    }

    /// The properties of `new` that differ from `old`'s, in `new`'s order.
    public static func changes(from old: [(String, BusValue)], to new: [(String, BusValue)]) -> [(String, BusValue)] {
        new.filter { name, value in old.first(where: { $0.0 == name })?.1 != value }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
