import CastdAPI
import Foundation

/// The castd.v1.Cast methods, typed. `device` is a selector: a device id, a friendly name
/// (case-insensitive), a host or host:port; `""` lets the daemon choose (the one device with a
/// session, else the only device) and fails naming the choices when it cannot.
extension CastdClient {
    /// Devices known to the daemon, discovered or static, sorted by friendly name.
    public func listDevices() async throws -> [CastdDevice] {
        try await unary(.listDevices, Castd_V1_ListDevicesRequest(), as: Castd_V1_ListDevicesResponse.self).devices
    }

    /// The daemon, its devices, sessions and media, in one consistent snapshot.
    public func status() async throws -> CastdStatusResponse {
        try await unary(.getStatus, Castd_V1_GetStatusRequest(), as: CastdStatusResponse.self)
    }

    /// Joins the app's session on a device if the app runs there, else launches it.
    ///
    /// - Parameter appID: The receiver app; `""` is the Default Media Receiver (CC1AD845).
    public func startSession(device: String = "", appID: String = "") async throws -> CastdSession {
        var request = Castd_V1_StartSessionRequest()
        request.device = device
        request.appID = appID
        return try await unary(.startSession, request, as: CastdSession.self)
    }

    /// Leaves the device's session; the app keeps running unless `stopApp` is set.
    /// Returns the session as it ended.
    public func endSession(device: String = "", stopApp: Bool = false) async throws -> CastdSession {
        var request = Castd_V1_EndSessionRequest()
        request.device = device
        request.stopApp = stopApp
        return try await unary(.endSession, request, as: Castd_V1_EndSessionResponse.self).session
    }

    /// Loads media into the session's player, starting a session with the Default Media
    /// Receiver first if the device has none.
    ///
    /// - Parameters:
    ///   - media: What to play; at least `contentID` (usually its URL) and `contentType`.
    ///   - autoplay: Start playing once loaded (otherwise it loads paused).
    ///   - startTime: Where to start, in seconds.
    public func load(
        _ media: CastdMediaInformation,
        device: String = "",
        autoplay: Bool = true,
        startTime: Double = 0
    ) async throws -> CastdMediaStatus {
        var request = Castd_V1_LoadRequest()
        request.device = device
        request.media = media
        request.autoplay = autoplay
        request.startTime = startTime
        return try await unary(.load, request, as: CastdMediaStatus.self)
    }

    /// Resumes playback.
    public func play(device: String = "") async throws -> CastdMediaStatus {
        try await unary(.play, Self.mediaRequest(device), as: CastdMediaStatus.self)
    }

    /// Pauses playback.
    public func pause(device: String = "") async throws -> CastdMediaStatus {
        try await unary(.pause, Self.mediaRequest(device), as: CastdMediaStatus.self)
    }

    /// Stops playback; the media session ends (the app keeps running).
    public func stop(device: String = "") async throws -> CastdMediaStatus {
        try await unary(.stop, Self.mediaRequest(device), as: CastdMediaStatus.self)
    }

    /// Seeks to `seconds`, or by `seconds` (negative: back) when `relative` is set.
    public func seek(to seconds: Double, relative: Bool = false, device: String = "") async throws -> CastdMediaStatus {
        var request = Castd_V1_SeekRequest()
        request.device = device
        request.position = seconds
        request.relative = relative
        return try await unary(.seek, request, as: CastdMediaStatus.self)
    }

    /// Sets the device's (not the stream's) volume: a level from 0 to 1, muting, or both.
    ///
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if neither is given
    ///   or the level is outside 0…1.
    public func setVolume(level: Double? = nil, muted: Bool? = nil, device: String = "") async throws -> CastdVolume {
        var request = Castd_V1_SetVolumeRequest()
        request.device = device
        if let level {
            guard (0...1).contains(level) else {
                throw CastdError(.invalidArgument, "volume level \(level) is outside 0…1")
            }
            request.level = level
        }
        if let muted { request.muted = muted }
        guard request.hasLevel || request.hasMuted else {
            throw CastdError(.invalidArgument, "setVolume needs a level, muted, or both")
        }
        return try await unary(.setVolume, request, as: CastdVolume.self)
    }

    private static func mediaRequest(_ device: String) -> Castd_V1_MediaRequest {
        var request = Castd_V1_MediaRequest()
        request.device = device
        return request
    }
}
