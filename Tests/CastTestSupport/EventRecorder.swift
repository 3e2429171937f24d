import CastdSupport
import CastDevices
import CastdAPI
import Foundation

/// Records every event castd's store publishes, from the moment it is made, so that a test can
/// wait for an event (with a deadline) and then look at the whole order.
public final class EventRecorder: Sendable {
    private final class Storage: Sendable {
        let events = Locked<[(at: ContinuousClock.Instant, event: CastdEvent)]>([])
    }
    private let storage = Storage()
    private let task: Task<Void, Never>

    public init(_ store: CastdStateStore) {
        let subscription = store.watch()
        let storage = self.storage
        task = Task {
            for await event in subscription {
                storage.events.withLock { $0.append((.now, event)) }
            }
        }
    }

    deinit { task.cancel() }

    public var all: [CastdEvent] { storage.events.withLock { $0.map(\.event) } }

    /// Session events of `deviceID` (every device when nil), in order.
    public func sessions(of deviceID: String? = nil) -> [CastdSession] {
        all.compactMap { event in
            guard case .session(let session) = event.kind, deviceID == nil || session.deviceID == deviceID else {
                return nil
            }
            return session
        }
    }

    /// Waits for the first event (recorded so far or to come) that `match` accepts, and returns
    /// it with when it was recorded.
    @discardableResult
    public func first<T>(
        _ what: String, timeout: Duration = .seconds(15), _ match: @escaping (CastdEvent) -> T?
    ) async throws -> (T, ContinuousClock.Instant) {
        var found: (T, ContinuousClock.Instant)?
        try await eventually(timeout: timeout, what) {
            found = storage.events.withLock { recorded in
                for (at, event) in recorded { if let value = match(event) { return (value, at) } }
                return nil
            }
            return found != nil
        }
        return found!
    }

    /// Waits for a session event of `deviceID` in `state`.
    @discardableResult
    public func session(
        _ state: Castd_V1_SessionState, of deviceID: String? = nil, timeout: Duration = .seconds(15)
    ) async throws -> (CastdSession, ContinuousClock.Instant) {
        try await first("a \(state) session", timeout: timeout) { event in
            guard case .session(let session) = event.kind, session.state == state,
                deviceID == nil || session.deviceID == deviceID
            else { return nil }
            return session
        }
    }
}
