import CastdAPI

/// castd's state, followed for as long as the task runs: a Watch that reconnects when castd
/// goes away (with backoff), and the state folded from it by the rule castd keeps it with
/// (``CastdState/apply(_:)``). What cast-mpris and castc's controllers read castd by.
///
/// ```swift
/// await CastdStateWatch().run { update in
///     if case .changed(let state, let devices, _) = update {
///         for id in devices { print(id, state.media[id]?.playerState ?? .idle) }
///     }
/// }
/// ```
public struct CastdStateWatch: Sendable {
    public struct Options: Sendable {
        /// castd's socket; nil finds it by the usual rules (`$CASTD_SOCKET`, the session's, the
        /// system's).
        public var socketPath: String?
        /// The wait before reconnecting: doubles after each failed attempt up to the maximum,
        /// and starts again from the minimum once castd answers.
        public var reconnectMinimum: Duration = .milliseconds(250)
        public var reconnectMaximum: Duration = .seconds(5)

        public init(socketPath: String? = nil) { self.socketPath = socketPath }
    }

    public enum Update: Sendable {
        /// Connected to castd; calls may go on this client until the next `disconnected`.
        case connected(CastdClient)
        /// An event, applied: the state after it, and the devices whose device, session or media
        /// it changed (every device, for a snapshot).
        case changed(CastdState, devices: Set<String>, event: CastdEvent)
        /// castd could not be reached, or the watch ended (`failures`: connection attempts failed
        /// in a row, 0 when a watch that was running ended). The state is empty again; the
        /// next snapshot fills it.
        case disconnected(reason: String, failures: Int)
    }

    public var options: Options

    public init(options: Options = Options()) { self.options = options }

    /// Calls `handle` with each update, in order, on the caller's actor, until the task is
    /// cancelled.
    public func run(
        isolation: isolated (any Actor)? = #isolation, _ handle: (Update) async -> Void
    ) async {
        var delay = options.reconnectMinimum
        var failures = 0
        while !Task.isCancelled {
            var reason: String
            do {
                let client = try await CastdClient.connect(socketPath: options.socketPath)
                failures = 0
                await handle(.connected(client))
                var state = CastdState()
                do {
                    for try await event in client.watch() {
                        let devices = state.applyReportingDevices(event)
                        await handle(.changed(state, devices: devices, event: event))
                        delay = options.reconnectMinimum
                    }
                    reason = "castd ended the watch"
                } catch {
                    reason = "\(error)"
                }
                await client.close()
            } catch {
                failures += 1
                reason = "\(error)"
            }
            if Task.isCancelled { break }
            await handle(.disconnected(reason: reason, failures: failures))
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, options.reconnectMaximum)
        }
    }
}
