import CastdAPI
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension CastdMediaInformation {
    /// Media at a URL, with the URL as its content id.
    ///
    /// - Parameters:
    ///   - url: Where the device fetches the media from.
    ///   - contentType: Its MIME type (`video/mp4`, `audio/mpeg`, `application/x-mpegURL`, …);
    ///     `""` leaves the choice to castd.
    ///   - streamType: `.buffered` (the default when unspecified), `.live` or `.none`.
    ///   - title: A title to show on the device and in status; `nil` for none.
    public init(url: String, contentType: String = "", streamType: CastdStreamType = .unspecified, title: String? = nil)
    {
        self.init()
        contentID = url
        contentURL = url
        self.contentType = contentType
        self.streamType = streamType
        if let title {
            var metadata = Castd_V1_MediaMetadata()
            metadata.title = title
            self.metadata = metadata
        }
    }
}
