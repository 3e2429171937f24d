#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension CastdMediaStatus {
    /// The playback position at `date`, in seconds, for showing a live position without asking
    /// the daemon again.
    ///
    /// `current_time` was the position at `updated_at_ms`; while PLAYING, the position advances
    /// by the time elapsed since then × `playback_rate` (a rate of 0, i.e. not reported, counts
    /// as 1). In any other state it stays at `current_time`. The result is clamped to 0 and,
    /// when the duration is known, to the duration.
    public func estimatedPosition(at date: Date = .now) -> Double {
        var position = currentTime + secondsPlayedSinceUpdate(at: date)
        if hasMedia, media.duration > 0 { position = min(position, media.duration) }
        return max(0, position)
    }

    /// How far playback moved from `updated_at_ms` to `date`: while PLAYING, the time elapsed ×
    /// `playback_rate` (0 counts as 1); otherwise, or before the update, 0.
    public func secondsPlayedSinceUpdate(at date: Date) -> Double {
        guard playerState == .playing, updatedAtMs > 0 else { return 0 }
        let elapsed = date.timeIntervalSince1970 - Double(updatedAtMs) / 1000
        let rate = playbackRate > 0 ? playbackRate : 1
        return elapsed > 0 ? elapsed * rate : 0
    }

    /// Seconds from `date` until the ad that plays can be skipped: 0 if it can be skipped now;
    /// nil if no ad plays or it can never be skipped.
    ///
    /// Like ``estimatedPosition(at:)``: `breakStatus.secondsUntilSkippable` held at
    /// `updatedAtMs`; while PLAYING, it counts down by the time elapsed since then ×
    /// `playbackRate` (0 counts as 1).
    public func secondsUntilSkippable(at date: Date = .now) -> Double? {
        guard hasBreakStatus, breakStatus.secondsUntilSkippable >= 0 else { return nil }
        return max(0, breakStatus.secondsUntilSkippable - secondsPlayedSinceUpdate(at: date))
    }
}
