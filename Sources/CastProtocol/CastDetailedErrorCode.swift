/// The detailed error codes a Cast receiver (CAF) puts in `detailedErrorCode` of LOAD_FAILED and
/// ERROR, as the SDK documents them (`MediaError.DetailedErrorCode`): their names, and what each
/// means to a person.
public enum CastDetailedErrorCode {
    /// The SDK's name of `code`, or nil for a code it does not document.
    public static func name(of code: Int) -> String? { table[code]?.name }

    /// What `code` means, in a few words for an error line: "it cannot play this media's
    /// format". Codes the SDK does not name are worded by their hundred (1xx media, 2xx DRM,
    /// 3xx network, 4xx manifest, 5xx segment, 6xx text, 9xx the app).
    public static func meaning(of code: Int) -> String {
        if let known = table[code] { return known.meaning }
        switch code / 100 {
        case 1: return "its player failed on the media"
        case 2: return "the media's DRM failed"
        case 3: return "it could not fetch the media"
        case 4: return "it could not read the media's manifest"
        case 5: return "it could not read a segment of the media"
        case 6: return "it could not read a text track"
        case 9: return "the app failed to load it"
        default: return "it could not load the media"
        }
    }

    /// Whether `code` says the device could not fetch something (the network classes), when the
    /// first thing to check is that the device can reach the URL.
    public static func isNetwork(_ code: Int) -> Bool {
        code == 103 || code == 201 || (300..<400).contains(code) || code == 313 || code == 314
    }

    private static let table: [Int: (name: String, meaning: String)] = [
        100: ("MEDIA_UNKNOWN", "its player failed on the media"),
        101: ("MEDIA_ABORTED", "fetching the media was aborted"),
        102: ("MEDIA_DECODE", "it could not decode the media"),
        103: ("MEDIA_NETWORK", "it could not fetch the media"),
        104: ("MEDIA_SRC_NOT_SUPPORTED", "it cannot play this media's format"),
        110: ("SOURCE_BUFFER_FAILURE", "it could not buffer the media"),
        200: ("MEDIAKEYS_UNKNOWN", "the media's DRM failed"),
        201: ("MEDIAKEYS_NETWORK", "it could not fetch the media's DRM licence"),
        202: ("MEDIAKEYS_UNSUPPORTED", "it does not support the media's DRM"),
        203: ("MEDIAKEYS_WEBCRYPTO", "the media's DRM failed to decrypt"),
        300: ("NETWORK_UNKNOWN", "it could not fetch the media"),
        301: ("SEGMENT_NETWORK", "it could not fetch a segment of the media"),
        311: ("HLS_NETWORK_MASTER_PLAYLIST", "it could not fetch the HLS master playlist"),
        312: ("HLS_NETWORK_PLAYLIST", "it could not fetch an HLS playlist"),
        313: ("HLS_NETWORK_NO_KEY_RESPONSE", "it got no answer for an HLS key"),
        314: ("HLS_NETWORK_KEY_LOAD", "it could not fetch an HLS key"),
        315: ("HLS_NETWORK_INVALID_SEGMENT", "an HLS segment was not valid"),
        316: ("HLS_SEGMENT_PARSING", "it could not read an HLS segment"),
        321: ("DASH_NETWORK", "it could not fetch a DASH segment"),
        322: ("DASH_NO_INIT", "a DASH stream has no initialisation segment"),
        331: ("SMOOTH_NETWORK", "it could not fetch a Smooth Streaming segment"),
        332: ("SMOOTH_NO_MEDIA_DATA", "a Smooth Streaming segment has no media"),
        400: ("MANIFEST_UNKNOWN", "it could not read the media's manifest"),
        411: ("HLS_MANIFEST_MASTER", "it could not read the HLS master playlist"),
        412: ("HLS_MANIFEST_PLAYLIST", "it could not read an HLS playlist"),
        420: ("DASH_MANIFEST_UNKNOWN", "it could not read the DASH manifest"),
        421: ("DASH_MANIFEST_NO_PERIODS", "the DASH manifest has no periods"),
        422: ("DASH_MANIFEST_NO_MIMETYPE", "the DASH manifest gives no MIME type"),
        423: ("DASH_INVALID_SEGMENT_INFO", "the DASH manifest's segment information is not valid"),
        431: ("SMOOTH_MANIFEST", "it could not read the Smooth Streaming manifest"),
        500: ("SEGMENT_UNKNOWN", "it could not read a segment of the media"),
        600: ("TEXT_UNKNOWN", "it could not read a text track"),
        900: ("APP", "the app failed to load it"),
        901: ("BREAK_CLIP_LOADING_ERROR", "it could not load an ad's clip"),
        902: ("BREAK_SEEK_INTERCEPTOR_ERROR", "the app's ad logic failed on a seek"),
        903: ("IMAGE_ERROR", "it could not load an image"),
        904: ("LOAD_INTERRUPTED", "the load was interrupted"),
        905: ("LOAD_FAILED", "the app failed to load it"),
        906: ("MEDIA_ERROR_MESSAGE", "the app sent an error for it"),
        999: ("GENERIC", "it failed for a reason it did not give"),
    ]
}
