import CastdSupport
import CastdAPI

/// Custom channels on one device: who listens on which namespace, and what they are told.
///
/// A listener is attached while castd's session on the device runs an app that declares the
/// listener's namespace; it then receives everything the app sends on that namespace, to castd's
/// sender or broadcast. Each listener has a bounded buffer: one that falls behind loses the
/// oldest messages and is told how many with `lagged`, and nobody else waits for it.
public final class NamespaceListeners: Sendable {
    public static let bufferLimit = 256

    private struct Listener {
        var namespace: String
        var continuation: AsyncStream<CastdChannelEvent>.Continuation
        var dropped: UInt64 = 0
    }

    private struct State {
        var listeners: [UInt64: Listener] = [:]
        var nextID: UInt64 = 1
        /// The session listeners are attached to, if any.
        var session: CastdSession?
    }

    private let state = Locked(State())

    public init() {}

    /// A stream of the namespace's events; it ends when the caller stops iterating.
    public func listen(namespace: String) -> AsyncStream<CastdChannelEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: CastdChannelEvent.self, bufferingPolicy: .bufferingNewest(Self.bufferLimit))
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            state.listeners[state.nextID] = Listener(namespace: namespace, continuation: continuation)
            if let session = state.session, session.namespaces.contains(namespace) {
                var event = CastdChannelEvent()
                event.attached = session
                continuation.yield(event)
            }
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    /// The session's app now runs and castd is connected to it (nil: no session any more).
    func sessionChanged(_ session: CastdSession?) {
        state.withLock { state in
            let previous = state.session
            state.session = session
            for (id, listener) in state.listeners {
                let wasAttached = previous?.namespaces.contains(listener.namespace) ?? false
                let isAttached = session?.namespaces.contains(listener.namespace) ?? false
                if wasAttached, let previous, !isAttached || previous.sessionID != session?.sessionID {
                    var event = CastdChannelEvent()
                    var detached = previous
                    if let session, session.sessionID == previous.sessionID {
                        detached.state = session.state
                        detached.reason = session.reason
                    }
                    event.detached = detached
                    Self.yield(event, to: id, in: &state)
                }
                if isAttached, let session, !wasAttached || previous?.sessionID != session.sessionID {
                    var event = CastdChannelEvent()
                    event.attached = session
                    Self.yield(event, to: id, in: &state)
                }
            }
        }
    }

    /// Delivers one message from the app to every listener of its namespace.
    func deliver(_ message: CastdAppMessage) {
        state.withLock { state in
            for (id, listener) in state.listeners where listener.namespace == message.namespace {
                var event = CastdChannelEvent()
                event.message = message
                Self.yield(event, to: id, in: &state)
            }
        }
    }

    private static func yield(_ event: CastdChannelEvent, to id: UInt64, in state: inout State) {
        guard var listener = state.listeners[id] else { return }
        if listener.dropped > 0 {
            var lagged = CastdChannelEvent()
            lagged.lagged.dropped = listener.dropped
            if case .dropped = listener.continuation.yield(lagged) {
                listener.dropped += 1
            } else {
                listener.dropped = 0
            }
        }
        if case .dropped = listener.continuation.yield(event) {
            listener.dropped += 1
        }
        state.listeners[id] = listener
    }

    /// Whether any client listens (then the device's controller is kept).
    var hasListeners: Bool { state.withLock { !$0.listeners.isEmpty } }

    func finishAll() {
        let continuations = state.withLock { state in
            defer { state.listeners.removeAll() }
            return state.listeners.values.map(\.continuation)
        }
        for continuation in continuations { continuation.finish() }
    }
}
