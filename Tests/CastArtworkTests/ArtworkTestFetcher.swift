import CastArtwork
import CastTestSupport

extension ArtworkFetcher {
    /// The fetcher of the tests that are not about time: its bound stretched by
    /// `CASTD_TEST_TIME_SCALE` (4 under a sanitizer), so that a loaded machine (CI runs hundreds of
    /// tests at once, sanitized) cannot turn a refusal the test expects into a timeout. It may
    /// fetch from loopback, where the tests' image servers are: the in-process side of the one
    /// test-only setting (`CASTD_ARTWORK_ALLOW_LOOPBACK=1` for the processes tests start).
    static var forTests: ArtworkFetcher { forTests(timeout: Duration.seconds(15).scaledForTests) }

    /// A test fetcher with the bound `timeout`, allowed to fetch from loopback.
    static func forTests(timeout: Duration) -> ArtworkFetcher {
        var fetcher = ArtworkFetcher(timeout: timeout)
        fetcher.allowsLoopback = true
        return fetcher
    }
}
