import CastDevices
import CastdAPI
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Keeps the service manager informed: READY=1 once the socket listens, a STATUS= line a
/// person can read whenever the devices, sessions or clients change, WATCHDOG=1 at half the
/// watchdog interval while castd's event loops answer, and STOPPING=1 as soon as shutdown
/// begins. A `Service`: place it last in the group, so it hears of the shutdown first.
public final class DaemonStatusReporter: Service, Sendable {
    private let store: CastdStateStore
    private let socketPath: String
    private let clients = Atomic<Int>(0)
    private let isListening = Atomic<Bool>(false)
    private let nudges = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))

    public init(store: CastdStateStore, socketPath: String) {
        self.store = store
        self.socketPath = socketPath
    }

    /// The server listens: READY=1.
    public func listening() {
        isListening.store(true, ordering: .sequentiallyConsistent)
        SystemdNotifier.ready(status: statusText())
    }

    public func clientsChanged(_ count: Int) {
        clients.store(count, ordering: .relaxed)
        nudges.continuation.yield()
    }

    /// "Serving /run/castd/castd.sock: 2 devices (1 connected), 1 session, 3 clients"
    public func statusText() -> String {
        let snapshot = store.snapshot()
        let connected = snapshot.devices.filter { $0.linkState == .connected }.count
        let sessions = snapshot.sessions.filter(\.isOpen).count
        return "Serving \(socketPath): "
            + SystemdNotifier.describe(
                devices: snapshot.devices.count, connected: connected, sessions: sessions,
                clients: clients.load(ordering: .relaxed))
    }

    public func run() async throws {
        await withDiscardingTaskGroup { group in
            if let interval = SystemdNotifier.watchdogInterval {
                group.addTask { await Self.pingWatchdog(every: interval) }
            }
            let store = self.store
            let nudges = self.nudges.continuation
            // Status lines follow the store's changes, when a service manager is there to read them.
            if SystemdNotifier.managerListens {
                group.addTask {
                    let subscription = store.watch()
                    await withTaskCancellationHandler {
                        for await _ in subscription { nudges.yield() }
                    } onCancel: {
                        subscription.cancel()
                    }
                }
                group.addTask { await self.reportChanges() }
            }
            try? await gracefulShutdown()
            SystemdNotifier.stopping(status: "Stopping: finishing calls; apps on the devices keep running")
            group.cancelAll()
        }
    }

    private func reportChanges() async {
        var last = ""
        for await _ in nudges.stream {
            guard isListening.load(ordering: .sequentiallyConsistent) else { continue }
            let text = statusText()
            if text != last {
                SystemdNotifier.status(text)
                last = text
            }
        }
    }

    /// WATCHDOG=1 each interval, after a round trip through an event loop: a castd whose event
    /// loops are stuck stops pinging, and systemd restarts it.
    private static func pingWatchdog(every interval: Duration) async {
        while !Task.isCancelled {
            do {
                try await MultiThreadedEventLoopGroup.singleton.any().submit {}.get()
            } catch {
                return
            }
            SystemdNotifier.watchdog()
            do { try await Task.sleep(for: interval) } catch { return }
        }
    }
}
