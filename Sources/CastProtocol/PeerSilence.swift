import NIOCore

/// How long the other end of a CastV2 link has said nothing, counting only the time this end
/// was reading: what both sides' heartbeats close a link on.
///
/// Both ends read through a pipeline with back-pressure (`NIOAsyncChannel`): while the
/// application has not taken what was read, the channel asks the socket for nothing more, and
/// what the peer sends waits in the kernel. That time is this end's, not the peer's. Counted as
/// the peer's silence, a local consumer held up for 10 s (a busy actor, a starved thread pool)
/// closed a link to a device that was sending all along.
///
/// A heartbeat handler feeds it the events it sees: each message (`heard`), the end of each
/// read (`channelReadComplete`: reading pauses until the next `read`), and each `read` that comes
/// down the pipeline (reading goes on). A handler below `NIOAsyncChannel`'s sees a `read` only
/// when the application wants more.
public struct PeerSilence: Sendable {
    /// The start of the silence, moved later by the time reading was paused.
    private var since: NIODeadline
    private var pausedAt: NIODeadline?

    public init(now: NIODeadline) { since = now }

    /// A message arrived.
    public mutating func heard(at now: NIODeadline) {
        since = now
        if pausedAt != nil { pausedAt = now }
    }

    /// A read ended; until the next ``readRequested(at:)``, this end is not listening.
    public mutating func readCompleted(at now: NIODeadline) {
        if pausedAt == nil { pausedAt = now }
    }

    /// A read was asked for: this end listens again.
    public mutating func readRequested(at now: NIODeadline) {
        guard let paused = pausedAt else { return }
        since = since + (now - paused)
        pausedAt = nil
    }

    /// The peer's silence at `now`: time since it was last heard, less the time not listening.
    public func length(at now: NIODeadline) -> TimeAmount {
        max(.zero, (pausedAt ?? now) - since)
    }
}
