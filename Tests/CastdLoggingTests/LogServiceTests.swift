import CastClient
import CastTestSupport
import CastdLogging
import Foundation
import Logging
import Testing

/// GetLogFilter, SetLogFilter and StreamLogs served by the real server on a real socket, through
/// CastdClient, with a daemon logging into its own `CastdLogs` (the process-wide bootstrap is
/// castd's, which the end-to-end tests run).
@Suite struct LogServiceTests {
    static func logs(_ filter: String = "info", _ patterns: [String] = []) throws -> CastdLogs {
        CastdLogs(filter: try LogFilter(level: filter, filters: patterns), output: .discard)
    }

    @Test func getLogFilterAnswersTheFilterAndTheSubsystems() async throws {
        let logs = try Self.logs("notice", ["CastChannel*=verbose", "Discovery=none"])
        try await withDaemon(logs: logs) { socket, _ in
            try await CastdClient.withConnection(socketPath: socket) { client in
                let filter = try await client.logFilter()
                #expect(filter.minimumLevel == .notice)
                #expect(filter.subsystems.map(\.pattern) == ["CastChannel*", "Discovery"])
                #expect(filter.subsystems.map(\.level) == [.verbose, .none])
                #expect(Array(filter.knownSubsystems.prefix(CastdSubsystem.all.count)) == CastdSubsystem.all)
            }
        }
    }

    @Test func setLogFilterChangesWhatIsLoggedAndSaysSo() async throws {
        let logs = try Self.logs()
        try await withDaemon(logs: logs) { socket, _ in
            try await CastdClient.withConnection(socketPath: socket) { client in
                let channel = logs.logger("CastChannel")
                channel.trace("before")
                var filter = try await client.setLogLevel(.verbose, for: "CastChannel*")
                #expect(filter.subsystems.map(\.pattern) == ["CastChannel*"] && filter.subsystems[0].level == .verbose)
                #expect(filter.knownSubsystems.contains("CastChannel"))
                channel.trace("after")
                #expect(logs.store.level(for: "CastChannel") == .verbose)
                #expect(logs.store.level(for: "CastAuth") == .info, "another subsystem stays at the minimum")

                // The change is logged at notice, with the method as a field.
                let notice = try #require(logs.buffer.recent(1000).first { $0.message.hasPrefix("log filter changed") })
                #expect(notice.level == .notice && notice.subsystem == "Daemon")
                #expect(notice.message == "log filter changed: CastChannel* at verbose")
                #expect(notice.fields["rpc.method"] == "SetLogFilter")
                #expect(notice.fields["log.filter"] == "info, CastChannel*=verbose")
                let messages = logs.buffer.recent(1000).filter { $0.subsystem == "CastChannel" }.map(\.message)
                #expect(messages == ["after"])

                filter = try await client.setLogLevel(.warning)
                #expect(filter.minimumLevel == .warning)
                filter = try await client.setLogLevel(.debug, for: "Cast*")
                filter = try await client.setLogLevel(.error, for: "CastChannel*")
                #expect(filter.subsystems.map(\.pattern) == ["Cast*", "CastChannel*"])
                filter = try await client.removeLogLevel(for: "Cast*")
                #expect(filter.subsystems.map(\.pattern) == ["CastChannel*"])
                filter = try await client.removeLogLevel(for: "Cast*")  // not there: nothing changes
                #expect(filter.subsystems.map(\.pattern) == ["CastChannel*"])

                filter = try await client.resetLogFilter()
                #expect(filter.minimumLevel == .info && filter.subsystems.isEmpty)
                #expect(logs.store.level(for: "CastChannel") == .info)
                filter = try await client.setLogLevel(.debug, for: "RPC", reset: true)
                #expect(filter.minimumLevel == .info && filter.subsystems.map(\.pattern) == ["RPC"])
            }
        }
    }

    /// A change that silences castd's log is itself on record, with who made it: its notice goes
    /// out under the filter in force before it (SECURITY.md, G6.2).
    @Test func aChangeThatSilencesTheLogIsLoggedWithItsCaller() async throws {
        let logs = try Self.logs()
        try await withDaemon(logs: logs) { socket, _ in
            try await CastdClient.withConnection(socketPath: socket) { client in
                let filter = try await client.setLogLevel(.none)
                #expect(filter.minimumLevel == .none)
                let notice = try #require(logs.buffer.recent(1000).first { $0.message.hasPrefix("log filter changed") })
                #expect(notice.message == "log filter changed: minimum level none")
                #expect(notice.fields["peer.uid"] == "\(getuid())")
                #expect(notice.fields["peer.pid"] == "\(getpid())")
                // And from now on nothing is logged.
                logs.logger("Daemon").notice("after")
                #expect(!logs.buffer.recent(1000).contains { $0.message == "after" })
            }
        }
    }

