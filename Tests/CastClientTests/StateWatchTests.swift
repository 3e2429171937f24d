import CastClient
import CastTestSupport
import CastdAPI
import CastdSupport
import Testing

/// CastdStateWatch: the folded state of a Watch that reconnects. castd goes away and comes back
/// on the same socket: the watch says it lost castd, forgets the state, connects again and
/// folds the new castd's snapshot.
struct StateWatchTests {
    final class Recorder: Sendable {
        let updates = Locked<[String]>([])
        let state = Locked(CastdState())
        func saw(_ text: String) -> Bool { updates.withLock { $0.contains(text) } }
    }

    @Test func aWatchThatReconnectsFoldsEachCastdsState() async throws {
        try await withTemporaryDirectory { directory in
            let socket = directory + "/castd.sock"
            let recorder = Recorder()
            var options = CastdStateWatch.Options(socketPath: socket)
            options.reconnectMinimum = .milliseconds(20)
            options.reconnectMaximum = .milliseconds(200)
            let watching = Task {
                await CastdStateWatch(options: options).run { update in
                    switch update {
                    case .connected:
                        recorder.updates.withLock { $0.append("connected") }
                    case .changed(let state, let devices, _):
                        recorder.state.withLock { $0 = state }
                        recorder.updates.withLock { $0.append("changed \(devices.sorted())") }
                    case .disconnected(_, let failures):
                        recorder.state.withLock { $0 = CastdState() }
                        recorder.updates.withLock { $0.append(failures == 0 ? "lost" : "unreachable") }
                    }
                }
            }
            defer { watching.cancel() }
            try await eventually(timeout: .seconds(20), "the watch to find no castd") { recorder.saw("unreachable") }
            try await withDaemon(socketPath: socket) { _, store in
                store.updateDevice(id: "first") { $0.friendlyName = "First" }
                try await eventually(timeout: .seconds(20), "the first castd's device") {
                    recorder.state.withLock { $0.devices["first"]?.friendlyName } == "First"
                }
            }
            try await eventually(timeout: .seconds(20), "the watch to lose castd") { recorder.saw("lost") }
            #expect(recorder.state.withLock { $0.devices.isEmpty }, "the state is forgotten with castd")
            try await withDaemon(socketPath: socket) { _, store in
                store.updateDevice(id: "second") { $0.friendlyName = "Second" }
                try await eventually(timeout: .seconds(20), "the second castd's device") {
                    recorder.state.withLock { $0.devices.keys.sorted() } == ["second"]
                }
            }
            #expect(recorder.updates.withLock { $0.filter { $0 == "connected" }.count } == 2)
        }
    }
}
