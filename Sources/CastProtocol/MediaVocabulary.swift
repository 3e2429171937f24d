// The words of the media namespace (and of the receiver's volume) for states and kinds, typed. The payload types keep the word a
// device sent (so a word castd does not know is not lost on the way through); these read it and
// write it.

/// A media player's state (MEDIA_STATUS `playerState`).
public enum CastPlayerState: String, Sendable, Hashable, CaseIterable {
    case idle = "IDLE"
    case playing = "PLAYING"
    case paused = "PAUSED"
    case buffering = "BUFFERING"
    case loading = "LOADING"
}

/// How the media streams (MediaInformation `streamType`).
public enum CastStreamType: String, Sendable, Hashable, CaseIterable {
    case none = "NONE"
    case buffered = "BUFFERED"
    case live = "LIVE"
}

/// How a queue repeats (`repeatMode`).
public enum CastRepeatMode: String, Sendable, Hashable, CaseIterable {
    case off = "REPEAT_OFF"
    case all = "REPEAT_ALL"
    case single = "REPEAT_SINGLE"
    case allAndShuffle = "REPEAT_ALL_AND_SHUFFLE"
}

/// A track's kind (MediaTrack `type`).
public enum CastTrackType: String, Sendable, Hashable, CaseIterable {
    case text = "TEXT"
    case audio = "AUDIO"
    case video = "VIDEO"
}

/// What a text track holds (MediaTrack `subtype`).
public enum CastTextTrackSubtype: String, Sendable, Hashable, CaseIterable {
    case subtitles = "SUBTITLES"
    case captions = "CAPTIONS"
    case descriptions = "DESCRIPTIONS"
    case chapters = "CHAPTERS"
    case metadata = "METADATA"
}

/// How a queue changed (QUEUE_CHANGE `changeType`).
public enum CastQueueChangeType: String, Sendable, Hashable, CaseIterable {
    case insert = "INSERT"
    case remove = "REMOVE"
    /// Items' content changed (their ids stay).
    case itemsChange = "ITEMS_CHANGE"
    /// A reorder: every id, in the new order.
    case update = "UPDATE"
    case noChange = "NO_CHANGE"
}

/// How a device's volume can be changed (Volume `controlType`).
public enum CastVolumeControlType: String, Sendable, Hashable, CaseIterable {
    /// The device's own volume.
    case attenuation = "attenuation"
    /// Not at all (only muting works).
    case fixed = "fixed"
    /// The volume of an amplifier the device controls.
    case master = "master"
}

extension CastMediaStatus {
    /// `playerState`, typed (in any case); nil for a state castd does not know.
    public var state: CastPlayerState? {
        get { CastPlayerState(rawValue: playerState.uppercased()) }
        set { playerState = newValue?.rawValue ?? "UNKNOWN" }
    }

    /// `repeatMode`, typed; nil when absent or unknown.
    public var repetition: CastRepeatMode? {
        get { repeatMode.flatMap(CastRepeatMode.init(rawValue:)) }
        set { repeatMode = newValue?.rawValue }
    }
}

extension CastMediaInformation {
    /// `streamType`, typed (in any case): what is absent or unknown is buffered.
    public var stream: CastStreamType {
        get { CastStreamType(rawValue: streamType.uppercased()) ?? .buffered }
        set { streamType = newValue.rawValue }
    }
}

extension CastMediaTrack {
    /// `type`, typed (in any case); nil when absent or unknown.
    public var trackType: CastTrackType? {
        get { type.flatMap { CastTrackType(rawValue: $0.uppercased()) } }
        set { type = newValue?.rawValue }
    }

    /// `subtype`, typed (in any case); nil when absent or unknown.
    public var textSubtype: CastTextTrackSubtype? {
        get { subtype.flatMap { CastTextTrackSubtype(rawValue: $0.uppercased()) } }
        set { subtype = newValue?.rawValue }
    }
}

extension CastQueueChange {
    /// `changeType`, typed; nil when absent or unknown.
    public var kind: CastQueueChangeType? {
        get { changeType.flatMap(CastQueueChangeType.init(rawValue:)) }
        set { changeType = newValue?.rawValue }
    }
}

extension CastVolume {
    /// `controlType`, typed; nil when absent or unknown.
    public var control: CastVolumeControlType? {
        get { controlType.flatMap(CastVolumeControlType.init(rawValue:)) }
        set { controlType = newValue?.rawValue }
    }
}
