/// The image formats the artwork cache keeps, told apart by their first bytes, never by what a
/// server says its `Content-Type` is: a server that answers an image URL with an HTML page (a
/// login form, an error page) must not put that page where a program expects an image.
public enum ArtworkFormat: String, Sendable, Hashable, CaseIterable {
    case png
    case jpeg
    case gif
    case webp

    /// The cache file's extension, without the dot.
    public var fileExtension: String {
        switch self {
        case .png: "png"
        case .jpeg: "jpg"
        case .gif: "gif"
        case .webp: "webp"
        }
    }

    public var mimeType: String {
        switch self {
        case .png: "image/png"
        case .jpeg: "image/jpeg"
        case .gif: "image/gif"
        case .webp: "image/webp"
        }
    }

    /// How many leading bytes ``init(magic:)`` needs to decide (WebP's `RIFF....WEBP`).
    public static let magicLength = 12

    /// The format whose signature `bytes` start with, or nil: PNG `89 50 4E 47 0D 0A 1A 0A`,
    /// JPEG `FF D8 FF`, GIF `GIF87a` or `GIF89a`, WebP `RIFF` and `WEBP` at offset 8.
    public init?(magic bytes: some Collection<UInt8>) {
        let head = Array(bytes.prefix(Self.magicLength))
        func starts(with signature: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + signature.count && Array(head[offset..<offset + signature.count]) == signature
        }
        if starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if starts(with: Array("GIF87a".utf8)) || starts(with: Array("GIF89a".utf8)) {
            self = .gif
        } else if starts(with: Array("RIFF".utf8)) && starts(with: Array("WEBP".utf8), at: 8) {
            self = .webp
        } else {
            return nil
        }
    }

    /// The format a cache file's extension names.
    init?(fileExtension: some StringProtocol) {
        guard let format = Self.allCases.first(where: { $0.fileExtension == fileExtension }) else { return nil }
        self = format
    }
}
