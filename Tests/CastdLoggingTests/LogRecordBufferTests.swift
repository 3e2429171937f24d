import CastTestSupport
import Foundation
import Logging
import Testing

@testable import CastdLogging

@Suite(.tags(.cpuBound)) struct LogRecordBufferTests {
    static func entry(_ message: String, subsystem: String = "RPC") -> LogEntry {
        LogEntry(timeMilliseconds: 0, level: .info, subsystem: subsystem, message: message)
    }

    @Test func keepsTheNewestRecordsNumberedInOrder() {
        let buffer = LogRecordBuffer(capacity: 5)
        #expect(buffer.recent(3).isEmpty)
        for i in 1...3 { #expect(buffer.append(Self.entry("r\(i)")) == UInt64(i)) }
        #expect(buffer.recent(10).map(\.message) == ["r1", "r2", "r3"])
        #expect(buffer.recent(2).map(\.message) == ["r2", "r3"])
        #expect(buffer.recent(0).isEmpty && buffer.recent(-1).isEmpty)
        for i in 4...12 { buffer.append(Self.entry("r\(i)")) }
        // Only the last five remain, oldest first, with their own numbers.
        #expect(buffer.recent(100).map(\.message) == ["r8", "r9", "r10", "r11", "r12"])
        #expect(buffer.recent(100).map(\.sequence) == [8, 9, 10, 11, 12])
        #expect(buffer.recent(2).map(\.sequence) == [11, 12])
        #expect(buffer.nextSequence == 13)
    }

    @Test func theDefaultBufferKeepsAThousand() {
        let buffer = LogRecordBuffer()
        for i in 1...1500 { buffer.append(Self.entry("r\(i)")) }
        let all = buffer.recent(5000)
        #expect(all.count == 1000)
        #expect(all.first?.sequence == 501 && all.last?.sequence == 1500)
    }

    @Test func followersGetRecentRecordsThenEveryNewOneInOrder() async throws {
        let buffer = LogRecordBuffer()
        for i in 1...3 { buffer.append(Self.entry("old\(i)")) }
        let (recent, follower) = buffer.follow(recent: 2)
        let (_, second) = buffer.follow(recent: 0)
        #expect(recent.map(\.message) == ["old2", "old3"])
        #expect(buffer.followerCount == 2)
        let writers = 4
        let perWriter = 200
        await withTaskGroup(of: Void.self) { group in
            for w in 0..<writers {
                group.addTask { for i in 0..<perWriter { buffer.append(Self.entry("w\(w)-\(i)")) } }
            }
        }
        buffer.shutDown()
        for follower in [follower, second] {
            var got: [LogEntry] = []
            for await entry in follower { got.append(entry) }
            #expect(got.count == writers * perWriter)
            #expect(
                got.map(\.sequence) == Array(4...UInt64(3 + writers * perWriter)), "every record, in sequence order")
            #expect(got.allSatisfy { $0.droppedBefore == 0 })
            // Each writer's records in the order it appended them.
            for w in 0..<writers {
                #expect(
                    got.filter { $0.message.hasPrefix("w\(w)-") }.map(\.message)
                        == (0..<perWriter).map { "w\(w)-\($0)" })
            }
        }
    }

    /// A follower that does not read loses its oldest records and is told how many, once.
    @Test func aSlowFollowerIsToldWhatItMissed() async throws {
        let buffer = LogRecordBuffer(capacity: 1000, followerQueueLimit: 10)
        let (_, slow) = buffer.follow(recent: 0)
        for i in 1...25 { buffer.append(Self.entry("r\(i)")) }
        buffer.shutDown()
        var slowGot: [LogEntry] = []
        for await entry in slow { slowGot.append(entry) }
        #expect(slowGot.map(\.sequence) == Array(16...25))
        #expect(slowGot.first?.droppedBefore == 15, "the 15 oldest were dropped")
        #expect(slowGot.dropFirst().allSatisfy { $0.droppedBefore == 0 })
        #expect(buffer.recent(100).count == 25, "the buffer itself lost nothing")
    }

    /// Nobody else is affected by a slow follower: one that keeps up gets every record.
    @Test func aFollowerThatKeepsUpMissesNothingWhileAnotherOverflows() async throws {
        let buffer = LogRecordBuffer(capacity: 1000, followerQueueLimit: 4)
        let (_, slow) = buffer.follow(recent: 0)
        let (_, fast) = buffer.follow(recent: 0)
        var reader = fast.makeAsyncIterator()
        var fastGot: [LogEntry] = []
        for i in 1...50 {
            buffer.append(Self.entry("r\(i)"))
            // Read each record as soon as it is there: the fast follower never has more than one queued.
            if let entry = await reader.next() { fastGot.append(entry) }
        }
        #expect(fastGot.map(\.sequence) == Array(1...50))
        #expect(fastGot.allSatisfy { $0.droppedBefore == 0 })
        buffer.shutDown()
        var slowGot: [LogEntry] = []
        for await entry in slow { slowGot.append(entry) }
        #expect(slowGot.map(\.sequence) == [47, 48, 49, 50])
        #expect(slowGot.map(\.droppedBefore) == [46, 0, 0, 0])
    }

    @Test func appendingNeverWaitsForReaders() async throws {
        let buffer = LogRecordBuffer()
        var followers: [LogFollower] = []
        for _ in 0..<5 { followers.append(buffer.follow(recent: 0).follower) }
        // Five followers nobody reads, five times past their queues: appending still returns (an
        // append that waited for a reader would never return, and the deadline would fail it).
        try await withDeadline(.seconds(60)) {
            for i in 0..<5000 { buffer.append(Self.entry("r\(i)")) }
        }
        buffer.shutDown()
        for follower in followers {
            var got: [LogEntry] = []
            for await entry in follower { got.append(entry) }
            #expect(got.count == 1000 && got.first?.droppedBefore == 4000)
            #expect(got.map(\.sequence) == Array(4001...5000))
        }
    }

    @Test func followersEndAtShutDownOrWhenCancelled() async throws {
        let buffer = LogRecordBuffer()
        let (_, follower) = buffer.follow(recent: 0)
        let reading = Task {
            var count = 0
            for await _ in follower { count += 1 }
            return count
        }
        buffer.append(Self.entry("one"))
        let (_, cancelled) = buffer.follow(recent: 0)
        let cancelledReader = Task {
            var count = 0
            for await _ in cancelled { count += 1 }
            return count
        }
        #expect(buffer.followerCount == 2)
        cancelledReader.cancel()
        _ = await cancelledReader.value
        try await eventually("the cancelled follower to leave") { buffer.followerCount == 1 }
        buffer.shutDown()
        #expect(await reading.value == 1)
        #expect(buffer.followerCount == 0)
        // After shutdown, a new follower ends at once; records are still kept.
        let (recent, late) = buffer.follow(recent: 5)
        var lateCount = 0
        for await _ in late { lateCount += 1 }
        #expect(lateCount == 0 && recent.map(\.message) == ["one"])
        buffer.append(Self.entry("two"))
        #expect(buffer.recent(5).map(\.message) == ["one", "two"])
    }

    @Test func finishEndsOneFollowerAfterWhatIsQueued() async {
        let buffer = LogRecordBuffer()
        let (_, follower) = buffer.follow(recent: 0)
        buffer.append(Self.entry("queued"))
        follower.finish()
        buffer.append(Self.entry("after finish"))
        var got: [String] = []
        for await entry in follower { got.append(entry.message) }
        #expect(got == ["queued"])
        #expect(buffer.followerCount == 0)
    }

    /// A reader that logs about each record it reads (as castd's own RPC code could) does not
    /// deadlock the buffer, whether it logs from the reading task or while others append.
    @Test func loggingWhileReadingDoesNotDeadlock() async throws {
        let logs = CastdLogs(filter: LogFilter(minimum: .verbose), output: .discard)
        let logger = logs.logger("RPC")
        let (_, follower) = logs.buffer.follow(recent: 0)
        let reader = Task {
            var records = 0
            for await entry in follower where !entry.message.hasPrefix("echo") {
                records += 1
                logger.debug("echo of \(entry.sequence)")
                if records == 200 { break }
            }
            return records
        }
        await withTaskGroup(of: Void.self) { group in
            for w in 0..<4 {
                group.addTask { for i in 0..<50 { logs.logger("Writer\(w)").info("record \(i)") } }
            }
        }
        let records = try await withDeadline(.seconds(20)) { await reader.value }
        #expect(records == 200)
        #expect(logs.buffer.recent(1000).contains { $0.message.hasPrefix("echo of") })
    }
}

/// Runs `body`, failing the test if it takes longer than `limit` (a deadlock).
func withDeadline<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw Deadlocked(limit: limit)
        }
        return value
    }
}

struct Deadlocked: Error, CustomStringConvertible {
    var limit: Duration
    var description: String { "not done within \(limit): deadlocked?" }
}
