import CastTestSupport
import CastProtocol
import Testing

@testable import CastEmulator

/// Ad breaks: pre-roll, mid-roll, post-roll, skippable clips and SKIP_AD.
@Suite("Ad breaks (state machine)", .tags(.cpuBound))
struct AdBreakTests {
    /// 120 s of content with the given breaks and clips c1 (10 s, skippable after 5 s),
    /// c2 (8 s, never skippable), c3 (6 s, whenSkippable -1: never).
    static func withBreaks(_ breaks: JSONValue) -> JSONValue {
        media([
            "breaks": breaks,
            "breakClips": [
                ["id": "c1", "duration": 10, "whenSkippable": 5, "contentId": "http://ads.invalid/1.mp4"],
                ["id": "c2", "duration": 8],
                ["id": "c3", "duration": 6, "whenSkippable": -1],
            ],
        ])
    }

    static let skipAdBit = CastMediaCommand.skipAd

    @Test(
        "Pre-roll: breakStatus while it plays, content time stays at 0, clip time runs; then watched and content plays")
    func preRoll() throws {
        let harness = try DeviceHarness.loaded(
            Self.withBreaks([["id": "pre", "position": 0, "breakClipIds": ["c2", "c3"]]]))
        let start = try #require(harness.status())
        #expect(start["playerState"] == "PLAYING")
        #expect(
            start["breakStatus"] == [
                "breakId": "pre", "breakClipId": "c2", "currentBreakTime": 0, "currentBreakClipTime": 0,
            ])
        #expect((start["supportedMediaCommands"]?.intValue ?? 0) & CastMediaCommand.seek == 0, "no seeking in an ad")

        #expect(harness.advance(by: .seconds(3)).isEmpty)
        let during = try #require(harness.status())
        #expect(during["currentTime"] == 0)
        #expect(during["breakStatus"]?["currentBreakClipTime"] == 3)

        let nextClip = harness.advance(by: .seconds(7)).broadcastStatuses
        #expect(nextClip.count == 1)
        #expect(nextClip.first?["breakStatus"]?["breakClipId"] == "c3")
        // Told as of the moment c2 ended (8 s).
        #expect(nextClip.first?["breakStatus"]?["currentBreakTime"] == 8)
        #expect(nextClip.first?["breakStatus"]?["currentBreakClipTime"] == 0)
        #expect(harness.status()?["breakStatus"]?["currentBreakTime"] == 10, "8 s of c2, 2 s of c3")
        #expect(harness.status()?["breakStatus"]?["currentBreakClipTime"] == 2)
        #expect(nextClip.first?["breakStatus"]?["whenSkippable"] == nil)

