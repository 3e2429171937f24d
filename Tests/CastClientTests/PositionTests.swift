import CastTestSupport
import CastClient
import Foundation
import Testing

@Suite(.tags(.cpuBound)) struct PositionTests {
    static let reported = Date(timeIntervalSince1970: 1_700_000_000)

    static func status(
        _ state: CastdPlayerState,
        at time: Double,
        rate: Double = 1,
        duration: Double = 0
    ) -> CastdMediaStatus {
        var status = CastdMediaStatus()
        status.playerState = state
        status.currentTime = time
        status.playbackRate = rate
        status.updatedAtMs = Int64(reported.timeIntervalSince1970 * 1000)
        if duration > 0 {
            var media = CastdMediaInformation()
            media.duration = duration
            status.media = media
        }
        return status
    }

    @Test func playingAdvancesWithTheClock() {
        let status = Self.status(.playing, at: 60, duration: 600)
        #expect(status.estimatedPosition(at: Self.reported) == 60)
        #expect(status.estimatedPosition(at: Self.reported.addingTimeInterval(12.5)) == 72.5)
    }

    @Test func playbackRateScalesTheAdvance() {
        let status = Self.status(.playing, at: 10, rate: 2)
        #expect(status.estimatedPosition(at: Self.reported.addingTimeInterval(5)) == 20)
        let half = Self.status(.playing, at: 10, rate: 0.5)
        #expect(half.estimatedPosition(at: Self.reported.addingTimeInterval(4)) == 12)
    }

    @Test func unreportedRateCountsAsOne() {
        let status = Self.status(.playing, at: 10, rate: 0)
        #expect(status.estimatedPosition(at: Self.reported.addingTimeInterval(3)) == 13)
    }

    @Test(arguments: [CastdPlayerState.paused, .buffering, .idle, .loading, .unknown])
    func otherStatesStayPut(state: CastdPlayerState) {
        let status = Self.status(state, at: 42, duration: 600)
        #expect(status.estimatedPosition(at: Self.reported.addingTimeInterval(30)) == 42)
    }

    @Test func clampedToTheDuration() {
        let status = Self.status(.playing, at: 590, duration: 600)
        #expect(status.estimatedPosition(at: Self.reported.addingTimeInterval(30)) == 600)
    }

    @Test func unknownDurationIsNotAClamp() {
        let status = Self.status(.playing, at: 590)
        #expect(status.estimatedPosition(at: Self.reported.addingTimeInterval(30)) == 620)
    }

    @Test func aClockBehindTheReportDoesNotGoBack() {
        let status = Self.status(.playing, at: 60)
        #expect(status.estimatedPosition(at: Self.reported.addingTimeInterval(-5)) == 60)
    }

    @Test func withoutATimestampThereIsNoEstimate() {
        var status = Self.status(.playing, at: 60)
        status.updatedAtMs = 0
        #expect(status.estimatedPosition(at: Self.reported) == 60)
    }
}
