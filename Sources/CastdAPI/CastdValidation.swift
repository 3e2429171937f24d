#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import SwiftProtobuf

/// The rules a castd.v1 request must meet, in one place: castd checks every request with them
/// before anything reaches a device, and clients (CastClient, castc) may check with them before
/// sending. A request that breaks one gets INVALID_ARGUMENT with a sentence saying what is
/// allowed. JSON text fields (`*_json`) are read, and checked, where castd turns a request into
/// the device's message.
public enum CastdValidation {
    /// What a Cast message's JSON may weigh so that it fits one 64 KiB CastV2 frame with its
    /// envelope (the frame limit of devices and of castd's links).
    public static let maximumCastPayload = 64 * 1024 - 1024

    /// The most app ids one call may ask about (each is a question to every device asked).
    public static let maximumAppIDs = 32

    /// The playback rates receivers take: half speed to double speed.
    public static let playbackRates: ClosedRange<Double> = 0.5...2.0

    /// Custom namespaces start with this.
    public static let namespacePrefix = "urn:x-cast:"

    /// Checks `request` against the rules of `method`: the one table of which rule applies to
    /// which method. castd's router applies it to every call it decodes, and CastClient to every
    /// call before sending; a method without rules of its own says so here. Throws
    /// INVALID_ARGUMENT, also for a request that is not the method's request type.
    public static func check(_ request: any SwiftProtobuf.Message, for method: CastdMethod) throws(CastdError) {
        func typed<Request: SwiftProtobuf.Message>(_: Request.Type) throws(CastdError) -> Request {
            guard let typed = request as? Request else {
                throw CastdError(
                    .invalidArgument,
                    "\(method.path) takes a \(Request.protoMessageName), not a \(type(of: request).protoMessageName)")
            }
            return typed
        }
        switch method {
        case .listDevices: try appIDs(try typed(Castd_V1_ListDevicesRequest.self).appIds)
        case .getAppAvailability: try appAvailability(try typed(Castd_V1_AppAvailabilityRequest.self))
        case .startSession: try startSession(try typed(Castd_V1_StartSessionRequest.self))
        case .load: try load(try typed(Castd_V1_LoadRequest.self))
        case .seek: try seek(try typed(Castd_V1_SeekRequest.self))
        case .setPlaybackRate: try rate(try typed(Castd_V1_SetPlaybackRateRequest.self).rate)
        case .editTracks: try editTracks(try typed(Castd_V1_EditTracksRequest.self))
        case .setStreamVolume: try volume(try typed(Castd_V1_SetVolumeRequest.self), allowSteps: false)
        case .setVolume: try volume(try typed(Castd_V1_SetVolumeRequest.self), allowSteps: true)
        case .queueLoad: try queueLoad(try typed(Castd_V1_QueueLoadRequest.self))
        case .queueInsert: try newItems(try typed(Castd_V1_QueueInsertRequest.self).items)
        case .queueRemove: try queueRemove(try typed(Castd_V1_QueueRemoveRequest.self))
        case .queueReorder: try queueReorder(try typed(Castd_V1_QueueReorderRequest.self))
        case .queueUpdate: try queueUpdate(try typed(Castd_V1_QueueUpdateRequest.self))
        case .sendMessage: try sendMessage(try typed(Castd_V1_SendMessageRequest.self))
        case .listen: try namespace(try typed(Castd_V1_ListenRequest.self).namespace)
        case .setLogFilter: try setLogFilter(try typed(Castd_V1_SetLogFilterRequest.self))
        case .forgetDevice: try forgetDevice(try typed(Castd_V1_ForgetDeviceRequest.self))
        // Their requests name a device or a session (castd resolves the selector) or nothing.
        case .getStatus, .endSession, .play, .pause, .stop, .skipAd, .requestMediaStatus, .watch, .getLogFilter,
            .streamLogs, .getDevice, .getQueue:
            return
        }
    }

    /// SetLogFilter: a known level, a pattern castd takes, and something to do (a level, a
    /// pattern, or the reset).
    public static func setLogFilter(_ r: Castd_V1_SetLogFilterRequest) throws(CastdError) {
        if case .UNRECOGNIZED(let n) = r.level { throw CastdError(.invalidArgument, "unknown log level \(n)") }
        guard !r.pattern.isEmpty else {
            guard r.level != .unspecified || r.reset else {
                throw CastdError(
                    .invalidArgument,
                    "set a level (the minimum), a pattern and its level, a pattern alone (to remove it), or reset")
            }
            return
        }
        if let refusal = CastdLogPattern.refusal(r.pattern) { throw CastdError(.invalidArgument, refusal) }
    }

