import CastArtwork
import CastdAPI
import Logging

/// cast-mpris's artwork: CastArtwork's picker and shared on-disk cache (the Cast SDK's image
/// picker and image cache), for a thumbnail of ``hint``'s size.
public struct MPRISArtwork: MPRISArtworkSource {
    /// The most images of one media the picker looks at: a receiver app may list thousands
    /// (castd passes what the device sends); the first ones are the ones senders list first.
    public static let maximumImages = 256

    public let cache: ArtworkCache
    public var hint: ArtworkHint
    private let logger: Logger

    public init(cache: ArtworkCache, hint: ArtworkHint = .thumbnail, logger: Logger) {
        self.cache = cache
        self.hint = hint
        self.logger = logger
    }

    public func choose(_ images: [CastdImage]) -> String? {
        if images.count > Self.maximumImages {
            logger.notice(
                "the media lists \(images.count) images; the artwork is picked from the first \(Self.maximumImages)")
        }
        return ArtworkPicker.pick(Array(images.prefix(Self.maximumImages)), hint: hint)?.url
    }

    public func cachedPath(for url: String) async -> String? {
        cache.cachedFile(for: url)?.path
    }

    public func fetch(_ url: String) async -> String? {
        do {
            return try await cache.file(for: url).path
        } catch {
            // A newer media's artwork superseded this one: nothing went wrong.
            if case .cancelled = error {
                logger.debug("\(error)")
            } else {
                logger.warning("no artwork: \(error)")
            }
            return nil
        }
    }
}
