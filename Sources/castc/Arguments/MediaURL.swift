import ArgumentParser
import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What `castc load` accepts as media: a URL the device can fetch.
enum MediaURL {
    /// Checks `text` by castd's rule (``CastdValidation/urlProblem(_:)``: a URL with a scheme, a
    /// host for http and https, no spaces), in castc's words.
    static func validate(_ text: String) throws {
        let advice = "give a URL the device can fetch, such as https://example.com/movie.mp4"
        switch CastdValidation.urlProblem(text) {
        case .notAbsolute?: throw ValidationError("'\(text)' is not a URL with a scheme; \(advice)")
        case .noHost?: throw ValidationError("'\(text)' has no host; \(advice)")
        case .spaces?: throw ValidationError("'\(text)' contains spaces (percent-encode them); \(advice)")
        case nil: return
        }
    }

    /// A MIME type for common media file extensions in `url`'s path, or nil.
    static func guessContentType(_ text: String) -> String? {
        guard let url = URL(string: text) else { return nil }
        let types = [
            "mp4": "video/mp4", "m4v": "video/mp4", "webm": "video/webm", "mkv": "video/x-matroska",
            "mov": "video/quicktime", "ts": "video/mp2t", "m3u8": "application/x-mpegURL",
            "mpd": "application/dash+xml", "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac",
            "ogg": "audio/ogg", "oga": "audio/ogg", "opus": "audio/ogg", "flac": "audio/flac",
            "wav": "audio/wav", "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png",
            "gif": "image/gif", "webp": "image/webp", "vtt": "text/vtt", "ttml": "application/ttml+xml",
            "dfxp": "application/ttml+xml", "srt": "application/x-subrip",
        ]
        return types[url.pathExtension.lowercased()]
    }

    /// Checks a --content-type value: a MIME type such as video/mp4.
    static func validateContentType(_ text: String) throws {
        // type/subtype, optionally followed by parameters: video/mp4; codecs="avc1.64001F"
        let essence = text.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let parts = essence.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, !essence.contains(" ") else {
            throw ValidationError("'\(text)' is not a content type; give a MIME type such as video/mp4 or audio/mpeg")
        }
    }
}