    /// ForgetDevice: a device named.
    public static func forgetDevice(_ r: Castd_V1_ForgetDeviceRequest) throws(CastdError) {
        // Not blank: spaces and tabs alone (CharacterSet.whitespaces) name no device.
        let blank = r.device.unicodeScalars.allSatisfy {
            $0 == "\t" || $0.properties.generalCategory == .spaceSeparator
        }
        guard !blank else {
            throw CastdError(.invalidArgument, "name the device whose pinned key castd should forget")
        }
    }

    public static func appIDs(_ ids: [String]) throws(CastdError) {
        guard ids.count <= maximumAppIDs else {
            throw CastdError(.invalidArgument, "\(ids.count) app ids asked at once; at most \(maximumAppIDs)")
        }
        for id in ids { try appID(id) }
    }

    public static func appID(_ id: String) throws(CastdError) {
        guard !id.isEmpty, id.count <= 64,
            id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." })
        else {
            throw CastdError(.invalidArgument, "invalid app id '\(id)' (letters, digits, '_', '-', '.' only)")
        }
    }

    public static func appAvailability(_ r: Castd_V1_AppAvailabilityRequest) throws(CastdError) {
        guard !r.appIds.isEmpty else { throw CastdError(.invalidArgument, "name at least one app id") }
        try appIDs(r.appIds)
    }

    public static func launchOptions(_ options: CastdLaunchOptions) throws(CastdError) {
        if !options.language.isEmpty,
            options.language.count > 35 || !options.language.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" })
        {
            throw CastdError(.invalidArgument, "invalid language '\(options.language)' (a BCP-47 tag such as en-US)")
        }
        if options.credentials.utf8.count + options.credentialsType.utf8.count > 16 * 1024 {
            throw CastdError(.invalidArgument, "launch credentials over 16 KiB do not fit in a Cast message")
        }
    }

    public static func startSession(_ r: Castd_V1_StartSessionRequest) throws(CastdError) {
        if !r.appID.isEmpty { try appID(r.appID) }
        if case .UNRECOGNIZED(let n) = r.mode { throw CastdError(.invalidArgument, "unknown start mode \(n)") }
        try launchOptions(r.launch)
    }

    public static func rate(_ rate: Double) throws(CastdError) {
        guard rate.isFinite, playbackRates.contains(rate) else {
            throw CastdError(.invalidArgument, "playback rate must be between 0.5 and 2.0, not \(rate)")
        }
    }

    public static func ids(_ ids: [Int64], what: String) throws(CastdError) {
        if let bad = ids.first(where: { $0 <= 0 }) {
            throw CastdError(.invalidArgument, "\(what) ids are positive numbers, not \(bad)")
        }
    }

    /// SetVolume (the device's, `allowSteps`) or SetStreamVolume.
    public static func volume(_ r: Castd_V1_SetVolumeRequest, allowSteps: Bool) throws(CastdError) {
        if r.steps != 0 {
            guard allowSteps else {
                throw CastdError(.invalidArgument, "volume steps are for the device's volume only")
            }
            guard !r.hasLevel else { throw CastdError(.invalidArgument, "set a volume level or steps, not both") }
            guard abs(r.steps) <= 100 else {
                throw CastdError(.invalidArgument, "volume steps must be between -100 and 100, not \(r.steps)")
            }
            return
        }
        guard r.hasLevel || r.hasMuted else {
            throw CastdError(.invalidArgument, "set a volume level (0.0–1.0), muted, or steps")
        }
        if r.hasLevel, !(r.level.isFinite && (0...1).contains(r.level)) {
            throw CastdError(.invalidArgument, "volume level must be between 0.0 and 1.0, not \(r.level)")
        }
    }

    public static func seek(_ r: Castd_V1_SeekRequest) throws(CastdError) {
        guard r.position.isFinite, r.relative || r.position >= 0 else {
            throw CastdError(.invalidArgument, "seek position must be a number of seconds ≥ 0, not \(r.position)")
        }
        if case .UNRECOGNIZED(let n) = r.resumeState {
            throw CastdError(.invalidArgument, "unknown resume state \(n)")
        }
    }

    public static func editTracks(_ r: Castd_V1_EditTracksRequest) throws(CastdError) {
        guard r.hasActiveTracks || r.hasTextTrackStyle else {
            throw CastdError(.invalidArgument, "set active_tracks, text_track_style or both")
        }
        if r.hasActiveTracks { try ids(r.activeTracks.trackIds, what: "track") }
        if r.hasTextTrackStyle { try style(r.textTrackStyle) }
    }

