import CastArtwork
import CastTestSupport

extension ArtworkFetcher {
    /// The fetcher of the tests that are not about time: its bound stretched by
    /// `CASTD_TEST_TIME_SCALE` (4 under a sanitizer), so that a loaded machine (CI runs hundreds of
    /// tests at once, sanitized) cannot turn a refusal the test expects into a timeout.
    static var forTests: ArtworkFetcher { ArtworkFetcher(timeout: Duration.seconds(15).scaledForTests) }
}
