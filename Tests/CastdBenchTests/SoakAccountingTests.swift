import CastTestSupport
import CastClient
import CastdAPI
import Foundation
import Testing

@testable import castd_bench

/// The soak's accounting, fed frames by hand: it must catch every lost and duplicated reply,
/// and count a failure status as the reply it is.
@Suite(.tags(.cpuBound)) struct SoakAccountingTests {
    static func message(_ callID: UInt64, _ text: String = "reply") -> Castd_V1_Frame {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        frame.message = Data(text.utf8)
        return frame
    }

    static func status(_ callID: UInt64, _ code: CastdCode = .ok) -> Castd_V1_Frame {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        frame.status = CastdError(code, code == .ok ? "" : "failed").status
        return frame
    }

    /// A ledger with `count` GetStatus calls open, started at time 100.
    static func ledger(open count: Int, method: CastdMethod = .getStatus) -> CallLedger {
        var ledger = CallLedger()
        for expected in 1...UInt64(count) {
            #expect(ledger.start(method, at: 100) == expected)
        }
        return ledger
    }

    @Test func callsAnsweredOnceEachAreClean() {
        var ledger = Self.ledger(open: 3)
        #expect(ledger.receive(Self.message(2), at: 150) == nil)
        #expect(ledger.receive(Self.status(2), at: 160)?.latency == 60)
        #expect(ledger.receive(Self.message(1), at: 170) == nil)
        let ended = ledger.receive(Self.status(1), at: 180)
        #expect(ended == CallLedger.Ended(callID: 1, method: .getStatus, code: 0, latency: 80))
        #expect(ledger.receive(Self.message(3), at: 190) == nil)
        #expect(ledger.receive(Self.status(3), at: 200) != nil)
        ledger.close()
        #expect(ledger.tally.calls == 3)
        #expect(ledger.tally.replies == 3)
        #expect(ledger.tally.anomalies == 0)
        #expect(ledger.tally.codes[.getStatus] == [0: 3])
        #expect(ledger.tally.latencies[.getStatus]?.sorted() == [60, 80, 100])
    }

    @Test func aFailureStatusIsAReplyNotALoss() {
        var ledger = Self.ledger(open: 2, method: .pause)
        #expect(ledger.receive(Self.status(1, .unavailable), at: 110)?.code == Int(CastdCode.unavailable.rawValue))
        #expect(ledger.receive(Self.status(2, .aborted), at: 120) != nil)
        ledger.close()
        #expect(ledger.tally.anomalies == 0)
        #expect(ledger.tally.codes[.pause] == [14: 1, 10: 1])
    }

    @Test func aSecondStatusIsADuplicatedReply() {
        var ledger = Self.ledger(open: 2)
        _ = ledger.receive(Self.message(1), at: 110)
        #expect(ledger.receive(Self.status(1), at: 120) != nil)
        // The same status again: the call has ended, so this is a duplicate, and it ends nothing.
        #expect(ledger.receive(Self.status(1), at: 130) == nil)
        _ = ledger.receive(Self.message(2), at: 140)
        _ = ledger.receive(Self.status(2), at: 150)
        ledger.close()
        #expect(ledger.tally.duplicated == 1)
        #expect(ledger.tally.lost == 0)
        #expect(ledger.tally.replies == 2)
        #expect(ledger.tally.anomalies == 1)
        #expect(ledger.tally.notes.first?.contains("call 1") == true)
    }

    @Test func aMessageAfterTheStatusIsADuplicatedReply() {
        var ledger = Self.ledger(open: 1)
        _ = ledger.receive(Self.message(1), at: 110)
        _ = ledger.receive(Self.status(1), at: 120)
        _ = ledger.receive(Self.message(1), at: 130)
        #expect(ledger.tally.duplicated == 1)
    }

    @Test func aUnaryCallsSecondMessageIsADuplicatedReply() {
        var ledger = Self.ledger(open: 1)
        _ = ledger.receive(Self.message(1), at: 110)
        _ = ledger.receive(Self.message(1), at: 115)
        _ = ledger.receive(Self.status(1), at: 120)
        #expect(ledger.tally.duplicated == 1)
        #expect(ledger.tally.replies == 1)
    }

    @Test func aStreamingCallTakesManyMessages() {
        var ledger = Self.ledger(open: 1, method: .watch)
        for time in 0..<50 { _ = ledger.receive(Self.message(1), at: 110 + UInt64(time)) }
        _ = ledger.receive(Self.status(1, .cancelled), at: 200)
        ledger.close()
        #expect(ledger.tally.anomalies == 0)
        #expect(ledger.tally.codes[.watch] == [1: 1])
    }

    @Test func aCallWithoutAStatusByItsDeadlineIsLost() {
        var ledger = Self.ledger(open: 3)
        _ = ledger.receive(Self.message(1), at: 110)
        _ = ledger.receive(Self.status(1), at: 120)
        _ = ledger.receive(Self.message(3), at: 130)
        _ = ledger.receive(Self.status(3), at: 140)
        // Call 2 never gets its reply: the sweep after its deadline counts it lost.
        #expect(ledger.expire(startedBefore: 101) == [2])
        #expect(ledger.openCount == 0)
        #expect(ledger.tally.lost == 1)
        // A status that comes after all is late, not a duplicate, and does not undo the loss.
        #expect(ledger.receive(Self.status(2), at: 10_000) == nil)
        #expect(ledger.tally.late == 1)
        #expect(ledger.tally.duplicated == 0)
        #expect(ledger.tally.replies == 2)
        #expect(ledger.tally.anomalies == 2)
    }

    @Test func theDeadlineSparesCallsStartedSince() {
        var ledger = CallLedger()
        _ = ledger.start(.getStatus, at: 100)
        _ = ledger.start(.getStatus, at: 500)
        #expect(ledger.expire(startedBefore: 200) == [1])
        #expect(ledger.openCount == 1)
    }

    @Test func callsOpenWhenTheConnectionEndsAreLost() {
        var ledger = Self.ledger(open: 4)
        _ = ledger.receive(Self.message(2), at: 110)
        _ = ledger.receive(Self.status(2), at: 120)
        ledger.close()
        #expect(ledger.tally.lost == 3)
        #expect(ledger.tally.replies == 1)
    }

    @Test func anOKStatusWithoutItsMessageLosesTheReply() {
        var ledger = Self.ledger(open: 1)
        _ = ledger.receive(Self.status(1), at: 120)
        #expect(ledger.tally.missingMessages == 1)
        #expect(ledger.tally.anomalies == 1)
    }

    @Test func framesForCallsNeverOpenedAreCounted() {
        var ledger = Self.ledger(open: 2)
        _ = ledger.receive(Self.status(7), at: 110)  // beyond the last id given
        _ = ledger.receive(Self.message(0), at: 120)  // 0: castd's connection-level status
        _ = ledger.receive(Self.status(0, .resourceExhausted), at: 130)
        #expect(ledger.tally.unknown == 3)
        #expect(ledger.openCount == 2)
    }

    @Test func talliesMerge() {
        var first = Self.ledger(open: 2)
        _ = first.receive(Self.message(1), at: 110)
        _ = first.receive(Self.status(1), at: 120)
        first.close()
        var second = Self.ledger(open: 1, method: .seek)
        _ = second.receive(Self.status(1, .unavailable), at: 150)
        _ = second.receive(Self.status(1, .unavailable), at: 160)
        var tally = SoakTally()
        tally.merge(first.tally)
        tally.merge(second.tally)
        #expect(tally.calls == 3)
        #expect(tally.lost == 1)
        #expect(tally.duplicated == 1)
        #expect(tally.codes[.getStatus] == [0: 1])
        #expect(tally.codes[.seek] == [14: 1])
        #expect(tally.replies == 2)
    }
}