    public static func style(_ style: CastdTextTrackStyle) throws(CastdError) {
        for (name, color) in [
            ("foreground_color", style.foregroundColor), ("background_color", style.backgroundColor),
            ("edge_color", style.edgeColor), ("window_color", style.windowColor),
        ] where !color.isEmpty {
            let hex = color.dropFirst()
            guard color.hasPrefix("#"), hex.count == 8 || hex.count == 6, hex.allSatisfy(\.isHexDigit) else {
                throw CastdError(.invalidArgument, "\(name) must be a colour like #RRGGBBAA, not '\(color)'")
            }
        }
        if style.fontScale != 0, !(style.fontScale.isFinite && (0.1...10).contains(style.fontScale)) {
            throw CastdError(.invalidArgument, "font_scale must be between 0.1 and 10, not \(style.fontScale)")
        }
    }

    /// What keeps a text from being a URL a device can fetch.
    public enum URLProblem: Sendable, Equatable {
        /// It has no scheme.
        case notAbsolute
        /// An http or https URL without a host.
        case noHost
        /// It contains white space (which must be percent-encoded).
        case spaces
    }

    /// What keeps `text` from being a URL a device can fetch, or nil: the rule of ``url(_:what:)``,
    /// for clients that say it in their own words.
    public static func urlProblem(_ text: String) -> URLProblem? {
        guard let components = URLComponents(string: text), let scheme = components.scheme, !scheme.isEmpty else {
            return .notAbsolute
        }
        if ["http", "https"].contains(scheme.lowercased()) && (components.host ?? "").isEmpty { return .noHost }
        if text.contains(where: { $0.isWhitespace }) { return .spaces }
        return nil
    }

    public static func url(_ text: String, what: String = "URL") throws(CastdError) {
        switch urlProblem(text) {
        case .notAbsolute?:
            throw CastdError(
                .invalidArgument, "invalid \(what) '\(text)': not an absolute URL (e.g. https://host/video.mp4)")
        case .noHost?:
            throw CastdError(.invalidArgument, "invalid \(what) '\(text)': no host")
        case .spaces?:
            throw CastdError(.invalidArgument, "invalid \(what) '\(text)': contains spaces (percent-encode them)")
        case nil:
            return
        }
    }

    /// The longest handle castd gives for a handed-over file (rpc.proto: FileHandover).
    public static let maximumFileHandleLength = 64

    /// A handed-over file's handle where `what` names one, given `alone` (not beside `other`).
    static func fileHandle(_ handle: String, alone: Bool, what: String, other: String) throws(CastdError) {
        guard alone else {
            throw CastdError(.invalidArgument, "\(what) gives both a file and \(other); give one of them")
        }
        guard handle.utf8.count <= maximumFileHandleLength else {
            throw CastdError(.invalidArgument, "\(what)'s file is not a handle castd gave (too long)")
        }
    }

