import CastClient
import CastdAPI
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A method call or property write a D-Bus client made on a player.
public enum MPRISCall: Sendable, Equatable {
    case play, pause, playPause, stop, next, previous
    /// `Seek(x Offset)`: microseconds, relative.
    case seek(offset: Int64)
    /// `SetPosition(o TrackId, x Position)`.
    case setPosition(trackID: String, position: Int64)
    case openURI(String)
    case setLoopStatus(String)
    case setShuffle(Bool)
    case setRate(Double)
    case setVolume(Double)
}

/// What castd is asked to do for a call.
public enum MPRISAction: Sendable, Equatable {
    case play, pause, stop, next, previous
    /// Seconds from the start.
    case seek(to: Double)
    case load(url: String)
    /// A file or folder on this machine (`OpenUri("file:///…")`): castd serves it; a folder's
    /// playable files are queued.
    case loadFile(path: String)
    case setRepeatMode(CastdRepeatMode)
    case setRate(Double)
    case setVolume(Double)
}

extension MPRISProperties {
    /// The action for `call` on what `snapshot` shows at `date`, by the specification's rules:
    /// nil when the call has no effect (Next with nothing next, SetPosition for a stale track, a
    /// position past the end, …), which is answered with success; a ``BusError`` when the
    /// specification says the call fails.
    public static func action(
        for call: MPRISCall, on snapshot: MPRISPlayerSnapshot, at date: Date = .now
    ) throws(BusError) -> MPRISAction? {
        let media = snapshot.media
        switch call {
        case .play:
            return canPlay(media) ? .play : nil
        case .pause:
            return canPause(media) ? .pause : nil
        case .playPause:
            guard canPause(media) else {
                throw BusError(name: "org.freedesktop.DBus.Error.NotSupported", message: "this media cannot be paused")
            }
            return playbackStatus(media) == "Playing" ? .pause : .play
        case .stop:
            return media.mediaSessionID != 0 ? .stop : nil
        case .next:
            return canGoNext(media) ? .next : nil
        case .previous:
            return canGoPrevious(media) ? .previous : nil
        case .seek(let offset):
            guard canSeek(media) else { return nil }
            let target = media.estimatedPosition(at: date) + Double(offset) / 1_000_000
            if let length = length(media), target > Double(length) / 1_000_000 {
                return canGoNext(media) ? .next : nil
            }
            return .seek(to: max(0, target))
        case .setPosition(let trackID, let position):
            guard canSeek(media), trackID == self.trackID(media), position >= 0 else { return nil }
            if let length = length(media), position > length { return nil }
            return .seek(to: Double(position) / 1_000_000)
        case .openURI(let uri):
            guard supportedURISchemes.contains(where: { uri.lowercased().hasPrefix($0 + "://") }) else {
                throw BusError(
                    name: "org.freedesktop.DBus.Error.NotSupported",
                    message: "castd plays http, https and file URIs, not \(uri.prefix(64))")
            }
            guard uri.lowercased().hasPrefix("file:") else { return .load(url: uri) }
            do {
                return .loadFile(path: try LocalFiles.path(uri))
            } catch {
                throw BusError.invalidArguments(error.message)
            }
        case .setLoopStatus(let status):
            guard let mode = repeatMode(loopStatus: status, current: media.repeatMode) else {
                throw BusError.invalidArguments("LoopStatus is None, Track or Playlist, not \(status.prefix(64))")
            }
            return mode == media.repeatMode ? nil : .setRepeatMode(mode)
        case .setShuffle(let on):
            let mode = repeatMode(shuffle: on, current: media.repeatMode)
            return mode == media.repeatMode ? nil : .setRepeatMode(mode)
        case .setRate(let rate):
            guard rate.isFinite else { throw BusError.invalidArguments("Rate must be a number") }
            // The specification: a rate of 0 acts as Pause; others are held to the range.
            if rate == 0 { return canPause(media) ? .pause : nil }
            return .setRate(min(max(rate, minimumRate), maximumRate))
        case .setVolume(let level):
            guard level.isFinite else { throw BusError.invalidArguments("Volume must be a number") }
            return .setVolume(min(max(level, 0), 1))
        }
    }
}
