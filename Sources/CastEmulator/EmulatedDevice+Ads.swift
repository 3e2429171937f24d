import CastProtocol

/// SKIP_AD: ends the playing ad clip once it is skippable.
extension EmulatedDevice {
    /// No ad playing: INVALID_PLAYER_STATE. An ad that is not skippable (yet, or ever):
    /// INVALID_REQUEST INVALID_COMMAND, the command being unavailable (SKIP_AD is not in
    /// `supportedMediaCommands` then). Otherwise the clip ends: the break's next clip plays, or
    /// the content resumes (a skipped post-roll ends the item).
    mutating func skipAd(_ command: MediaCommand, into outcome: inout DeviceOutcome) -> MediaCommandResult {
        guard let session = player, let ad = session.ad else { return .refused(.invalidPlayerState) }
        guard session.isSkippable(at: command.now) else { return .refused(.invalidRequest("INVALID_COMMAND")) }
        outcome.note(.info, "media session \(session.mediaSessionID): skipped ad clip \(ad.clip.id)")
        if endClip(at: command.now, command.transportID, &outcome) {
            // A post-roll: the item has ended, and what followed has been broadcast.
            let entry =
                player?.statusEntry(at: command.now, includeMedia: true) ?? session.idleEntry(reason: "FINISHED")
            reply(Self.mediaStatus([entry], requestID: command.requestID), to: command, &outcome)
            return .answered
        }
        return .changed(includeMedia: player?.ad == nil)
    }
}
