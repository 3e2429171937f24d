import CastdAPI
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The castd.v1.Cast methods, typed. `device` is a selector: a device id, a friendly name
/// (case-insensitive), a host or host:port; `""` lets the daemon choose (the one device with a
/// session, else the only device) and fails naming the choices when it cannot.
///
/// Every method throws ``CastdError``. Besides the daemon's status codes, two outcomes have a
/// `reason` a program can act on: ``CastdError/Reason/replaced`` (ABORTED: a newer request of the
/// same kind superseded this one; its result still reaches every watcher) and
/// ``CastdError/Reason/deviceError`` (the device refused; ``CastdError/deviceError`` says how).
extension CastdClient {
    // MARK: devices

    /// Devices known to the daemon, discovered or static, sorted by friendly name.
    ///
    /// - Parameters:
    ///   - appIDs: Only devices that can run every one of these receiver apps (castd asks each
    ///     device, which takes a round trip per device). `[]`: castd's own criterion, if it has
    ///     one (`launch.filter_devices`: the devices that can run its default app).
    ///   - capabilities: Only devices with all of these capabilities. `[]`: any.
    ///   - all: Every device, whatever castd's own criterion.
    public func listDevices(
        appIDs: [String] = [],
        capabilities: CastdDeviceCapabilities = [],
        all: Bool = false
    ) async throws -> [CastdDevice] {
        var request = Castd_V1_ListDevicesRequest()
        request.appIds = appIDs
        request.capabilities = capabilities.rawValue
        request.all = all
        return try await unary(CastdMethods.listDevices, request).devices
    }

    /// The one device `selector` names, by castd's rules for selectors: its id, its friendly
    /// name (case-insensitive), host:port or host; `""` for the one device with a session, else
    /// the only device.
    ///
    /// - Throws: ``CastdError`` NOT_FOUND if no device matches, FAILED_PRECONDITION naming them
    ///   if several do.
    public func device(_ selector: String = "") async throws -> CastdDevice {
        var request = Castd_V1_GetDeviceRequest()
        request.device = selector
        return try await unary(CastdMethods.getDevice, request)
    }

    /// Forgets the device certificate key castd pinned for `device` (an id or a name) when it
    /// first authenticated, and has castd try the device again: the key it proves next is
    /// pinned. For a device that was replaced or reset; castd refuses a device whose key
    /// changed until then.
    public func forgetDevice(_ device: String) async throws -> CastdDevice {
        var request = Castd_V1_ForgetDeviceRequest()
        request.device = device
        return try await unary(CastdMethods.forgetDevice, request)
    }

    /// The daemon, its devices, sessions and media, in one consistent snapshot.
    public func status() async throws -> CastdStatusResponse {
        try await unary(CastdMethods.getStatus, Castd_V1_GetStatusRequest())
    }

    /// Which of the given receiver apps the device can run (the device's GET_APP_AVAILABILITY).
    ///
    /// - Returns: The device's id and, for each app id asked about, whether it can run it.
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if `appIDs` is empty.
    public func appAvailability(device: String = "", appIDs: [String]) async throws -> CastdAppAvailability {
        var request = Castd_V1_AppAvailabilityRequest()
        request.device = device
        request.appIds = appIDs
        return try await unary(CastdMethods.getAppAvailability, request)
    }

    /// The media session's whole queue, in play order, each item with its media: castd asks the
    /// device for what its MEDIA_STATUS leaves out. Watch's `queue` events say how it changes.
    public func queue(device: String = "") async throws -> CastdQueue {
        var request = Castd_V1_GetQueueRequest()
        request.device = device
        return try await unary(CastdMethods.getQueue, request)
    }

    // MARK: sessions

