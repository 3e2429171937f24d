import CastSenderLink
import Testing

@testable import CastDevices

/// The reconnect state machine's decisions, with a stand-in link and explicit instants: no
/// sockets, no sleeping. (The suite's link tests drive it through real links.)
@Suite struct LinkKeeperTests {
    static let backoff = ReconnectBackoff(first: .seconds(1), cap: .seconds(30), minimumGap: .seconds(1))
    let start = ContinuousClock.now

    @Test func aLinkGoesUpAndDownAndCastdKeepsItAfterItsFirstUp() {
        var keeper = LinkKeeper<String>(backoff: Self.backoff)
        #expect(keeper.isIdle && !keeper.wantsLink && !keeper.everUp)
        #expect(keeper.startAttempt(now: start) == false)  // a first attempt, not a retry
        #expect(!keeper.isIdle && !keeper.isConnected)
        let (downtime, failures) = keeper.up("link", now: start + .seconds(1))
        #expect(downtime == nil && failures == 0)  // a first link
        #expect(keeper.isConnected && keeper.wantsLink && keeper.everUp)
        #expect(keeper.down(wasUp: true, holdsSession: false, now: start + .seconds(10)) == true)
        #expect(keeper.isIdle && keeper.wantsLink)  // castd retries on its own
        #expect(keeper.lostAt == start + .seconds(10) && keeper.failedRetries == 0)
        #expect(keeper.startAttempt(now: start + .seconds(11)) == true)  // a retry
        let (again, failed) = keeper.up("link", now: start + .seconds(12))
        #expect(again == .seconds(2) && failed == 0)
        #expect(keeper.lostAt == nil)
    }

    @Test func failedRetriesCountOnlyWhileCastdKeepsTheLinkOrASession() {
        var keeper = LinkKeeper<String>(backoff: Self.backoff)
        _ = keeper.startAttempt(now: start)
        #expect(keeper.down(wasUp: false, holdsSession: false, now: start) == false)
        #expect(keeper.failedRetries == 0)  // a request's attempt that failed: nothing to retry
        _ = keeper.startAttempt(now: start + .seconds(1))
        _ = keeper.down(wasUp: false, holdsSession: true, now: start + .seconds(1))
        #expect(keeper.failedRetries == 1)  // a session to rejoin: castd retries, backing off
        keeper.wantsLink = true
        for n in 2...4 {
            _ = keeper.startAttempt(now: start + .seconds(n))
            _ = keeper.down(wasUp: false, holdsSession: false, now: start + .seconds(n))
            #expect(keeper.failedRetries == n)
        }
        keeper.callOffRetries()
        #expect(keeper.failedRetries == 0)
    }

    @Test func anAttemptThatReachedALinkResetsTheBackoff() {
        var keeper = LinkKeeper<String>(backoff: Self.backoff)
        keeper.wantsLink = true
        _ = keeper.startAttempt(now: start)
        _ = keeper.down(wasUp: false, holdsSession: false, now: start)
        #expect(keeper.failedRetries == 1)
        _ = keeper.startAttempt(now: start + .seconds(2))
        // The link was made but failed before castd counted it connected (its first status).
        #expect(keeper.down(wasUp: true, holdsSession: false, now: start + .seconds(3)) == false)
        #expect(keeper.failedRetries == 0 && keeper.lostAt == start + .seconds(3))
    }

    @Test func retryWaitsGrowWithFailuresUpToTheCapAndKeepTheMinimumGap() {
        var keeper = LinkKeeper<String>(backoff: Self.backoff)
        keeper.wantsLink = true
        var previousBase = Duration.zero
        for failures in 0..<8 {
            let now = start + .seconds(100 * failures)
            let delay = keeper.retryDelay(now: now)
            let base = Self.backoff.base(afterFailures: failures)
            #expect(delay >= base / 2 && delay <= base, "after \(failures) failures: \(delay)")
            #expect(base >= previousBase && base <= .seconds(30))
            previousBase = base
            _ = keeper.startAttempt(now: now)
            // Right after an attempt starts, the next may not start within the minimum gap.
            #expect(keeper.remainingGap(now: now) == .seconds(1))
            #expect(keeper.remainingGap(now: now + .milliseconds(400)) == .milliseconds(600))
            #expect(keeper.retryDelay(now: now) >= .seconds(1))
            _ = keeper.down(wasUp: false, holdsSession: false, now: now)
        }
        #expect(keeper.remainingGap(now: start + .seconds(10_000)) == .zero)
    }

    @Test func aRetryThatFiresAfterSomethingElseStartedAnAttemptDoesNothing() {
        var keeper = LinkKeeper<String>(backoff: Self.backoff)
        let first = keeper.scheduleRetry()
        #expect(keeper.retryIsDue(first))
        let second = keeper.scheduleRetry()  // rescheduled: the first is moot
        #expect(!keeper.retryIsDue(first) && keeper.retryIsDue(second))
        _ = keeper.startAttempt(now: start)  // a request started one: the retry is moot
        #expect(!keeper.retryIsDue(second))
        _ = keeper.down(wasUp: false, holdsSession: false, now: start)
        let third = keeper.scheduleRetry()
        keeper.callOffRetries()  // the device left
        #expect(!keeper.retryIsDue(third))
    }
}