/// The watchers' logs and their comparison.
@Suite(.tags(.cpuBound)) struct SoakWatchComparisonTests {
    static func event(_ sequence: UInt64, _ kind: String) -> [UInt8] {
        var event = CastdEvent()
        event.sequence = sequence
        switch kind {
        case "snapshot":
            event.snapshot = Castd_V1_Snapshot()
        case "lagged":
            var lagged = Castd_V1_Lagged()
            lagged.dropped = 3
            event.lagged = lagged
        default:
            var media = CastdMediaStatus()
            media.deviceID = kind
            event.media = media
        }
        return try! event.serializedBytes()
    }

    static func log(snapshot: UInt64, _ events: [(UInt64, String)]) -> WatchLog {
        var log = WatchLog()
        log.record(event(snapshot, "snapshot"))
        for (sequence, kind) in events { log.record(event(sequence, kind)) }
        return log
    }

    @Test func watchersThatSawTheSameEventsAgree() {
        let events: [(UInt64, String)] = [(6, "a"), (7, "b"), (8, "a")]
        let first = Self.log(snapshot: 5, events)
        // A later watcher: its snapshot at 6, then the rest.
        let second = Self.log(snapshot: 6, Array(events.dropFirst()))
        let comparison = WatchComparison.compare([first, second], through: 8)
        #expect(comparison.identical, "\(comparison.differences)")
        #expect(comparison.from == 6)
        #expect(comparison.compared == 2)
    }

    @Test func aMissingEventIsFound() {
        let first = Self.log(snapshot: 5, [(6, "a"), (7, "b"), (8, "a")])
        let second = Self.log(snapshot: 5, [(6, "a"), (8, "a")])
        let comparison = WatchComparison.compare([first, second], through: 8)
        #expect(!comparison.identical)
        #expect(second.gaps == 1)
    }

    @Test func anotherOrderOrOtherContentIsFound() {
        let first = Self.log(snapshot: 5, [(6, "a"), (7, "b")])
        let other = Self.log(snapshot: 5, [(6, "a"), (7, "c")])
        #expect(!WatchComparison.compare([first, other], through: 7).identical)
        let swapped = Self.log(snapshot: 5, [(7, "b"), (6, "a")])
        #expect(!WatchComparison.compare([first, swapped], through: 7).identical)
    }

    @Test func aWatcherThatLaggedFails() {
        let first = Self.log(snapshot: 5, [(6, "a"), (7, "b")])
        let lagging = Self.log(snapshot: 5, [(6, "a"), (7, "lagged"), (7, "snapshot")])
        #expect(lagging.lagged == 1)
        let comparison = WatchComparison.compare([first, lagging], through: 7)
        #expect(!comparison.identical)
        #expect(comparison.lagged == 1)
    }

    @Test func aWatcherThatFellShortOfTheEndFails() {
        let first = Self.log(snapshot: 5, [(6, "a"), (7, "b")])
        let short = Self.log(snapshot: 5, [(6, "a")])
        #expect(!WatchComparison.compare([first, short], through: 7).identical)
    }

    @Test func theHeaderIsReadOffTheWire() throws {
        var event = CastdEvent()
        event.sequence = 300_000
        event.timeMs = 1_900_000_000_000
        var media = CastdMediaStatus()
        media.deviceID = "tv"
        media.currentTime = 12.5
        event.media = media
        let header = try #require(WatchLog.header(try event.serializedBytes()))
        #expect(header.sequence == 300_000)
        #expect(header.kind == WatchLog.mediaField)
        #expect(WatchLog.header(Self.event(7, "snapshot"))?.kind == 3)
        #expect(WatchLog.header(Self.event(7, "lagged"))?.kind == 9)
        #expect(WatchLog.header([0x08]) == nil)  // a varint cut short
        #expect(WatchLog.header([0x1A, 0x05, 0x01]) == nil)  // a length past the end
    }

    @Test func linkChangesAreCounted() {
        var log = WatchLog()
        var snapshot = CastdEvent()
        snapshot.sequence = 1
        var device = CastdDevice()
        device.id = "tv"
        device.linkState = .connected
        snapshot.snapshot.devices = [device]
        log.record(try! snapshot.serializedBytes())
        for (sequence, state) in [(2, CastdLinkState.reconnecting), (3, .connecting), (4, .connected)] {
            var event = CastdEvent()
            event.sequence = UInt64(sequence)
            device.linkState = state
            event.deviceUpdated = device
            log.record(try! event.serializedBytes())
        }
        #expect(log.linkDrops == ["tv": 1])
        #expect(log.reconnections == ["tv": 1])
    }
}