    /// Starts, joins or relaunches a receiver app's session on a device.
    ///
    /// - Parameters:
    ///   - appID: The receiver app; `""` is castd's default app (`[launch] app_id`), else the
    ///     app that runs on the device, else the Default Media Receiver (CC1AD845).
    ///   - mode: `.joinOrLaunch` (the default) joins the app if it runs, else launches it;
    ///     `.join` only joins (NOT_FOUND if the app does not run); `.launch` launches, relaunching
    ///     the app if it already runs.
    ///   - launch: Launch options: language, Android TV receivers (Cast Connect), credentials.
    /// - Returns: The session; its `state` and `reason` say how it went (`joined` if castd
    ///   joined an app that already ran).
    public func startSession(
        device: String = "",
        appID: String = "",
        mode: CastdStartMode = .joinOrLaunch,
        launch: CastdLaunchOptions? = nil
    ) async throws -> CastdSession {
        var request = Castd_V1_StartSessionRequest()
        request.device = device
        request.appID = appID
        request.mode = mode
        if let launch { request.launch = launch }
        return try await unary(CastdMethods.startSession, request)
    }

    /// Leaves the device's session; the app keeps running unless `stopApp` is set.
    /// Returns the session as it ended.
    public func endSession(device: String = "", stopApp: Bool = false) async throws -> CastdSession {
        var request = Castd_V1_EndSessionRequest()
        request.device = device
        request.stopApp = stopApp
        return try await unary(CastdMethods.endSession, request).session
    }

    // MARK: media

    /// Loads media into the session's player, starting a session with the Default Media
    /// Receiver first if the device has none.
    ///
    /// - Parameters:
    ///   - media: What to play; at least `contentID` (usually its URL) and `contentType`.
    ///   - autoplay: Start playing once loaded (otherwise it loads paused).
    ///   - startTime: Where to start, in seconds.
    ///
    /// For every other field of the load (playback rate, active tracks, credentials, custom
    /// data), use the `load(_:)` that takes a ``CastdLoadRequest``.
    public func load(
        _ media: CastdMediaInformation,
        device: String = "",
        autoplay: Bool = true,
        startTime: Double = 0
    ) async throws -> CastdMediaStatus {
        var request = CastdLoadRequest()
        request.device = device
        request.media = media
        request.autoplay = autoplay
        request.startTime = startTime
        return try await load(request)
    }

    /// Loads media with every option of a load, as the request gives them: `device`, `media`
    /// (with tracks, text track style, ad breaks, metadata, entity), `autoplay` (unset: true),
    /// `startTime`, `playbackRate` (0: the device's default), `activeTrackIds`, `credentials` and
    /// `credentialsType`, `customDataJson`. Starts a session with the Default Media Receiver
    /// first if the device has none.
    ///
    /// ```swift
    /// var request = CastdLoadRequest()
    /// request.media = CastdMediaInformation(url: "https://example.com/movie.mp4", title: "Movie")
    /// request.media.tracks = [CastdMediaTrack(subtitlesID: 1, url: "https://example.com/en.vtt", language: "en")]
    /// request.activeTrackIds = [1]
    /// request.playbackRate = 1.25
    /// let status = try await client.load(request)
    /// ```
    ///
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if the playback
    ///   rate is neither 0 nor within 0.5…2.0, or `customDataJson` is not a JSON object.
    public func load(_ request: CastdLoadRequest) async throws -> CastdMediaStatus {
        if !request.customDataJson.isEmpty { try Self.checkJSONObject(request.customDataJson, what: "customDataJson") }
        return try await unary(CastdMethods.load, request)
    }

    /// Resumes playback.
    public func play(device: String = "") async throws -> CastdMediaStatus {
        try await unary(CastdMethods.play, Self.mediaRequest(device))
    }

    /// Pauses playback.
    public func pause(device: String = "") async throws -> CastdMediaStatus {
        try await unary(CastdMethods.pause, Self.mediaRequest(device))
    }

    /// Stops playback; the media session ends (the app keeps running).
    public func stop(device: String = "") async throws -> CastdMediaStatus {
        try await unary(CastdMethods.stop, Self.mediaRequest(device))
    }

    /// Seeks to `seconds`, or by `seconds` (negative: back) when `relative` is set.
    ///
    /// A newer seek sent before the device answered this one supersedes it: this one then fails
    /// with ABORTED, reason ``CastdError/Reason/replaced``.
    public func seek(to seconds: Double, relative: Bool = false, device: String = "") async throws -> CastdMediaStatus {
        var request = Castd_V1_SeekRequest()
        request.device = device
        request.position = seconds
        request.relative = relative
        return try await unary(CastdMethods.seek, request)
    }

