import CastProtocol
import CastdAPI
import Foundation

// One mapping from what devices say (CastProtocol) to what castd publishes (castd.v1), and back
// for what clients ask the device to do.

extension CastdVolume {
    init(_ volume: CastVolume) {
        self.init()
        level = volume.level ?? 0
        muted = volume.muted ?? false
        controlType = volume.controlType ?? ""
        stepInterval = volume.stepInterval ?? 0
    }
}

extension Castd_V1_Application {
    init(_ app: CastApplication) {
        self.init()
        appID = app.appID
        displayName = app.displayName
        sessionID = app.sessionID
        transportID = app.transportID ?? ""
        statusText = app.statusText
        namespaces = app.namespaces
        isIdleScreen = app.isIdleScreen
    }
}

extension Castd_V1_ReceiverStatus {
    init(_ status: CastReceiverStatus) {
        self.init()
        applications = status.applications.map(Castd_V1_Application.init)
        if let volume = status.volume { self.volume = CastdVolume(volume) }
    }
}

extension Castd_V1_PlayerState {
    init(cast state: String) {
        switch state.uppercased() {
        case "IDLE": self = .idle
        case "PLAYING": self = .playing
        case "PAUSED": self = .paused
        case "BUFFERING": self = .buffering
        case "LOADING": self = .loading
        default: self = .unknown
        }
    }
}

extension Castd_V1_StreamType {
    init(cast type: String) {
        switch type.uppercased() {
        case "NONE": self = .none
        case "LIVE": self = .live
        default: self = .buffered
        }
    }

    var castValue: String {
        switch self {
        case .none: return "NONE"
        case .live: return "LIVE"
        default: return "BUFFERED"
        }
    }
}

extension CastdMediaInformation {
    init(_ media: CastMediaInformation) {
        self.init()
        contentID = media.contentID
        contentURL = media.contentURL ?? ""
        contentType = media.contentType ?? ""
        streamType = Castd_V1_StreamType(cast: media.streamType)
        duration = media.duration ?? 0
        if let metadata = media.metadata {
            var m = Castd_V1_MediaMetadata()
            m.metadataType = Castd_V1_MetadataType(rawValue: metadata.metadataType) ?? .generic
            m.title = metadata.title ?? ""
            m.subtitle = metadata.subtitle ?? ""
            m.artist = metadata.artist ?? ""
            m.albumName = metadata.albumName ?? ""
            m.images = metadata.images.map { image in
                var i = Castd_V1_Image()
                i.url = image.url
                i.width = UInt32(clamping: max(0, image.width ?? 0))
                i.height = UInt32(clamping: max(0, image.height ?? 0))
                return i
            }
            self.metadata = m
        }
        if let customData = media.customData { customDataJson = customData.jsonString }
    }

    /// What a LOAD sends. Throws INVALID_ARGUMENT for bad custom data.
    public func castValue() throws -> CastMediaInformation {
        var metadata: CastMediaMetadata?
        if hasMetadata {
            metadata = CastMediaMetadata(
                metadataType: self.metadata.metadataType.rawValue,
                title: self.metadata.title.nonEmpty, subtitle: self.metadata.subtitle.nonEmpty,
                artist: self.metadata.artist.nonEmpty, albumName: self.metadata.albumName.nonEmpty,
                images: self.metadata.images.map {
                    CastImage(
                        url: $0.url, width: $0.width == 0 ? nil : Int($0.width),
                        height: $0.height == 0 ? nil : Int($0.height))
                })
        }
        var customData: JSONValue?
        if !customDataJson.isEmpty {
            do {
                customData = try JSONValue.parse(customDataJson)
            } catch {
                throw CastdError(.invalidArgument, "custom_data_json is not valid JSON: \(error)")
            }
        }
        return CastMediaInformation(
            contentID: contentID.isEmpty ? contentURL : contentID,
            contentURL: contentURL.nonEmpty,
            streamType: streamType.castValue,
            contentType: contentType.nonEmpty,
            duration: duration > 0 ? duration : nil,
            metadata: metadata,
            customData: customData)
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}

extension CastdMediaStatus {
    init(deviceID: String, _ status: CastMediaStatus, receivedAt: Date) {
        self.init()
        self.deviceID = deviceID
        mediaSessionID = status.mediaSessionID
        playerState = Castd_V1_PlayerState(cast: status.playerState)
        idleReason = status.idleReason ?? ""
        currentTime = status.currentTime
        playbackRate = status.playbackRate
        if let media = status.media { self.media = CastdMediaInformation(media) }
        if let volume = status.volume { self.volume = CastdVolume(volume) }
        supportedMediaCommands = UInt64(clamping: max(0, status.supportedMediaCommands))
        updatedAtMs = Int64(receivedAt.timeIntervalSince1970 * 1000)
    }
}
