import CastClient
import CastDevices
import CastEmulator
import CastProtocol
import CastdSupport
import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// Read calls that ask devices which apps they run (GetAppAvailability, ListDevices with app
/// ids) open links to the devices castd is not connected to: only a few at once (SECURITY.md).
/// Measured at the devices: an attempt is in flight there from castd's device-authentication
/// challenge to the device's answer to castd's first GET_STATUS, which the devices delay, so
/// that attempts made at once overlap.
struct ReadCallLinkTests {
    /// Link attempts the emulated devices see in flight, and the most at once.
    final class AttemptGauge: Sendable {
        private struct State {
            var open: Set<String> = []
            var peak = 0
            var attempts = 0
        }
        private let state = Locked(State())

        /// The tap for device `index`.
        func tap(_ index: Int) -> EmulatorMessageTap {
            { [self] direction, connection, message in
                let key = "\(index)/\(connection)"
                if direction == .received, message.namespace == CastNamespace.deviceAuth {
                    state.withLock { state in
                        state.open.insert(key)
                        state.attempts += 1
                        state.peak = max(state.peak, state.open.count)
                    }
                } else if direction == .sent, message.namespace == CastNamespace.receiver,
                    message.payloadUtf8.contains("\"RECEIVER_STATUS\"")
                {
                    _ = state.withLock { $0.open.remove(key) }
                }
            }
        }

        var peak: Int { state.withLock { $0.peak } }
        var attempts: Int { state.withLock { $0.attempts } }
        func reset() { state.withLock { $0 = State() } }
    }

    /// `count` emulated devices, each slow to answer (so attempts overlap); the odd ones cannot
    /// run the Default Media Receiver.
    func withDevices<T>(
        _ count: Int, gauge: AttemptGauge, _ body: ([StaticDevice]) async throws -> T, _ made: [StaticDevice] = []
    ) async throws -> T {
        guard made.count < count else { return try await body(made) }
        var configuration = EmulatorConfiguration()
        configuration.name = "TV \(made.count)"
        configuration.replyDelay = .milliseconds(300)
        configuration.messageTap = gauge.tap(made.count)
        if made.count % 2 == 1 {
            configuration.apps = EmulatorApp.builtIn.filter { $0.appID != CastAppID.defaultMediaReceiver }
        }
        return try await withEmulator(configuration) { _, endpoints in
            let device = StaticDevice(
                name: "TV \(made.count)", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            return try await withDevices(count, gauge: gauge, body, made + [device])
        }
    }

    @Test func readCallsOpenOnlyAFewLinksAtOnceAndStillAnswerRight() async throws {
        let gauge = AttemptGauge()
        let limit = 2
        try await withDevices(6, gauge: gauge) { devices in
            let able = Set(devices.enumerated().filter { $0.offset % 2 == 0 }.compactMap(\.element.name))

            // ListDevices with an app id, on a castd connected to none of them. Three rounds of
            // two attempts, under whatever else runs: more than castd's 5 s for an answer on a
            // loaded machine, so the test gives each device longer.
            try await withDaemon(
                devices: devices, readCallLinkAttempts: limit, appAnswerDeadline: Duration.seconds(60).scaledForTests
            ) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    var request = Castd_V1_ListDevicesRequest()
                    request.appIds = [CastAppID.defaultMediaReceiver]
                    let answer = try await client.unary(.listDevices, request, as: Castd_V1_ListDevicesResponse.self)
                    #expect(Set(answer.devices.map(\.friendlyName)) == able)
                }
            }
            #expect(gauge.attempts == 6, "one attempt per device")
            #expect(gauge.peak <= limit, "\(gauge.peak) link attempts at once")
            print("ListDevices with app ids: at most \(gauge.peak) of 6 link attempts at once (limit \(limit))")

            // GetAppAvailability for every device at once, on a new castd.
            gauge.reset()
            try await withDaemon(devices: devices, readCallLinkAttempts: limit) { socket, _ in
                try await CastdClient.withConnection(socketPath: socket) { client in
                    let answers = try await withThrowingTaskGroup(of: (String, [String: Bool]).self) { group in
                        for device in devices {
                            group.addTask {
                                var request = Castd_V1_AppAvailabilityRequest()
                                request.device = device.name ?? ""
                                request.appIds = [CastAppID.defaultMediaReceiver, "NOPE1234"]
                                let answer = try await client.unary(
                                    .getAppAvailability, request, as: Castd_V1_AppAvailabilityResponse.self)
                                return (device.name ?? "", answer.available)
                            }
                        }
                        return try await group.reduce(into: [String: [String: Bool]]()) { $0[$1.0] = $1.1 }
                    }
                    for name in devices.compactMap(\.name) {
                        let canRun = able.contains(name)
                        #expect(
                            answers[name] == [CastAppID.defaultMediaReceiver: canRun, "NOPE1234": false], "\(name)")
                    }
                }
            }
            #expect(gauge.attempts == 6)
            #expect(gauge.peak <= limit, "\(gauge.peak) link attempts at once")
            print("GetAppAvailability: at most \(gauge.peak) of 6 link attempts at once (limit \(limit))")
        }
    }
}

/// The places themselves: first come, first served; a waiter that gives up leaves no place
/// taken.
struct LinkAttemptLimiterTests {
    @Test func waitersAreLetInInOrderAndACancelledOneTakesNothing() async throws {
        let limiter = LinkAttemptLimiter(limit: 1)
        try await limiter.acquire()
        let order = Locked<[Int]>([])
        let (admitted, admittedContinuation) = AsyncStream.makeStream(of: Int.self)
        let first = Task {
            try await limiter.acquire()
            order.withLock { $0.append(1) }
            admittedContinuation.yield(1)
        }
        try await eventually("the first waiter to wait") { limiter.waiting == 1 }
        let cancelled = Task { try await limiter.acquire() }
        try await eventually("the second waiter to wait") { limiter.waiting == 2 }
        let third = Task {
            try await limiter.acquire()
            order.withLock { $0.append(3) }
            admittedContinuation.yield(3)
        }
        try await eventually("the third waiter to wait") { limiter.waiting == 3 }

        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(limiter.waiting == 2 && limiter.inUse == 1)

        var iterator = admitted.makeAsyncIterator()
        limiter.release()  // to the first waiter
        #expect(await iterator.next() == 1)
        limiter.release()  // to the third: the cancelled one is gone
        #expect(await iterator.next() == 3)
        try await first.value
        try await third.value
        #expect(order.withLock { $0 } == [1, 3] && limiter.inUse == 1)
        limiter.release()
        #expect(limiter.inUse == 0)
    }
}