    /// The playback rates castd and the Cast media players accept.
    /// Sets the playback rate (1 is normal speed).
    ///
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if `rate` is outside
    ///   ``CastdValidation/playbackRates`` (0.5…2.0).
    public func setPlaybackRate(_ rate: Double, device: String = "") async throws -> CastdMediaStatus {
        var request = Castd_V1_SetPlaybackRateRequest()
        request.device = device
        request.rate = rate
        return try await unary(CastdMethods.setPlaybackRate, request)
    }

    /// Changes the active tracks, the text track style, or both (the device's EDIT_TRACKS_INFO).
    ///
    /// - Parameters:
    ///   - activeTrackIDs: The tracks to make active, replacing the active set (`[]` turns every
    ///     track off); `nil` leaves them as they are. Ids are the media's `tracks[].trackID`.
    ///   - textTrackStyle: How to draw text tracks; `nil` leaves the style as it is.
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if both are `nil` or
    ///   an id is not positive.
    public func editTracks(
        activeTrackIDs: [Int64]? = nil,
        textTrackStyle: CastdTextTrackStyle? = nil,
        device: String = ""
    ) async throws -> CastdMediaStatus {
        var request = Castd_V1_EditTracksRequest()
        request.device = device
        if let activeTrackIDs {
            var tracks = Castd_V1_ActiveTracks()
            tracks.trackIds = activeTrackIDs
            request.activeTracks = tracks
        }
        if let textTrackStyle { request.textTrackStyle = textTrackStyle }
        return try await unary(CastdMethods.editTracks, request)
    }

    /// Sets the stream's volume (not the device's): a level from 0 to 1, muting, or both.
    ///
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if neither is given
    ///   or the level is outside 0…1.
    public func setStreamVolume(
        level: Double? = nil,
        muted: Bool? = nil,
        device: String = ""
    ) async throws -> CastdMediaStatus {
        let request = Self.volumeRequest(level: level, muted: muted, device: device)
        return try await unary(CastdMethods.setStreamVolume, request)
    }

    /// Skips the ad that plays, once it can be skipped (see
    /// ``CastdMediaStatus/secondsUntilSkippable(at:)``).
    public func skipAd(device: String = "") async throws -> CastdMediaStatus {
        try await unary(CastdMethods.skipAd, Self.mediaRequest(device))
    }

    /// Asks the device for its media status now (GET_STATUS) rather than waiting for an update,
    /// and returns it.
    public func requestMediaStatus(device: String = "") async throws -> CastdMediaStatus {
        try await unary(CastdMethods.requestMediaStatus, Self.mediaRequest(device))
    }

    // MARK: device volume

    /// Sets the device's (not the stream's) volume: a level from 0 to 1, muting, or both.
    ///
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if neither is given
    ///   or the level is outside 0…1.
    public func setVolume(level: Double? = nil, muted: Bool? = nil, device: String = "") async throws -> CastdVolume {
        let request = Self.volumeRequest(level: level, muted: muted, device: device)
        return try await unary(CastdMethods.setVolume, request)
    }

    /// Changes the device's volume by steps of its `stepInterval`, as its volume buttons do:
    /// `+1` is one press of volume up, `-2` two presses of volume down. The result is clamped
    /// to 0…1 by the daemon.
    ///
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if `steps` is 0.
    public func setVolume(steps: Int32, device: String = "") async throws -> CastdVolume {
        var request = Castd_V1_SetVolumeRequest()
        request.device = device
        request.steps = steps
        return try await unary(CastdMethods.setVolume, request)
    }

    // MARK: helpers

    static func mediaRequest(_ device: String) -> Castd_V1_MediaRequest {
        var request = Castd_V1_MediaRequest()
        request.device = device
        return request
    }

    private static func volumeRequest(level: Double?, muted: Bool?, device: String) -> Castd_V1_SetVolumeRequest {
        var request = Castd_V1_SetVolumeRequest()
        request.device = device
        if let level { request.level = level }
        if let muted { request.muted = muted }
        return request
    }

    static func checkJSONObject(_ text: String, what: String) throws(CastdError) {
        guard CastdJSON.isObject(text) else {
            throw CastdError(.invalidArgument, "\(what) is not a JSON object: \(text)")
        }
    }
}
