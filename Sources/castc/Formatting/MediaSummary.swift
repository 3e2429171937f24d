import CastClient
import Foundation

/// Media and sessions in words.
enum MediaSummary {
    /// `playing`, `paused`, `idle (finished)`, …
    static func state(_ status: CastdMediaStatus) -> String {
        let name: String
        switch status.playerState {
        case .unknown: name = "unknown"
        case .idle: name = "idle"
        case .playing: name = "playing"
        case .paused: name = "paused"
        case .buffering: name = "buffering"
        case .loading: name = "loading"
        case .UNRECOGNIZED(let value): name = "state \(value)"
        }
        if status.playerState == .idle, !status.idleReason.isEmpty {
            return "\(name) (\(status.idleReason.lowercased()))"
        }
        return name
    }

    /// `1:23 / 9:56`, `1:23 (live)`, or `1:23` when the duration is unknown. With `date`, the
    /// position estimated for then; without, the position as reported.
    static func position(_ status: CastdMediaStatus, at date: Date?) -> String {
        let seconds = date.map { status.estimatedPosition(at: $0) } ?? status.currentTime
        let position = PlaybackTime.format(seconds)
        if status.media.streamType == .live { return "\(position) (live)" }
        if status.media.duration > 0 { return "\(position) / \(PlaybackTime.format(status.media.duration))" }
        return position
    }

    /// The title, else the content id (usually the URL), else nil.
    static func title(_ status: CastdMediaStatus) -> String? {
        guard status.hasMedia else { return nil }
        if !status.media.metadata.title.isEmpty { return status.media.metadata.title }
        return status.media.contentID.isEmpty ? nil : status.media.contentID
    }

    /// One line: `playing  1:23 / 9:56  Big Buck Bunny`.
    static func line(_ status: CastdMediaStatus, at date: Date?) -> String {
        var parts = [state(status)]
        if status.hasMedia { parts.append(position(status, at: date)) }
        if let title = title(status) { parts.append(title) }
        return parts.joined(separator: "  ")
    }

    /// `Default Media Receiver (CC1AD845), started`, with how it came about or ended.
    static func session(_ session: CastdSession) -> String {
        let app = session.displayName.isEmpty ? session.appID : "\(session.displayName) (\(session.appID))"
        var text = "\(app), \(state(session.state))"
        if session.joined { text += ", joined" }
        if !session.reason.isEmpty { text += ": \(session.reason)" }
        return text
    }

    static func state(_ state: CastdSessionState) -> String {
        switch state {
        case .unspecified: return "unknown"
        case .starting: return "starting"
        case .started: return "started"
        case .startFailed: return "failed to start"
        case .ending: return "ending"
        case .ended: return "ended"
        case .suspended: return "suspended"
        case .resuming: return "resuming"
        case .resumed: return "resumed"
        case .UNRECOGNIZED(let value): return "state \(value)"
        }
    }

    /// `40%`, `40%, muted`
    static func volume(_ volume: CastdVolume) -> String {
        VolumeLevel.format(volume.level) + (volume.muted ? ", muted" : "")
    }
}