    @Test func badRequestsAreRefusedAndChangeNothing() async throws {
        let logs = try Self.logs("info", ["RPC=debug"])
        try await withDaemon(logs: logs) { socket, _ in
            try await CastdClient.withConnection(socketPath: socket) { client in
                _ = try await client.setLogLevel(.verbose, for: "Cast*")
                let before = logs.store.filter
                func refused(_ request: Castd_V1_SetLogFilterRequest) async -> CastdError? {
                    do {
                        _ = try await client.unary(.setLogFilter, request, as: CastdLogFilter.self)
                        return nil
                    } catch let error as CastdError {
                        return error
                    } catch {
                        return nil
                    }
                }
                var request = Castd_V1_SetLogFilterRequest()
                request.pattern = "Cast Channel"
                request.level = .debug
                request.reset = true
                var error = await refused(request)
                #expect(
                    error?.code == .invalidArgument && error?.message.contains("white space") == true,
                    "\(String(describing: error))")
                request.pattern = "Cast[AB"
                error = await refused(request)
                #expect(error?.code == .invalidArgument && error?.message.contains("'[' without its ']'") == true)
                error = await refused(Castd_V1_SetLogFilterRequest())
                #expect(error?.code == .invalidArgument && error?.message.contains("set a level") == true)
                request = Castd_V1_SetLogFilterRequest()
                request.level = .UNRECOGNIZED(99)
                error = await refused(request)
                #expect(error?.code == .invalidArgument && error?.message.contains("99") == true)
                #expect(logs.store.filter == before, "the reset in a refused request did not happen either")

                // The client refuses a bad pattern itself, without a round trip.
                await #expect(throws: CastdError.self) { try await client.setLogLevel(.debug, for: "") }
                await #expect(throws: CastdError.self) { try await client.setLogLevel(.unspecified) }
            }
        }
    }

    @Test func streamLogsSendsRecentRecordsThenFollows() async throws {
        let logs = try Self.logs("info")
        try await withDaemon(logs: logs) { socket, _ in
            try await CastdClient.withConnection(socketPath: socket) { client in
                let test = logs.logger("Test")
                for i in 1...5 { test.info("old \(i)") }
                let recent = try await Array(client.logs(recent: 3))
                #expect(recent.map(\.message) == ["old 3", "old 4", "old 5"])
                let mine = try await Array(client.logs(recent: 1000)).filter { $0.subsystem == "Test" }
                #expect(mine.map(\.message) == (1...5).map { "old \($0)" })
                #expect(mine.map(\.sequence) == mine.map(\.sequence).sorted())
                #expect(mine.allSatisfy { $0.level == .info && $0.timeMs > 0 })
                #expect(try await Array(client.logs(recent: 0)).isEmpty)

                var records = client.logs(recent: 1, follow: true).makeAsyncIterator()
                // The first record is the newest old one: the follower is in place now.
                let first = try #require(try await records.next())
                test.notice("new", metadata: ["device.id": "tv1"])
                var new: CastdLogRecord?
                while let record = try await records.next() {
                    if record.subsystem == "Test" {
                        new = record
                        break
                    }
                }
                let record = try #require(new)
                #expect(record.message == "new" && record.level == .notice && record.fields == ["device.id": "tv1"])
                #expect(record.sequence > first.sequence && record.droppedBefore == 0)
            }
        }
    }

    @Test func aDaemonWithoutLogsSaysSo() async throws {
        try await withDaemon { socket, _ in
            try await CastdClient.withConnection(socketPath: socket) { client in
                let error = await #expect(throws: CastdError.self) { try await client.logFilter() }
                #expect(error?.code == .failedPrecondition, "\(String(describing: error))")
                let stream = await #expect(throws: CastdError.self) { _ = try await Array(client.logs()) }
                #expect(stream?.code == .failedPrecondition)
            }
        }
    }
}

extension Array {
    /// Every element of a finite sequence.
    init<S: AsyncSequence>(_ sequence: S) async throws where S.Element == Element {
        self = []
        for try await element in sequence { append(element) }
    }
}
