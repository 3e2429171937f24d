import CastProtocol
import CastdAPI

// castd.v1's requests as the device takes them. The requests were
// checked first (CastdValidation); what can still fail here is a client's JSON text that does
// not parse, or a request too big for one Cast message: INVALID_ARGUMENT, naming what.

extension MediaRequest {
    public init(load r: Castd_V1_LoadRequest) throws {
        self = .load(
            MediaLoad(
                media: try r.media.castValue(), autoplay: r.hasAutoplay ? r.autoplay : true, currentTime: r.startTime,
                playbackRate: r.playbackRate != 0 ? r.playbackRate : nil, activeTrackIDs: r.activeTrackIds,
                credentials: r.credentials.nonEmpty, credentialsType: r.credentialsType.nonEmpty,
                customData: try parseClientJSON(r.customDataJson, field: "custom_data_json")))
        try checkFits()
        try checkStatusFits()
    }

    public init(queueLoad r: Castd_V1_QueueLoadRequest) throws {
        self = .queueLoad(
            QueueLoad(
                items: try r.items.map { try $0.castValue(includeItemID: false) }, startIndex: Int(r.startIndex),
                repeatMode: r.repeatMode.castValue, currentTime: r.startTime > 0 ? r.startTime : nil,
                customData: try parseClientJSON(r.customDataJson, field: "custom_data_json")))
        // Not checkFits(): a queue too long for one message is split (QueueLoadSplit).
    }

    public init(queueInsert r: Castd_V1_QueueInsertRequest) throws {
        self = .queueInsert(
            items: try r.items.map { try $0.castValue(includeItemID: false) },
            before: r.insertBeforeItemID != 0 ? r.insertBeforeItemID : nil, playNow: r.playNow)
    }

    public init(queueReorder r: Castd_V1_QueueReorderRequest) {
        self = .queueReorder(itemIDs: r.itemIds, before: r.insertBeforeItemID != 0 ? r.insertBeforeItemID : nil)
    }

    public init(queueUpdate r: Castd_V1_QueueUpdateRequest) throws {
        self = .queueUpdate(
            QueueUpdate(
                currentItemID: r.currentItemID != 0 ? r.currentItemID : nil, jump: r.jump != 0 ? r.jump : nil,
                repeatMode: r.hasRepeatMode ? r.repeatMode.castValue : nil,
                items: try r.items.map { try $0.castValue(includeItemID: true) },
                currentTime: r.currentTime > 0 ? r.currentTime : nil))
    }

    public init(seek r: Castd_V1_SeekRequest) {
        let resume: ResumeState? =
            switch r.resumeState {
            case .play: .play
            case .pause: .pause
            default: nil
            }
        self = .seek(position: r.position, relative: r.relative, resume: resume)
    }

    public init(editTracks r: Castd_V1_EditTracksRequest) throws {
        self = .editTracks(
            activeTrackIDs: r.hasActiveTracks ? r.activeTracks.trackIds : nil,
            textTrackStyle: r.hasTextTrackStyle ? try r.textTrackStyle.castValue() : nil)
    }

    public init(streamVolume r: Castd_V1_SetVolumeRequest) {
        self = .setStreamVolume(level: r.hasLevel ? r.level : nil, muted: r.hasMuted ? r.muted : nil)
    }

    /// The most of a LOAD's media information castd sends: the device answers a LOAD with a
    /// MEDIA_STATUS that repeats the media, and that too must fit in one Cast message. A LOAD of
    /// 62,000 bytes fitted, and the device's answer did not: the caller waited 10 s for a reply
    /// that could never come.
    public static let maximumMediaInformation = CastdValidation.maximumCastPayload / 2

    /// A LOAD's media must leave room for the status that repeats it.
    private func checkStatusFits() throws {
        guard case .load(let load) = self else { return }
        let size = load.media.json.jsonString.utf8.count
        guard size <= Self.maximumMediaInformation else {
            throw CastdError(
                .invalidArgument,
                "the media information is \(size) bytes of JSON; castd sends at most \(Self.maximumMediaInformation), since the device's answer repeats it and a Cast message holds 64 KiB: shorten its metadata, tracks or custom data"
            )
        }
    }

    /// A request must fit in one 64 KiB CastV2 frame, with room for the envelope.
    private func checkFits() throws {
        let size = payload(requestID: 0, mediaSessionID: 0).jsonString.utf8.count
        guard size < CastdValidation.maximumCastPayload else {
            throw CastdError(.invalidArgument, "a request of \(size) bytes does not fit in a 64 KiB Cast message")
        }
    }
}

extension Castd_V1_SendMessageRequest {
    /// The message as it goes to the app: its text, or its JSON written compactly.
    public func castText() throws -> String {
        switch payload {
        case .text(let text)?:
            return text
        case .json(let json)?:
            let text: String
            do {
                text = try JSONValue.parse(json).jsonString
            } catch {
                throw CastdError(.invalidArgument, "the message is not valid JSON: \(error)")
            }
            try CastdValidation.messageSize(text)
            return text
        case nil:
            throw CastdError(.invalidArgument, "the message is empty: set text or json")
        }
    }
}

/// A castd.v1 media or queue call as the application hands it to a device
/// (`DeviceController.media(_:)`): castd.v1's types only. CastDevices maps it to the Cast media
/// namespace's request (`MediaRequest`), so that nothing above it speaks the Cast wire.
public enum MediaCall: Sendable {
    case load(Castd_V1_LoadRequest)
    case play, pause, stop, skipAd, getStatus
    case seek(Castd_V1_SeekRequest)
    case setPlaybackRate(Double)
    case editTracks(Castd_V1_EditTracksRequest)
    case setStreamVolume(Castd_V1_SetVolumeRequest)
    case queueLoad(Castd_V1_QueueLoadRequest)
    case queueInsert(Castd_V1_QueueInsertRequest)
    case queueRemove(itemIDs: [Int64])
    case queueReorder(Castd_V1_QueueReorderRequest)
    case queueUpdate(Castd_V1_QueueUpdateRequest)

    /// The Cast media request, or INVALID_ARGUMENT naming what does not map.
    func request() throws -> MediaRequest {
        switch self {
        case .load(let r): try MediaRequest(load: r)
        case .play: .play
        case .pause: .pause
        case .stop: .stop
        case .skipAd: .skipAd
        case .getStatus: .getStatus
        case .seek(let r): MediaRequest(seek: r)
        case .setPlaybackRate(let rate): .setPlaybackRate(rate)
        case .editTracks(let r): try MediaRequest(editTracks: r)
        case .setStreamVolume(let r): MediaRequest(streamVolume: r)
        case .queueLoad(let r): try MediaRequest(queueLoad: r)
        case .queueInsert(let r): try MediaRequest(queueInsert: r)
        case .queueRemove(let ids): .queueRemove(itemIDs: ids)
        case .queueReorder(let r): MediaRequest(queueReorder: r)
        case .queueUpdate(let r): try MediaRequest(queueUpdate: r)
        }
    }
}

extension DeviceController {
    /// A castd.v1 media or queue call to this device's session; its answer is the media status.
    public func media(_ call: MediaCall) async throws -> CastdMediaStatus {
        try await media(try call.request())
    }
}
