import CastdAPI

/// What an image is for, and the size it will be drawn at: the Cast SDK's image hints
/// (`ImageHints` on Android, `GCKUIImageHints` on iOS).
public struct ArtworkHint: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A small picture beside the title: a notification, a status bar, an MPRIS client.
        case thumbnail
        /// A picture behind everything else: a lock screen, a full-screen player.
        case background
    }

    public var kind: Kind
    /// The size in pixels the image will be drawn at.
    public var width: Int
    public var height: Int

    public init(kind: Kind = .thumbnail, width: Int, height: Int) {
        self.kind = kind
        self.width = width
        self.height = height
    }

    /// A 512×512 thumbnail: what MPRIS clients and status bars draw, at up to 4× their own size.
    public static let thumbnail = ArtworkHint(kind: .thumbnail, width: 512, height: 512)
    /// A 1920×1080 background.
    public static let background = ArtworkHint(kind: .background, width: 1920, height: 1080)
}

/// Chooses one of the media's images for a hint, as the Cast SDK's default image picker does.
///
/// The smallest image at least as large as the hint in both dimensions (smallest by area), so
/// that it is scaled down rather than up and no more is fetched than needed; if none is that
/// large, the largest. Images whose size the sender did not give (a width or height of 0) come
/// after every image with a size; among images without sizes the first wins, since senders
/// list the one they prefer first. Equal areas keep the earlier image. Images with an empty URL
/// are never chosen. The hint's kind does not change the choice, only its size does.
public enum ArtworkPicker {
    /// The image to fetch for `hint`, or nil if no image has a URL.
    public static func pick(_ images: [CastdImage], hint: ArtworkHint) -> CastdImage? {
        let candidates = images.filter { !$0.url.isEmpty }
        let sized = candidates.filter { $0.width > 0 && $0.height > 0 }
        guard !sized.isEmpty else { return candidates.first }
        func area(_ image: CastdImage) -> UInt64 { UInt64(image.width) * UInt64(image.height) }
        let fits = sized.filter { Int($0.width) >= hint.width && Int($0.height) >= hint.height }
        if var best = fits.first {
            for image in fits.dropFirst() where area(image) < area(best) { best = image }
            return best
        }
        var best = sized[0]
        for image in sized.dropFirst() where area(image) > area(best) { best = image }
        return best
    }
}
