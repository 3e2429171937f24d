import CastdAPI
import NIOCore
import Synchronization

/// A connection as it is accepted: who is at the other end, and what they may do.
///
/// One that castd stops accepting before it serves it (the task serving the socket was cancelled
/// while the connection waited to be taken) is closed when it is dropped: NIO requires an async
/// channel's writer to be finished, and traps if it is not.
final class AcceptedConnection: Sendable {
    let channel: NIOAsyncChannel<ClientFrame, ByteBuffer>
    let peer: PeerCredentials
    /// `.unspecified`: a stranger.
    let access: Castd_V1_Access
    /// Why the connection is refused (a stranger, or over its uid's limit), counted already
    /// when nil; a refused connection's channel has no frame decoder.
    let refusal: CastdError?
    /// Opened once the connection's task is ready: then its event loop answers GetStatus itself.
    let inline: InlineGate
    private let served = Atomic<Bool>(false)
    /// What undoes the accepting (the uid's connection count) should the connection never be served.
    private let unserved: @Sendable () -> Void

    init(
        channel: NIOAsyncChannel<ClientFrame, ByteBuffer>, peer: PeerCredentials, access: Castd_V1_Access,
        refusal: CastdError?, inline: InlineGate, unserved: @escaping @Sendable () -> Void
    ) {
        self.channel = channel
        self.peer = peer
        self.access = access
        self.refusal = refusal
        self.inline = inline
        self.unserved = unserved
    }

    /// The connection is being served: closing it and undoing its accepting are the server's.
    func take() {
        served.store(true, ordering: .sequentiallyConsistent)
    }

    deinit {
        guard !served.load(ordering: .sequentiallyConsistent) else { return }
        // executeThenClose finishes the writer and closes the channel; the task keeps the
        // channel (and so its writer) alive until it has. (swift-nio issue 2637.)
        let channel = self.channel
        Task { try? await channel.executeThenClose { _, _ in } }
        unserved()
    }
}