        let content = harness.advance(by: .seconds(4)).broadcastStatuses
        #expect(content.count == 1)
        #expect(content.first?["breakStatus"] == nil)
        #expect(content.first?["media"]?["breaks"]?.arrayValue?.first?["isWatched"] == true)
        #expect(content.first?["currentTime"] == 0)
        _ = harness.advance(by: .seconds(10))
        #expect(harness.status()?["currentTime"] == 10)
        #expect(harness.device.nextDeadline == harness.now + .seconds(110))
    }

    @Test("Mid-roll at 60 s: plays when the content gets there (a deadline), content time holds at 60, then resumes")
    func midRoll() throws {
        let harness = try DeviceHarness.loaded(
            Self.withBreaks([["id": "mid", "position": 60, "breakClipIds": ["c2"]]]))
        #expect(harness.status()?["breakStatus"] == nil)
        #expect(harness.device.nextDeadline == .seconds(60))
        let reached = harness.advance(by: .seconds(65)).broadcastStatuses
        #expect(reached.count == 1)
        #expect(reached.first?["breakStatus"]?["breakId"] == "mid")
        #expect(reached.first?["currentTime"] == 60)
        #expect(harness.status()?["currentTime"] == 60)
        #expect(harness.status()?["breakStatus"]?["currentBreakClipTime"] == 5)
        _ = harness.advance(by: .seconds(3))
        #expect(harness.status()?["breakStatus"] == nil)
        #expect(harness.status()?["currentTime"] == 60)
        // The content ends 60 s later, not 52: the break took 8 s of clock.
        #expect(harness.device.nextDeadline == .seconds(128))

        // Seeking back before a watched break does not play it again.
        _ = harness.command("SEEK", 1, ["currentTime": 50])
        #expect(harness.advance(by: .seconds(20)).isEmpty)
        #expect(harness.status()?["currentTime"] == 70)
    }

    @Test(
        "Skippable after whenSkippable: SKIP_AD before is INVALID_COMMAND, the moment is broadcast with SKIP_AD, then it skips"
    )
    func skip() throws {
        let harness = try DeviceHarness.loaded(
            Self.withBreaks([["id": "pre", "position": 0, "breakClipIds": ["c1", "c2"]]]))
        #expect(harness.status()?["breakStatus"]?["whenSkippable"] == 5)
        #expect((harness.status()?["supportedMediaCommands"]?.intValue ?? 0) & Self.skipAdBit == 0)
        let early = harness.command("SKIP_AD", 1)
        #expect(early.count == 1)
        #expect(early.reply(to: 1) == ["type": "INVALID_REQUEST", "requestId": 1, "reason": "INVALID_COMMAND"])

        let skippable = harness.advance(by: .seconds(5)).broadcastStatuses
        #expect(skippable.count == 1)
        #expect((skippable.first?["supportedMediaCommands"]?.intValue ?? 0) & Self.skipAdBit == Self.skipAdBit)

        let skipped = harness.command("SKIP_AD", 2)
        #expect(skipped.reply(to: 2)?.firstStatus?["breakStatus"]?["breakClipId"] == "c2")
        #expect(skipped.broadcastStatuses.count == 1)
        // c2 is never skippable.
        _ = harness.advance(by: .seconds(7))
        #expect(harness.command("SKIP_AD", 3).reply(to: 3)?["reason"] == "INVALID_COMMAND")
        _ = harness.advance(by: .seconds(1))
        #expect(harness.status()?["breakStatus"] == nil)
        #expect(harness.command("SKIP_AD", 4).reply(to: 4) == ["type": "INVALID_PLAYER_STATE", "requestId": 4])
    }

    @Test("Skipping the last clip resumes the content and marks the break watched")
    func skipLastClip() throws {
        let harness = try DeviceHarness.loaded(
            Self.withBreaks([["id": "mid", "position": 30, "breakClipIds": ["c1"]]]))
        _ = harness.advance(by: .seconds(36))
        let resumed = try #require(harness.command("SKIP_AD", 1).reply(to: 1)?.firstStatus)
        #expect(resumed["breakStatus"] == nil)
        #expect(resumed["currentTime"] == 30)
        #expect(resumed["media"]?["breaks"]?.arrayValue?.first?["isWatched"] == true)
    }

    @Test("Post-roll (position -1) plays when the content ends, then the item finishes")
    func postRoll() throws {
        let harness = try DeviceHarness.loaded(
            Self.withBreaks([["id": "post", "position": -1, "breakClipIds": ["c2"]]]))
        let atEnd = harness.advance(by: .seconds(120)).broadcastStatuses
        #expect(atEnd.first?["breakStatus"]?["breakId"] == "post")
        #expect(atEnd.first?["currentTime"] == 120)
        let finished = harness.advance(by: .seconds(8)).broadcastStatuses
        #expect(finished.last?["idleReason"] == "FINISHED")
        #expect(harness.device.player == nil)
    }

    @Test("PAUSE during an ad freezes the clip; breaks without clips are ignored")
    func pauseInAd() throws {
        let harness = try DeviceHarness.loaded(
            Self.withBreaks([
                ["id": "empty", "position": 0, "breakClipIds": ["nope"]],
                ["id": "pre", "position": 0, "breakClipIds": ["c2"]],
            ])
        )
        #expect(harness.status()?["breakStatus"]?["breakId"] == "pre")
        _ = harness.advance(by: .seconds(2))
        _ = harness.command("PAUSE", 1)
        #expect(harness.device.nextDeadline == nil)
        _ = harness.advance(by: .seconds(100))
        #expect(harness.status()?["breakStatus"]?["currentBreakClipTime"] == 2)
        #expect(harness.command("SEEK", 2, ["currentTime": 10]).reply(to: 2)?["reason"] == "INVALID_COMMAND")
    }
}
