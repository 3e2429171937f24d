import CastClient
import Foundation

/// Figure 6: systemd socket activation, first connection to first reply.
struct ColdStartFigure {
    let environment: BenchEnvironment
    /// A device castd is told about (as a configured system would be); static devices are linked
    /// on first use, so it costs nothing at start.
    let deviceAddress: String

    func run() async throws -> Figure {
        var figure = Figure(
            number: 6, title: "Socket-activated cold start",
            method: """
                `systemd-socket-activate -l SOCKET castd …` holds the socket; the driver connects, which makes it \
                exec castd (LISTEN_FDS=1), and sends GetStatus through a new `CastdClient`: timed from just before \
                the connect to the reply. castd is configured as in the figures above (an empty configuration \
                file, no state, one static device, the emulators' root trusted, discovery off). Every run is a \
                fresh activation (a new socket, a new castd); the executable is in the page cache after the \
                first, as on a machine that runs castd daily.
                """)
        let runs = environment.runs(30, quick: 3)
        var window = LoadWindow(live: [])
        var samples: [UInt64] = []
        for index in 0..<runs {
            samples.append(try await once(index))
        }
        window.finish(live: [])
        figure.load = window
        let cold = Samples(samples)
        figure.rows.append(
            .distribution(
                "first connection → first reply (GetStatus)", cold, target: "median ≤ 150 ms",
                met: cold.median <= 150_000_000))
        return figure
    }

    private func once(_ index: Int) async throws -> UInt64 {
        let socket = environment.workDirectory + "/cold-\(index).sock"
        let activator = try LongProcess(
            [
                "/usr/bin/systemd-socket-activate", "-l", socket, environment.castd, "--mode", "user", "--socket",
                socket,
                "--config", environment.emptyConfig, "--state-directory", "", "--trust-root", environment.rootPEM,
                "--no-discovery", "--device", "Bench TV=\(deviceAddress)",
            ],
            log: environment.workDirectory + "/cold-\(index).log")
        do {
            try await waitUntil("systemd-socket-activate to listen on \(socket)", poll: .milliseconds(2)) {
                guard activator.isRunning else {
                    throw BenchError("systemd-socket-activate exited: \(activator.logTail())")
                }
                return FileManager.default.fileExists(atPath: socket)
            }
            // systemd-socket-activate has bound and listens once the file exists; give it a moment
            // to reach accept() so that the first connection is the one that activates.
            try await Task.sleep(for: .milliseconds(20))
            let started = monotonicNanos()
            let client = try await CastdClient.connect(socketPath: socket)
            let status = try await client.status()
            let answered = monotonicNanos()
            await client.close()
            guard status.daemon.socketActivated else {
                throw BenchError("castd did not report socket activation")
            }
            await activator.stop()
            try? FileManager.default.removeItem(atPath: socket)
            return answered - started
        } catch {
            await activator.stop()
            throw error
        }
    }
}