    /// Media information: content, URLs, times, enum values, tracks, ad breaks.
    public static func media(_ media: CastdMediaInformation, what: String = "media") throws(CastdError) {
        let content = media.contentURL.isEmpty ? media.contentID : media.contentURL
        if !media.file.isEmpty {
            guard content.isEmpty else {
                throw CastdError(
                    .invalidArgument, "\(what) gives both a file and content_id or content_url; give one of them")
            }
            try fileHandle(media.file, alone: true, what: what, other: "content_id")
        } else {
            guard !content.isEmpty || !media.entity.isEmpty else {
                throw CastdError(
                    .invalidArgument, "\(what) has no content: set content_url (a URL), content_id, entity or file")
            }
            if !media.contentURL.isEmpty || content.contains("://") { try url(content) }
        }
        if !media.duration.isFinite || media.duration < 0 {
            throw CastdError(.invalidArgument, "\(what) duration must be ≥ 0 seconds, not \(media.duration)")
        }
        if case .UNRECOGNIZED(let n) = media.streamType {
            throw CastdError(.invalidArgument, "unknown stream type \(n)")
        }
        if media.hasMetadata {
            if case .UNRECOGNIZED(let n) = media.metadata.metadataType {
                throw CastdError(.invalidArgument, "unknown metadata type \(n) (0 generic … 4 photo)")
            }
            for image in media.metadata.images {
                if image.file.isEmpty {
                    try url(image.url, what: "image URL")
                } else {
                    try fileHandle(image.file, alone: image.url.isEmpty, what: "an image", other: "url")
                }
            }
        }
        var trackIDs: Set<Int64> = []
        for track in media.tracks {
            guard track.trackID > 0, trackIDs.insert(track.trackID).inserted else {
                throw CastdError(.invalidArgument, "track ids must be positive and unique, not \(track.trackID)")
            }
            guard track.type != .unspecified else {
                throw CastdError(.invalidArgument, "track \(track.trackID) needs a type (text, audio or video)")
            }
            if !track.file.isEmpty {
                guard track.type == .text else {
                    throw CastdError(
                        .invalidArgument, "track \(track.trackID) gives a file: only text tracks (subtitles) can")
                }
                try fileHandle(
                    track.file, alone: track.contentID.isEmpty, what: "track \(track.trackID)", other: "content_id")
            } else if !track.contentID.isEmpty, track.contentID.contains("://") {
                try url(track.contentID, what: "track URL")
            }
        }
        if media.hasTextTrackStyle { try style(media.textTrackStyle) }
        let clipIDs = Set(media.breakClips.map(\.id))
        for clip in media.breakClips {
            guard !clip.id.isEmpty else { throw CastdError(.invalidArgument, "every ad break clip needs an id") }
            guard clip.duration.isFinite, clip.duration >= 0 else {
                throw CastdError(.invalidArgument, "ad break clip \(clip.id) duration must be ≥ 0 seconds")
            }
            if !clip.contentURL.isEmpty { try url(clip.contentURL, what: "ad clip URL") }
            if !clip.posterURL.isEmpty { try url(clip.posterURL, what: "ad clip poster URL") }
            if !clip.vastAdsRequest.adTagURL.isEmpty {
                try url(clip.vastAdsRequest.adTagURL, what: "ad clip VAST request URL")
            }
            if clip.hasVastAdsRequest, clip.vastAdsRequest.adTagURL.isEmpty, clip.vastAdsRequest.adsResponse.isEmpty {
                throw CastdError(
                    .invalidArgument,
                    "ad break clip \(clip.id) has a VAST request with neither a tag URL nor a response")
            }
        }
        for adBreak in media.breaks {
            guard !adBreak.id.isEmpty else { throw CastdError(.invalidArgument, "every ad break needs an id") }
            guard adBreak.position.isFinite, adBreak.position >= -1 else {
                throw CastdError(
                    .invalidArgument, "ad break \(adBreak.id) position must be ≥ 0 seconds (or -1 for the end)")
            }
            if let missing = adBreak.breakClipIds.first(where: { !clipIDs.contains($0) }) {
                throw CastdError(
                    .invalidArgument, "ad break \(adBreak.id) names clip '\(missing)', which is not in break_clips")
            }
        }
    }

    public static func load(_ r: Castd_V1_LoadRequest) throws(CastdError) {
        try media(r.media)
        guard r.startTime.isFinite, r.startTime >= 0 else {
            throw CastdError(.invalidArgument, "start_time must be a number of seconds ≥ 0, not \(r.startTime)")
        }
        if r.media.duration > 0, r.startTime > r.media.duration {
            // The rule for positions: outside the media is OUT_OF_RANGE, naming its range.
            func seconds(_ value: Double) -> String {
                value.rounded() == value && abs(value) < 1e15 ? "\(Int64(value)) s" : "\(value) s"
            }
            throw CastdError(
                .outOfRange,
                "cannot start at \(seconds(r.startTime)) in the media: it runs from 0 s to \(seconds(r.media.duration))"
            )
        }
        if r.playbackRate != 0 { try rate(r.playbackRate) }
        if !r.activeTrackIds.isEmpty {
            let known = Set(r.media.tracks.map(\.trackID))
            if let unknown = r.activeTrackIds.first(where: { !known.contains($0) }) {
                throw CastdError(.invalidArgument, "active track \(unknown) is not one of the media's tracks")
            }
        }
    }

    /// Items to add to a queue (QueueLoad, QueueInsert): at least one, each with media.
    public static func newItems(_ items: [CastdQueueItem]) throws(CastdError) {
        guard !items.isEmpty else { throw CastdError(.invalidArgument, "give at least one queue item") }
        for (index, item) in items.enumerated() {
            guard item.hasMedia else { throw CastdError(.invalidArgument, "queue item \(index + 1) has no media") }
            try media(item.media, what: "queue item \(index + 1)")
            try itemTimes(item, index: index)
        }
    }

    private static func itemTimes(_ item: CastdQueueItem, index: Int) throws(CastdError) {
        for (name, value) in [("start_time", item.startTime), ("preload_time", item.preloadTime)] {
            guard value.isFinite, value >= 0 else {
                throw CastdError(.invalidArgument, "queue item \(index + 1) \(name) must be ≥ 0 seconds, not \(value)")
            }
        }
    }

