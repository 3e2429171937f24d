import CastClient
import CastDevices
import CastTestSupport
import CastdAPI
import CastdServer
import CastdSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Clients that misbehave on purpose: each gets a clear status or is closed, and a bystander
/// client notices nothing. (Unknown methods, garbage frames, oversized frames and silent
/// connections are in CastdServerTests and LimitTests.)
struct HostileClientTests {
    @Test func everyMethodRefusesAMalformedRequestAndTheConnectionGoesOn() async throws {
        try await withDaemon { socket, store in
            try await CastdClient.withConnection(socketPath: socket) { bystander in
                var events = bystander.watch().makeAsyncIterator()
                _ = try await events.next()  // the snapshot

                let raw = try RawSocket(path: socket)
                for (index, method) in CastdMethod.allCases.enumerated() {
                    var frame = Castd_V1_Frame()
                    frame.callID = UInt64(index + 1)
                    var start = Castd_V1_CallStart()
                    start.method = method.path
                    start.request = Data([0xFF, 0xFF, 0xFF])  // field 31, wire type 7: not protobuf
                    frame.start = start
                    try raw.send(frame)
                    let status = try #require(try await raw.receive())
                    #expect(status.callID == frame.callID, "\(method)")
                    if [.getLogFilter, .setLogFilter, .streamLogs].contains(method) {
                        // This daemon runs without its log system: that is said first.
                        #expect(status.status.code == .failedPrecondition, "\(method): \(status.status)")
                    } else {
                        #expect(status.status.code == .invalidArgument, "\(method): \(status.status)")
                        #expect(status.status.message.contains("malformed"), "\(method): \(status.status.message)")
                    }
                }

                // Frames only the daemon sends, call id 0, a duplicate call id: each a status.
                var message = Castd_V1_Frame()
                message.callID = 100
                message.message = Data([1, 2, 3])
                try raw.send(message)
                #expect(try await raw.receive()?.status.code == .invalidArgument)
                try raw.start(callID: 0, method: CastdMethod.getStatus.path, request: Castd_V1_GetStatusRequest())
                let reserved = try #require(try await raw.receive())
                #expect(reserved.callID == 0 && reserved.status.code == .invalidArgument)
                try raw.start(callID: 7, method: CastdMethod.watch.path, request: Castd_V1_WatchRequest())
                #expect(try await raw.receive()?.callID == 7)  // the watch's snapshot
                try raw.start(callID: 7, method: CastdMethod.listDevices.path, request: Castd_V1_ListDevicesRequest())
                // Refused on call id 0 (rpc.proto): a status on 7 would end the watch still open there.
                var duplicate: Castd_V1_Frame?
                while duplicate == nil, let frame = try await raw.receive() {
                    #expect(!(frame.callID == 7 && frame.status != Castd_V1_Status()), "call 7 ended: \(frame)")
                    if frame.callID == 0, case .status = frame.kind { duplicate = frame }
                }
                #expect(duplicate?.status.code == .alreadyExists)
                #expect(duplicate?.status.message.contains("call id 7") == true, "\(String(describing: duplicate))")

                // The same connection still works, its first call 7 goes on, and the bystander's
                // watch goes on.
                try await raw.roundTrip(callID: 200)
                store.updateDevice(id: "after") { $0.friendlyName = "After" }
                let next = try #require(try await events.next())
                #expect(next.deviceAdded.id == "after", "\(next)")
                var delta: Castd_V1_Frame?
                while delta == nil, let frame = try await raw.receive() {
                    if frame.callID == 7, case .message = frame.kind { delta = frame }
                }
                let event = try CastdEvent(serializedBytes: Array(try #require(delta).message))
                #expect(event.deviceAdded.id == "after", "\(event)")
                _ = try await bystander.listDevices()
            }
        }
    }

    @Test func halfAFrameThenEndOfStreamIsClosedWithAStatus() async throws {
        try await withDaemon { socket, _ in
            try await CastdClient.withConnection(socketPath: socket) { bystander in
                // The bystander speaks first: castd's idle timeout (30 s) closes only connections
                // that sent nothing, and the steps below took longer than that in a CI run.
                _ = try await bystander.listDevices()
                let raw = try RawSocket(path: socket)
                try await raw.roundTrip(callID: 1)  // not idle: the idle timeout does not apply
                try raw.write([0, 0, 0, 50, 1, 2, 3])
                shutdown(raw.fd, Int32(SHUT_WR))
                var frames: [Castd_V1_Frame] = []
                while let frame = try await raw.receive() { frames.append(frame) }  // until closed
                #expect(frames.allSatisfy { $0.callID == 0 && $0.status.code == .invalidArgument }, "\(frames)")
                _ = try await bystander.listDevices()
                try await eventually("the half-open connection to be released") {
                    try await bystander.status().daemon.clients == 1
                }
            }
        }
    }

    /// A client that starts a watch and never reads: the daemon stops writing when the socket is
    /// full, the store drops that watcher's backlog (a `lagged` event and a fresh snapshot replace
    /// it), and nothing buffers the flood without bound.
    @Test func aWatcherThatNeverReadsIsNotBufferedWithoutBound() async throws {
        try await withDaemon(watcherQueueLimit: 64) { socket, store in
            let stalled = try RawSocket(path: socket)
            try stalled.start(callID: 1, method: CastdMethod.watch.path, request: Castd_V1_WatchRequest())
            _ = try #require(try await stalled.receive())  // its snapshot; then it stops reading

            try await CastdClient.withConnection(socketPath: socket) { bystander in
                var events = bystander.watch().makeAsyncIterator()
                _ = try await events.next()  // the snapshot
                // 20,000 events of 2 KiB: 40 MiB if anything kept them all for the stalled client.
                let padding = String(repeating: "x", count: 2048)
                let flood = 20_000
                for i in 0..<flood {
                    store.updateDevice(id: "flood-\(i % 8)") { $0.friendlyName = "\(i) \(padding)" }
                }
                // The bystander follows the whole flood (lagging is allowed; losing its place is not).
                let target = store.sequence
                var lastSequence: UInt64 = 0
                while lastSequence < target, let event = try await events.next() { lastSequence = event.sequence }
                #expect(lastSequence == target)
                _ = try await bystander.listDevices()
            }

            // Now the stalled client reads: what waited for it is bounded, and it catches up.
            let target = store.sequence
            var bytes = 0
            var lagged = false
            var last: UInt64 = 0
            while last < target, let frame = try await stalled.receive() {
                bytes += frame.message.count
                guard frame.callID == 1, case .message(let data) = frame.kind else { continue }
                let event = try CastdEvent(serializedBytes: data)
                if case .lagged = event.kind { lagged = true }
                last = event.sequence
            }
            #expect(lagged)
            #expect(last == target)
            #expect(bytes < 8 * 1024 * 1024, "the stalled watcher received \(bytes) bytes of a 40 MiB flood")
        }
    }

    /// A client that pipelines GetStatus calls and never reads: castd answers until the socket
    /// is full, then stops reading that client instead of keeping answers for it, so the
    /// client's writes block. When it reads again, every call it sent has its answer, once; a
    /// bystander is served meanwhile. (GetStatus is answered on the event loop while the socket
    /// takes writes, and by the connection's task once it does not: both must hold back.)
    @Test func aClientThatCallsAndNeverReadsStopsBeingRead() async throws {
        try await withDaemon { socket, _ in
            let raw = try RawSocket(path: socket)
            // castd answers until the socket and its write buffer are full (about 1,300 answers
            // here), and the kernel holds some more calls; a castd that went on reading, keeping
            // answers or tasks for each call, takes far more (this cap caught one that did).
            let cap: UInt64 = 20_000
            // Sent from a thread of its own: the last wait for room blocks for up to 2 s.
            let (sent, rest) = try await onThread { () throws -> (UInt64, ArraySlice<UInt8>) in
                var sent: UInt64 = 0
                while sent < cap {
                    var frame = Castd_V1_Frame()
                    frame.callID = sent + 1
                    var start = Castd_V1_CallStart()
                    start.method = CastdMethod.getStatus.path
                    frame.start = start
                    let bytes = try RawSocket.framed(frame)
                    let n = bytes.withUnsafeBytes {
                        Glibc.send(raw.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                    }
                    if n == bytes.count {
                        sent += 1
                        continue
                    }
                    guard n >= 0 || errno == EAGAIN || errno == EWOULDBLOCK else {
                        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                    }
                    // Full for now. castd may still be reading: wait up to 2 s for room.
                    var poll = pollfd(fd: raw.fd, events: Int16(POLLOUT), revents: 0)
                    if n > 0 || Glibc.poll(&poll, 1, 2_000) == 0 {
                        return (sent + 1, bytes[max(n, 0)...])  // the unsent end of the frame that blocked
                    }
                }
                return (sent, [])
            }
            #expect(sent < cap, "castd read \(sent) calls from a client that reads nothing")

            let clients = try await CastdClient.withConnection(socketPath: socket) { bystander in
                try await bystander.status().daemon.clients
            }
            #expect(clients == 2)

            // Read everything; the frame that blocked is finished meanwhile.
            let finish = Task { [rest] in try await onThread { try raw.write(Array(rest)) } }
            var responded = Set<UInt64>()
            var ended = Set<UInt64>()
            var problems: [String] = []
            while ended.count < Int(sent), let frame = try await raw.receive() {
                switch frame.kind {
                case .message?:
                    if !responded.insert(frame.callID).inserted { problems.append("two responses to \(frame.callID)") }
                case .status(let status)?:
                    if status.code != .ok { problems.append("\(frame.callID): \(status.code) \(status.message)") }
                    if !responded.contains(frame.callID) {
                        problems.append("no response before the status of \(frame.callID)")
                    }
                    if !ended.insert(frame.callID).inserted { problems.append("two statuses for \(frame.callID)") }
                default:
                    problems.append("unexpected frame \(frame)")
                }
                if problems.count > 10 { break }
            }
            try await finish.value
            #expect(problems.isEmpty, "\(problems)")
            #expect(ended == Set(1...sent), "\(ended.count) of \(sent) calls answered")
        }
    }

    @Test func aThousandConnectionsAreServedAndNobodyNotices() async throws {
        try raiseOpenFileLimit(to: 4096)
        // No idle timeout: opening a thousand connections one after another, then calling on each,
        // may take longer than it on a slow (sanitizer) build; idleness has tests of its own.
        try await withDaemon(configure: {
            $0.maximumConnectionsPerUID = 1100
            $0.idleTimeout = nil
        }) { socket, _ in
            try await CastdClient.withConnection(socketPath: socket) { bystander in
                var clients: [RawSocket] = []
                for _ in 0..<1000 { clients.append(try RawSocket(path: socket)) }
                // Each makes a call: every one is admitted and answered.
                for (index, client) in clients.enumerated() {
                    try await client.roundTrip(callID: UInt64(index + 1))
                }
                #expect(try await bystander.status().daemon.clients == 1001)
                _ = try await bystander.listDevices()
                clients.removeAll()  // closes them
                try await eventually(timeout: .seconds(30), "the thousand connections to be released") {
                    try await bystander.status().daemon.clients == 1
                }
            }
        }
    }
}

/// Raises this process's soft limit on open files to at least `wanted` (within the hard limit).
func raiseOpenFileLimit(to wanted: rlim_t) throws {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { throw POSIXError(.EINVAL) }
    if limit.rlim_cur < wanted {
        limit.rlim_cur = min(wanted, limit.rlim_max)
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { throw POSIXError(.EPERM) }
    }
}
