import CastClient
import CastdSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Figure 3: a warm GetStatus through CastClient, against a raw Unix-socket ping-pong of the
/// same bytes between this process and another (the floor).
struct RPCFigure {
    let setup: MainSetup

    /// The bytes one GetStatus call puts on the socket each way, framing included: the request
    /// frame, and the response (a message frame and a status frame).
    static func frameSizes(status: CastdStatusResponse) throws -> (request: Int, response: Int) {
        var start = Castd_V1_CallStart()
        start.method = CastdMethod.getStatus.path
        start.request = try Castd_V1_GetStatusRequest().serializedData()
        var request = Castd_V1_Frame()
        request.callID = 5000  // a typical id: two bytes of varint
        request.start = start
        var message = Castd_V1_Frame()
        message.callID = 5000
        message.message = try status.serializedData()
        var end = Castd_V1_Frame()
        end.callID = 5000
        end.status = Castd_V1_Status()
        let requestBytes: [UInt8] = try request.serializedBytes()
        let messageBytes: [UInt8] = try message.serializedBytes()
        let endBytes: [UInt8] = try end.serializedBytes()
        return (requestBytes.count + 4, messageBytes.count + 4 + endBytes.count + 4)
    }

    func run() async throws -> Figure {
        let environment = setup.environment
        var figure = Figure(
            number: 3, title: "Warm RPC through CastClient, against the raw socket floor",
            method: """
                `GetStatus` (what `castc status` asks; castd answers with the daemon, the device, its session and \
                the playing media) through `CastdClient` on a connection already open, one call at a time. \
                Throughput: N clients, each its own connection and task in the driver, each making one call after \
                the other for a fixed time; castd's CPU over that time is read from /proc. The floor: the same \
                request and response byte counts (framing included) written and read with blocking \
                `write`/`read` on a Unix socket between a thread of the driver and `castd-bench floor-server`, \
                another process (one thread per connection), the same N connections for throughput. The driver \
                (clients and their event loops) and castd share the machine's cores, as a desktop's clients would.
                """)
        let controller = setup.controller
        let status = try await controller.status()
        let (requestBytes, responseBytes) = try Self.frameSizes(status: status)
        figure.notes.append(
            "One call: \(requestBytes) bytes to castd, \(responseBytes) bytes back (a message frame and a status frame)."
        )

        var window = LoadWindow(live: [setup.daemon.pid])
        // Latency, one client.
        let warmup = environment.runs(3000, quick: 300)
        let calls = environment.runs(30000, quick: 1000)
        for _ in 0..<warmup { _ = try await controller.status() }
        var latencies: [UInt64] = []
        latencies.reserveCapacity(calls)
        for _ in 0..<calls {
            let started = monotonicNanos()
            _ = try await controller.status()
            latencies.append(monotonicNanos() - started)
        }
        let castd = Samples(latencies)

        // The floor.
        let floorSocket = environment.workDirectory + "/floor.sock"
        let floorServer = try LongProcess(
            [
                selfExecutablePath(), "floor-server", "--socket", floorSocket, "--request-bytes",
                "\(requestBytes)", "--response-bytes", "\(responseBytes)",
            ],
            log: environment.workDirectory + "/floor-server.log")
        try await waitUntil("the floor server") { SocketProbe.accepts(floorSocket) }
        let floor: Samples
        do {
            floor = try await onThread {
                try FloorClient.latency(
                    socket: floorSocket, requestBytes: requestBytes, responseBytes: responseBytes, warmup: warmup,
                    calls: calls)
            }
        } catch {
            await floorServer.stop()
            throw error
        }
        let ratio = Double(castd.median) / Double(floor.median)
        figure.rows += [
            .distribution(
                "GetStatus, one client, warm (call → response)", castd, target: "median ≤ 50 µs",
                met: castd.median <= 50_000),
            .distribution("floor: the same bytes, blocking ping-pong over a Unix socket", floor),
            .value(
                "castd : floor (medians)", Format.ratio(ratio), target: "≤ 3×", met: ratio <= 3,
                note: "p99: \(Format.ratio(Double(castd.p99) / Double(floor.p99)))"),
        ]

        // Throughput.
        let seconds = environment.quick ? 1.0 : 5.0
        for clients in [1, 8, 64] {
            let result = try await throughput(clients: clients, seconds: seconds)
            let floorRate = try await onThread {
                try FloorClient.throughput(
                    socket: floorSocket, connections: clients, requestBytes: requestBytes, responseBytes: responseBytes,
                    seconds: seconds)
            }
            let perCall =
                result.calls > 0
                ? Format.duration(UInt64(result.castdCPUSeconds * 1e9 / Double(result.calls))) : "?"
            let castdCore = Format.fixed(result.castdCPUSeconds / result.seconds * 100, 0)
            figure.rows.append(
                .value(
                    "throughput, \(clients) client\(clients == 1 ? "" : "s")",
                    "\(Format.grouped(Int(result.rate))) calls/s",
                    target: clients == 64 ? "≥ 50,000 calls/s" : "", met: clients == 64 ? result.rate >= 50_000 : nil,
                    note:
                        "castd used \(castdCore) % of a core, \(perCall) of CPU per call; floor \(Format.grouped(Int(floorRate))) round trips/s (castd at \(Format.fixed(result.rate / floorRate * 100, 0)) % of it)"
                ))
        }
        await floorServer.stop()
        window.finish(live: [setup.daemon.pid])
        figure.load = window
        return figure
    }