    public static func queueLoad(_ r: Castd_V1_QueueLoadRequest) throws(CastdError) {
        try newItems(r.items)
        guard Int(r.startIndex) < r.items.count else {
            throw CastdError(.invalidArgument, "start_index \(r.startIndex) is past the last of \(r.items.count) items")
        }
        if case .UNRECOGNIZED(let n) = r.repeatMode { throw CastdError(.invalidArgument, "unknown repeat mode \(n)") }
        guard r.startTime.isFinite, r.startTime >= 0 else {
            throw CastdError(.invalidArgument, "start_time must be ≥ 0 seconds, not \(r.startTime)")
        }
    }

    public static func queueRemove(_ r: Castd_V1_QueueRemoveRequest) throws(CastdError) {
        guard !r.itemIds.isEmpty else { throw CastdError(.invalidArgument, "name at least one item id to remove") }
        try ids(r.itemIds, what: "item")
    }

    public static func queueReorder(_ r: Castd_V1_QueueReorderRequest) throws(CastdError) {
        guard !r.itemIds.isEmpty else { throw CastdError(.invalidArgument, "name at least one item id to move") }
        try ids(r.itemIds + (r.insertBeforeItemID != 0 ? [r.insertBeforeItemID] : []), what: "item")
        if r.itemIds.contains(r.insertBeforeItemID) {
            throw CastdError(.invalidArgument, "cannot move item \(r.insertBeforeItemID) before itself")
        }
    }

    public static func queueUpdate(_ r: Castd_V1_QueueUpdateRequest) throws(CastdError) {
        if r.hasRepeatMode, case .UNRECOGNIZED(let n) = r.repeatMode {
            throw CastdError(.invalidArgument, "unknown repeat mode \(n)")
        }
        if r.currentItemID != 0 { try ids([r.currentItemID], what: "item") }
        guard r.currentItemID == 0 || r.jump == 0 else {
            throw CastdError(.invalidArgument, "jump to an item or by an offset, not both")
        }
        guard r.currentTime.isFinite, r.currentTime >= 0 else {
            throw CastdError(.invalidArgument, "current_time must be ≥ 0 seconds, not \(r.currentTime)")
        }
        guard r.currentItemID != 0 || r.jump != 0 || r.hasRepeatMode || !r.items.isEmpty else {
            throw CastdError(.invalidArgument, "nothing to update: set current_item_id, jump, repeat_mode or items")
        }
        try ids(r.items.map(\.itemID), what: "item")
        for (index, item) in r.items.enumerated() {
            if item.hasMedia { try media(item.media, what: "queue item \(item.itemID)") }
            try itemTimes(item, index: index)
        }
    }

    public static func namespace(_ namespace: String) throws(CastdError) {
        guard namespace.hasPrefix(namespacePrefix), namespace.count > namespacePrefix.count else {
            throw CastdError(
                .invalidArgument,
                "invalid namespace '\(namespace)': custom namespaces start with urn:x-cast: (e.g. urn:x-cast:com.example.app)"
            )
        }
        guard namespace.utf8.count <= 128, !namespace.contains(where: { $0.isWhitespace || $0.isNewline }) else {
            throw CastdError(.invalidArgument, "invalid namespace '\(namespace)': at most 128 characters, no spaces")
        }
        if namespace.hasPrefix("urn:x-cast:com.google.cast.") {
            throw CastdError(
                .invalidArgument,
                "\(namespace) is reserved for the Cast platform; use castd's media and session methods")
        }
    }

    /// SendMessage: a namespace apps may use, and a message (its JSON, if JSON, is read where
    /// castd sends it).
    public static func sendMessage(_ r: Castd_V1_SendMessageRequest) throws(CastdError) {
        try namespace(r.namespace)
        guard let payload = r.payload else {
            throw CastdError(.invalidArgument, "the message is empty: set text or json")
        }
        if case .text(let text) = payload { try messageSize(text) }
    }

    /// A custom message must fit in one 64 KiB Cast message.
    public static func messageSize(_ text: String) throws(CastdError) {
        guard text.utf8.count <= maximumCastPayload else {
            throw CastdError(
                .invalidArgument,
                "a message of \(text.utf8.count) bytes does not fit in a 64 KiB Cast message (limit \(maximumCastPayload) bytes)"
            )
        }
    }
}

extension CastdUnaryMethod {
    /// Checks `request` against this method's rules (``CastdValidation/check(_:for:)``).
    public func validate(_ request: Request) throws(CastdError) {
        try CastdValidation.check(request, for: method)
    }
}

extension CastdServerStreamingMethod {
    /// Checks `request` against this method's rules (``CastdValidation/check(_:for:)``).
    public func validate(_ request: Request) throws(CastdError) {
        try CastdValidation.check(request, for: method)
    }
}
