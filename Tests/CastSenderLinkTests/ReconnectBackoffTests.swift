import CastTestSupport
import CastSenderLink
import CastdSupport
import Testing

@Suite(.tags(.cpuBound)) struct ReconnectBackoffTests {
    let backoff = ReconnectBackoff()

    @Test func theBaseDoublesFromOneSecondToTheCap() {
        let bases = (0..<8).map { backoff.base(afterFailures: $0) }
        #expect(
            bases == [
                .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30),
                .seconds(30),
            ])
        #expect(backoff.base(afterFailures: 1_000) == .seconds(30))
    }

    @Test func theFirstRetryComesWithinOneSecondAndLaterOnesNeverSoonerThanOne() {
        var generator = SplitMix64(seed: 0x5EED)
        var outside: [String] = []
        for _ in 0..<2_000 {
            let first = backoff.delay(afterFailures: 0, using: &generator)
            if first < .milliseconds(500) || first > .seconds(1) { outside.append("first retry after \(first)") }
            for failures in 1..<12 {
                let delay = backoff.delay(afterFailures: failures, using: &generator)
                let base = backoff.base(afterFailures: failures)
                if delay < .seconds(1) || delay < base / 2 || delay > base || delay > .seconds(30) {
                    outside.append("after \(failures) failures: \(delay), window [\(base / 2), \(base)]")
                }
            }
        }
        #expect(outside.isEmpty, "\(outside.prefix(5))")
    }

    @Test func jitterSpreadsTheWaitsOverTheUpperHalf() {
        // The draws cover the window [4 s, 8 s] after three failures, end to end.
        var generator = SplitMix64(seed: 0x5EED)
        let window = (0..<2_000).map { _ in backoff.delay(afterFailures: 3, using: &generator) }
        #expect(window.min()! < .milliseconds(4_200) && window.max()! > .milliseconds(7_800))
        let draws = Set((0..<200).map { _ in backoff.delay(afterFailures: 5, using: &generator) })
        #expect(draws.count > 100, "200 devices lost at once should not retry in lock-step")
    }

    @Test func theGapSinceTheLastAttemptIsWaitedOut() {
        #expect(backoff.remainingGap(sinceLastAttempt: .milliseconds(300)) == .milliseconds(700))
        #expect(backoff.remainingGap(sinceLastAttempt: .seconds(2)) == .zero)
    }
}