    struct Throughput {
        var calls: Int
        var seconds: Double
        var castdCPUSeconds: Double
        var rate: Double { Double(calls) / seconds }
    }

    /// `clients` connections, each calling GetStatus back to back for `seconds`.
    private func throughput(clients: Int, seconds: Double) async throws -> Throughput {
        var connected: [CastdClient] = []
        do {
            for _ in 0..<clients { connected.append(try await setup.daemon.connect()) }
            let result = try await throughput(of: connected, seconds: seconds)
            for client in connected { await client.close() }
            return result
        } catch {
            for client in connected { await client.close() }
            throw error
        }
    }

    private func throughput(of connected: [CastdClient], seconds: Double) async throws -> Throughput {
        // Warm each connection.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in connected {
                group.addTask { for _ in 0..<50 { _ = try await client.status() } }
            }
            try await group.waitForAll()
        }
        let cpuBefore = try setup.daemon.cpuSeconds()
        let started = monotonicNanos()
        let deadline = started + UInt64(seconds * 1e9)
        let calls = try await withThrowingTaskGroup(of: Int.self) { group in
            for client in connected {
                group.addTask {
                    var count = 0
                    while monotonicNanos() < deadline {
                        _ = try await client.status()
                        count += 1
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = Double(monotonicNanos() - started) / 1e9
        return Throughput(calls: calls, seconds: elapsed, castdCPUSeconds: try setup.daemon.cpuSeconds() - cpuBefore)
    }
}

/// The client half of the floor: blocking writes and reads of fixed sizes.
enum FloorClient {
    static func connect(_ socket: String) throws -> Int32 {
        let fd = SocketProbe.connectUnix(socket)
        guard fd >= 0 else { throw BenchError("cannot connect to the floor server at \(socket)") }
        return fd
    }

    /// One round trip: `request` out, `responseBytes` back.
    static func roundTrip(_ fd: Int32, request: [UInt8], response: inout [UInt8]) throws {
        var sent = 0
        while sent < request.count {
            let n = request.withUnsafeBytes { write(fd, $0.baseAddress! + sent, $0.count - sent) }
            guard n > 0 else { throw BenchError("floor: write failed") }
            sent += n
        }
        var received = 0
        while received < response.count {
            let n = response.withUnsafeMutableBytes { read(fd, $0.baseAddress! + received, $0.count - received) }
            guard n > 0 else { throw BenchError("floor: read failed") }
            received += n
        }
    }

    static func latency(socket: String, requestBytes: Int, responseBytes: Int, warmup: Int, calls: Int) throws
        -> Samples
    {
        let fd = try connect(socket)
        defer { close(fd) }
        let request = [UInt8](repeating: 0x2A, count: requestBytes)
        var response = [UInt8](repeating: 0, count: responseBytes)
        for _ in 0..<warmup { try roundTrip(fd, request: request, response: &response) }
        var samples: [UInt64] = []
        samples.reserveCapacity(calls)
        for _ in 0..<calls {
            let started = monotonicNanos()
            try roundTrip(fd, request: request, response: &response)
            samples.append(monotonicNanos() - started)
        }
        return Samples(samples)
    }

    /// Round trips per second over `connections` connections, one thread each.
    static func throughput(socket: String, connections: Int, requestBytes: Int, responseBytes: Int, seconds: Double)
        throws -> Double
    {
        let fds = try (0..<connections).map { _ in try connect(socket) }
        defer { for fd in fds { close(fd) } }
        let total = Counter()
        let failures = Counter()
        let started = monotonicNanos()
        let deadline = started + UInt64(seconds * 1e9)
        let done = DispatchGroup()
        for fd in fds {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                let request = [UInt8](repeating: 0x2A, count: requestBytes)
                var response = [UInt8](repeating: 0, count: responseBytes)
                var count = 0
                do {
                    while monotonicNanos() < deadline {
                        try roundTrip(fd, request: request, response: &response)
                        count += 1
                    }
                } catch {
                    failures.add(1)
                }
                total.add(count)
            }
        }
        done.wait()
        if failures.count > 0 { throw BenchError("floor: a connection failed") }
        return Double(total.count) / (Double(monotonicNanos() - started) / 1e9)
    }
}

/// The server half of the floor, run as `castd-bench floor-server`: for each connection, a
/// thread that reads `requestBytes` and writes `responseBytes`, until the client goes.
enum FloorServer {
    static func serve(socket path: String, requestBytes: Int, responseBytes: Int) throws -> Never {
        unlink(path)
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw BenchError("floor-server: socket failed") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw BenchError("path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(listener, 256) == 0 else {
            throw BenchError("floor-server: cannot listen on \(path): \(String(cString: strerror(errno)))")
        }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 { continue }
            Thread.detachNewThread {
                var request = [UInt8](repeating: 0, count: requestBytes)
                let response = [UInt8](repeating: 0x2A, count: responseBytes)
                serving: while true {
                    var received = 0
                    while received < requestBytes {
                        let n = request.withUnsafeMutableBytes {
                            read(fd, $0.baseAddress! + received, $0.count - received)
                        }
                        if n <= 0 { break serving }
                        received += n
                    }
                    var sent = 0
                    while sent < responseBytes {
                        let n = response.withUnsafeBytes { write(fd, $0.baseAddress! + sent, $0.count - sent) }
                        if n <= 0 { break serving }
                        sent += n
                    }
                }
                close(fd)
            }
        }
    }
}
