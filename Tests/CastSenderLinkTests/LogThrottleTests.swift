import CastTestSupport
import CastdSupport
import Testing

/// What a peer can make castd log at will is let through a few times a minute, and counted.
@Suite(.tags(.cpuBound)) struct LogThrottleTests {
    @Test func aBurstIsLoggedThenCountedAndTheCountGoesWithTheNextRecord() {
        let throttle = LogThrottle(burst: 3, interval: .seconds(60))
        let start = ContinuousClock.now
        let first = (0..<3).map { throttle.admit(now: start + .seconds($0)) }
        #expect(first == Array(repeating: LogThrottle.Admission(unlogged: 0), count: 3))
        for second in 3..<50 { #expect(throttle.admit(now: start + .seconds(Double(second) / 10)) == nil) }
        // A minute after the window opened: let through again, with how many were held back.
        #expect(throttle.admit(now: start + .seconds(60)) == LogThrottle.Admission(unlogged: 47))
        #expect(throttle.admit(now: start + .seconds(61)) == LogThrottle.Admission(unlogged: 0))
        #expect(throttle.takeUnlogged() == 0)
    }

    @Test func whatWasHeldBackCanBeTakenForASummary() {
        let throttle = LogThrottle(burst: 1, interval: .seconds(60))
        let start = ContinuousClock.now
        #expect(throttle.admit(now: start) != nil)
        for _ in 0..<10 { #expect(throttle.admit(now: start) == nil) }
        #expect(throttle.takeUnlogged() == 10)
        #expect(throttle.takeUnlogged() == 0)
    }
}
