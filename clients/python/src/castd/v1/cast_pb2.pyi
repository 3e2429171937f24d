from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

ACCESS_CONTROL: Access
ACCESS_READ: Access
ACCESS_UNSPECIFIED: Access
AUTH_STATE_REFUSED: AuthState
AUTH_STATE_UNKNOWN: AuthState
AUTH_STATE_UNVERIFIED: AuthState
AUTH_STATE_VERIFIED: AuthState
CAPABILITY_AUDIO_IN: Capability
CAPABILITY_AUDIO_OUT: Capability
CAPABILITY_DEV_MODE: Capability
CAPABILITY_MULTIZONE_GROUP: Capability
CAPABILITY_NONE: Capability
CAPABILITY_VIDEO_IN: Capability
CAPABILITY_VIDEO_OUT: Capability
CAST_STATE_CONNECTED: CastState
CAST_STATE_CONNECTING: CastState
CAST_STATE_NOT_CONNECTED: CastState
CAST_STATE_NO_DEVICES_AVAILABLE: CastState
CAST_STATE_UNSPECIFIED: CastState
DESCRIPTOR: _descriptor.FileDescriptor
DEVICE_SOURCE_MDNS: DeviceSource
DEVICE_SOURCE_STATIC: DeviceSource
DEVICE_SOURCE_UNSPECIFIED: DeviceSource
DISCOVERY_STATE_OFF: DiscoveryState
DISCOVERY_STATE_RUNNING: DiscoveryState
DISCOVERY_STATE_STARTING: DiscoveryState
DISCOVERY_STATE_UNAVAILABLE: DiscoveryState
DISCOVERY_STATE_UNSPECIFIED: DiscoveryState
LINK_STATE_CONNECTED: LinkState
LINK_STATE_CONNECTING: LinkState
LINK_STATE_DISCONNECTED: LinkState
LINK_STATE_FAILED: LinkState
LINK_STATE_RECONNECTING: LinkState
LOG_LEVEL_CRITICAL: LogLevel
LOG_LEVEL_DEBUG: LogLevel
LOG_LEVEL_ERROR: LogLevel
LOG_LEVEL_INFO: LogLevel
LOG_LEVEL_NONE: LogLevel
LOG_LEVEL_NOTICE: LogLevel
LOG_LEVEL_UNSPECIFIED: LogLevel
LOG_LEVEL_VERBOSE: LogLevel
LOG_LEVEL_WARNING: LogLevel
METADATA_TYPE_GENERIC: MetadataType
METADATA_TYPE_MOVIE: MetadataType
METADATA_TYPE_MUSIC_TRACK: MetadataType
METADATA_TYPE_PHOTO: MetadataType
METADATA_TYPE_TV_SHOW: MetadataType
PLAYER_STATE_BUFFERING: PlayerState
PLAYER_STATE_IDLE: PlayerState
PLAYER_STATE_LOADING: PlayerState
PLAYER_STATE_PAUSED: PlayerState
PLAYER_STATE_PLAYING: PlayerState
PLAYER_STATE_UNKNOWN: PlayerState
QUEUE_CHANGE_KIND_INSERTED: QueueChangeKind
QUEUE_CHANGE_KIND_REMOVED: QueueChangeKind
QUEUE_CHANGE_KIND_REORDERED: QueueChangeKind
QUEUE_CHANGE_KIND_UNSPECIFIED: QueueChangeKind
QUEUE_CHANGE_KIND_UPDATED: QueueChangeKind
REPEAT_MODE_ALL: RepeatMode
REPEAT_MODE_ALL_AND_SHUFFLE: RepeatMode
REPEAT_MODE_OFF: RepeatMode
REPEAT_MODE_SINGLE: RepeatMode
RESUME_STATE_PAUSE: ResumeState
RESUME_STATE_PLAY: ResumeState
RESUME_STATE_UNCHANGED: ResumeState
SESSION_STATE_ENDED: SessionState
SESSION_STATE_ENDING: SessionState
SESSION_STATE_RESUMED: SessionState
SESSION_STATE_RESUME_FAILED: SessionState
SESSION_STATE_RESUMING: SessionState
SESSION_STATE_STARTED: SessionState
SESSION_STATE_STARTING: SessionState
SESSION_STATE_START_FAILED: SessionState
SESSION_STATE_SUSPENDED: SessionState
SESSION_STATE_UNSPECIFIED: SessionState
START_MODE_JOIN: StartMode
START_MODE_JOIN_OR_LAUNCH: StartMode
START_MODE_LAUNCH: StartMode
STREAM_TYPE_BUFFERED: StreamType
STREAM_TYPE_LIVE: StreamType
STREAM_TYPE_NONE: StreamType
STREAM_TYPE_UNSPECIFIED: StreamType
TEXT_TRACK_SUBTYPE_CAPTIONS: TextTrackSubtype
TEXT_TRACK_SUBTYPE_CHAPTERS: TextTrackSubtype
TEXT_TRACK_SUBTYPE_DESCRIPTIONS: TextTrackSubtype
TEXT_TRACK_SUBTYPE_METADATA: TextTrackSubtype
TEXT_TRACK_SUBTYPE_SUBTITLES: TextTrackSubtype
TEXT_TRACK_SUBTYPE_UNSPECIFIED: TextTrackSubtype
TRACK_TYPE_AUDIO: TrackType
TRACK_TYPE_TEXT: TrackType
TRACK_TYPE_UNSPECIFIED: TrackType
TRACK_TYPE_VIDEO: TrackType
TV_INPUT_OTHER: TvInput
TV_INPUT_THIS: TvInput
TV_INPUT_UNKNOWN: TvInput
TV_POWER_ON: TvPower
TV_POWER_STANDBY: TvPower
TV_POWER_UNKNOWN: TvPower

class ActiveTracks(_message.Message):
    __slots__ = ["track_ids"]
    TRACK_IDS_FIELD_NUMBER: _ClassVar[int]
    track_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, track_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class AdBreak(_message.Message):
    __slots__ = ["break_clip_ids", "duration", "id", "is_embedded", "is_watched", "position"]
    BREAK_CLIP_IDS_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    IS_EMBEDDED_FIELD_NUMBER: _ClassVar[int]
    IS_WATCHED_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    break_clip_ids: _containers.RepeatedScalarFieldContainer[str]
    duration: float
    id: str
    is_embedded: bool
    is_watched: bool
    position: float
    def __init__(self, id: _Optional[str] = ..., position: _Optional[float] = ..., duration: _Optional[float] = ..., break_clip_ids: _Optional[_Iterable[str]] = ..., is_watched: bool = ..., is_embedded: bool = ...) -> None: ...

class AdBreakClip(_message.Message):
    __slots__ = ["click_through_url", "content_id", "content_type", "content_url", "custom_data_json", "duration", "id", "poster_url", "title", "vast_ads_request", "when_skippable"]
    CLICK_THROUGH_URL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_URL_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    POSTER_URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    VAST_ADS_REQUEST_FIELD_NUMBER: _ClassVar[int]
    WHEN_SKIPPABLE_FIELD_NUMBER: _ClassVar[int]
    click_through_url: str
    content_id: str
    content_type: str
    content_url: str
    custom_data_json: str
    duration: float
    id: str
    poster_url: str
    title: str
    vast_ads_request: VastAdsRequest
    when_skippable: float
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., content_id: _Optional[str] = ..., content_url: _Optional[str] = ..., content_type: _Optional[str] = ..., duration: _Optional[float] = ..., when_skippable: _Optional[float] = ..., poster_url: _Optional[str] = ..., click_through_url: _Optional[str] = ..., custom_data_json: _Optional[str] = ..., vast_ads_request: _Optional[_Union[VastAdsRequest, _Mapping]] = ...) -> None: ...

class AppAvailabilityRequest(_message.Message):
    __slots__ = ["app_ids", "device"]
    APP_IDS_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    app_ids: _containers.RepeatedScalarFieldContainer[str]
    device: str
    def __init__(self, device: _Optional[str] = ..., app_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class AppAvailabilityResponse(_message.Message):
    __slots__ = ["available", "device_id"]
    class AvailableEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: bool
        def __init__(self, key: _Optional[str] = ..., value: bool = ...) -> None: ...
    AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
    available: _containers.ScalarMap[str, bool]
    device_id: str
    def __init__(self, device_id: _Optional[str] = ..., available: _Optional[_Mapping[str, bool]] = ...) -> None: ...

class AppMessage(_message.Message):
    __slots__ = ["destination_id", "device_id", "is_json", "namespace", "payload", "source_id"]
    DESTINATION_ID_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
    IS_JSON_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    destination_id: str
    device_id: str
    is_json: bool
    namespace: str
    payload: str
    source_id: str
    def __init__(self, device_id: _Optional[str] = ..., namespace: _Optional[str] = ..., source_id: _Optional[str] = ..., destination_id: _Optional[str] = ..., payload: _Optional[str] = ..., is_json: bool = ...) -> None: ...

class Application(_message.Message):
    __slots__ = ["app_id", "app_type", "display_name", "is_idle_screen", "namespaces", "session_id", "status_text", "transport_id"]
    APP_ID_FIELD_NUMBER: _ClassVar[int]
    APP_TYPE_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    IS_IDLE_SCREEN_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_TEXT_FIELD_NUMBER: _ClassVar[int]
    TRANSPORT_ID_FIELD_NUMBER: _ClassVar[int]
    app_id: str
    app_type: str
    display_name: str
    is_idle_screen: bool
    namespaces: _containers.RepeatedScalarFieldContainer[str]
    session_id: str
    status_text: str
    transport_id: str
    def __init__(self, app_id: _Optional[str] = ..., display_name: _Optional[str] = ..., session_id: _Optional[str] = ..., transport_id: _Optional[str] = ..., status_text: _Optional[str] = ..., namespaces: _Optional[_Iterable[str]] = ..., is_idle_screen: bool = ..., app_type: _Optional[str] = ...) -> None: ...

class BreakStatus(_message.Message):
    __slots__ = ["break_clip_id", "break_id", "current_break_clip_time", "current_break_time", "seconds_until_skippable"]
    BREAK_CLIP_ID_FIELD_NUMBER: _ClassVar[int]
    BREAK_ID_FIELD_NUMBER: _ClassVar[int]
    CURRENT_BREAK_CLIP_TIME_FIELD_NUMBER: _ClassVar[int]
    CURRENT_BREAK_TIME_FIELD_NUMBER: _ClassVar[int]
    SECONDS_UNTIL_SKIPPABLE_FIELD_NUMBER: _ClassVar[int]
    break_clip_id: str
    break_id: str
    current_break_clip_time: float
    current_break_time: float
    seconds_until_skippable: float
    def __init__(self, break_id: _Optional[str] = ..., break_clip_id: _Optional[str] = ..., current_break_time: _Optional[float] = ..., current_break_clip_time: _Optional[float] = ..., seconds_until_skippable: _Optional[float] = ...) -> None: ...

class CastStateChange(_message.Message):
    __slots__ = ["previous", "state"]
    PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    previous: CastState
    state: CastState
    def __init__(self, state: _Optional[_Union[CastState, str]] = ..., previous: _Optional[_Union[CastState, str]] = ...) -> None: ...

class ChannelEvent(_message.Message):
    __slots__ = ["attached", "detached", "lagged", "message"]
    ATTACHED_FIELD_NUMBER: _ClassVar[int]
    DETACHED_FIELD_NUMBER: _ClassVar[int]
    LAGGED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    attached: Session
    detached: Session
    lagged: Lagged
    message: AppMessage
    def __init__(self, attached: _Optional[_Union[Session, _Mapping]] = ..., detached: _Optional[_Union[Session, _Mapping]] = ..., message: _Optional[_Union[AppMessage, _Mapping]] = ..., lagged: _Optional[_Union[Lagged, _Mapping]] = ...) -> None: ...

class DaemonInfo(_message.Message):
    __slots__ = ["access", "clients", "config_path", "discovery", "discovery_reason", "discovery_since_ms", "discovery_state", "limits", "mode", "pid", "socket_activated", "socket_path", "started_at_ms", "state_directory", "uid", "version"]
    ACCESS_FIELD_NUMBER: _ClassVar[int]
    CLIENTS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_PATH_FIELD_NUMBER: _ClassVar[int]
    DISCOVERY_FIELD_NUMBER: _ClassVar[int]
    DISCOVERY_REASON_FIELD_NUMBER: _ClassVar[int]
    DISCOVERY_SINCE_MS_FIELD_NUMBER: _ClassVar[int]
    DISCOVERY_STATE_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    SOCKET_ACTIVATED_FIELD_NUMBER: _ClassVar[int]
    SOCKET_PATH_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    STATE_DIRECTORY_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    access: Access
    clients: int
    config_path: str
    discovery: str
    discovery_reason: str
    discovery_since_ms: int
    discovery_state: DiscoveryState
    limits: Limits
    mode: str
    pid: int
    socket_activated: bool
    socket_path: str
    started_at_ms: int
    state_directory: str
    uid: int
    version: str
    def __init__(self, version: _Optional[str] = ..., started_at_ms: _Optional[int] = ..., socket_path: _Optional[str] = ..., discovery: _Optional[str] = ..., clients: _Optional[int] = ..., mode: _Optional[str] = ..., socket_activated: bool = ..., config_path: _Optional[str] = ..., state_directory: _Optional[str] = ..., access: _Optional[_Union[Access, str]] = ..., limits: _Optional[_Union[Limits, _Mapping]] = ..., pid: _Optional[int] = ..., uid: _Optional[int] = ..., discovery_state: _Optional[_Union[DiscoveryState, str]] = ..., discovery_since_ms: _Optional[int] = ..., discovery_reason: _Optional[str] = ...) -> None: ...

class Device(_message.Message):
    __slots__ = ["authentication", "build", "busy", "capabilities", "cast_state", "friendly_name", "group_members", "host", "id", "is_group", "link_error", "link_state", "manufacturer", "model", "next_retry_at_ms", "port", "receiver", "reconnect_attempts", "source", "status_text", "tv_input", "tv_power"]
    AUTHENTICATION_FIELD_NUMBER: _ClassVar[int]
    BUILD_FIELD_NUMBER: _ClassVar[int]
    BUSY_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    CAST_STATE_FIELD_NUMBER: _ClassVar[int]
    FRIENDLY_NAME_FIELD_NUMBER: _ClassVar[int]
    GROUP_MEMBERS_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    IS_GROUP_FIELD_NUMBER: _ClassVar[int]
    LINK_ERROR_FIELD_NUMBER: _ClassVar[int]
    LINK_STATE_FIELD_NUMBER: _ClassVar[int]
    MANUFACTURER_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    NEXT_RETRY_AT_MS_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    RECEIVER_FIELD_NUMBER: _ClassVar[int]
    RECONNECT_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    STATUS_TEXT_FIELD_NUMBER: _ClassVar[int]
    TV_INPUT_FIELD_NUMBER: _ClassVar[int]
    TV_POWER_FIELD_NUMBER: _ClassVar[int]
    authentication: DeviceAuthentication
    build: str
    busy: bool
    capabilities: int
    cast_state: CastState
    friendly_name: str
    group_members: _containers.RepeatedCompositeFieldContainer[GroupMember]
    host: str
    id: str
    is_group: bool
    link_error: str
    link_state: LinkState
    manufacturer: str
    model: str
    next_retry_at_ms: int
    port: int
    receiver: ReceiverStatus
    reconnect_attempts: int
    source: DeviceSource
    status_text: str
    tv_input: TvInput
    tv_power: TvPower
    def __init__(self, id: _Optional[str] = ..., friendly_name: _Optional[str] = ..., model: _Optional[str] = ..., host: _Optional[str] = ..., port: _Optional[int] = ..., capabilities: _Optional[int] = ..., status_text: _Optional[str] = ..., busy: bool = ..., is_group: bool = ..., source: _Optional[_Union[DeviceSource, str]] = ..., link_state: _Optional[_Union[LinkState, str]] = ..., link_error: _Optional[str] = ..., receiver: _Optional[_Union[ReceiverStatus, _Mapping]] = ..., group_members: _Optional[_Iterable[_Union[GroupMember, _Mapping]]] = ..., authentication: _Optional[_Union[DeviceAuthentication, _Mapping]] = ..., next_retry_at_ms: _Optional[int] = ..., reconnect_attempts: _Optional[int] = ..., tv_power: _Optional[_Union[TvPower, str]] = ..., tv_input: _Optional[_Union[TvInput, str]] = ..., manufacturer: _Optional[str] = ..., build: _Optional[str] = ..., cast_state: _Optional[_Union[CastState, str]] = ...) -> None: ...

class DeviceAuthentication(_message.Message):
    __slots__ = ["checked_at_ms", "detail", "device_certificate", "key_fingerprint", "pinned_key", "root", "sha1", "state"]
    CHECKED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    DEVICE_CERTIFICATE_FIELD_NUMBER: _ClassVar[int]
    KEY_FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    PINNED_KEY_FIELD_NUMBER: _ClassVar[int]
    ROOT_FIELD_NUMBER: _ClassVar[int]
    SHA1_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    checked_at_ms: int
    detail: str
    device_certificate: str
    key_fingerprint: str
    pinned_key: str
    root: str
    sha1: bool
    state: AuthState
    def __init__(self, state: _Optional[_Union[AuthState, str]] = ..., detail: _Optional[str] = ..., sha1: bool = ..., device_certificate: _Optional[str] = ..., root: _Optional[str] = ..., checked_at_ms: _Optional[int] = ..., key_fingerprint: _Optional[str] = ..., pinned_key: _Optional[str] = ...) -> None: ...

class EditTracksRequest(_message.Message):
    __slots__ = ["active_tracks", "device", "text_track_style"]
    ACTIVE_TRACKS_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    TEXT_TRACK_STYLE_FIELD_NUMBER: _ClassVar[int]
    active_tracks: ActiveTracks
    device: str
    text_track_style: TextTrackStyle
    def __init__(self, device: _Optional[str] = ..., active_tracks: _Optional[_Union[ActiveTracks, _Mapping]] = ..., text_track_style: _Optional[_Union[TextTrackStyle, _Mapping]] = ...) -> None: ...

class EndSessionRequest(_message.Message):
    __slots__ = ["device", "stop_app"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    STOP_APP_FIELD_NUMBER: _ClassVar[int]
    device: str
    stop_app: bool
    def __init__(self, device: _Optional[str] = ..., stop_app: bool = ...) -> None: ...

class EndSessionResponse(_message.Message):
    __slots__ = ["session"]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ["cast_state", "device_added", "device_removed", "device_updated", "lagged", "media", "queue", "sequence", "session", "snapshot", "time_ms", "transferred"]
    CAST_STATE_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ADDED_FIELD_NUMBER: _ClassVar[int]
    DEVICE_REMOVED_FIELD_NUMBER: _ClassVar[int]
    DEVICE_UPDATED_FIELD_NUMBER: _ClassVar[int]
    LAGGED_FIELD_NUMBER: _ClassVar[int]
    MEDIA_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    TIME_MS_FIELD_NUMBER: _ClassVar[int]
    TRANSFERRED_FIELD_NUMBER: _ClassVar[int]
    cast_state: CastStateChange
    device_added: Device
    device_removed: Device
    device_updated: Device
    lagged: Lagged
    media: MediaStatus
    queue: QueueChange
    sequence: int
    session: Session
    snapshot: Snapshot
    time_ms: int
    transferred: SessionTransfer
    def __init__(self, sequence: _Optional[int] = ..., time_ms: _Optional[int] = ..., snapshot: _Optional[_Union[Snapshot, _Mapping]] = ..., device_added: _Optional[_Union[Device, _Mapping]] = ..., device_updated: _Optional[_Union[Device, _Mapping]] = ..., device_removed: _Optional[_Union[Device, _Mapping]] = ..., session: _Optional[_Union[Session, _Mapping]] = ..., media: _Optional[_Union[MediaStatus, _Mapping]] = ..., lagged: _Optional[_Union[Lagged, _Mapping]] = ..., transferred: _Optional[_Union[SessionTransfer, _Mapping]] = ..., cast_state: _Optional[_Union[CastStateChange, _Mapping]] = ..., queue: _Optional[_Union[QueueChange, _Mapping]] = ...) -> None: ...

class ForgetDeviceRequest(_message.Message):
    __slots__ = ["device"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    device: str
    def __init__(self, device: _Optional[str] = ...) -> None: ...

class GetDeviceRequest(_message.Message):
    __slots__ = ["device"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    device: str
    def __init__(self, device: _Optional[str] = ...) -> None: ...

class GetLogFilterRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetQueueRequest(_message.Message):
    __slots__ = ["device"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    device: str
    def __init__(self, device: _Optional[str] = ...) -> None: ...

class GetStatusRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GroupMember(_message.Message):
    __slots__ = ["capabilities", "device_id", "name"]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    capabilities: int
    device_id: str
    name: str
    def __init__(self, device_id: _Optional[str] = ..., name: _Optional[str] = ..., capabilities: _Optional[int] = ...) -> None: ...

class Image(_message.Message):
    __slots__ = ["file", "height", "url", "width"]
    FILE_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    file: str
    height: int
    url: str
    width: int
    def __init__(self, url: _Optional[str] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., file: _Optional[str] = ...) -> None: ...

class Lagged(_message.Message):
    __slots__ = ["dropped"]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    dropped: int
    def __init__(self, dropped: _Optional[int] = ...) -> None: ...

class LaunchOptions(_message.Message):
    __slots__ = ["android_tv", "credentials", "credentials_type", "language"]
    ANDROID_TV_FIELD_NUMBER: _ClassVar[int]
    CREDENTIALS_FIELD_NUMBER: _ClassVar[int]
    CREDENTIALS_TYPE_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    android_tv: bool
    credentials: str
    credentials_type: str
    language: str
    def __init__(self, language: _Optional[str] = ..., android_tv: bool = ..., credentials: _Optional[str] = ..., credentials_type: _Optional[str] = ...) -> None: ...

class Limits(_message.Message):
    __slots__ = ["frame_timeout_ms", "idle_timeout_ms", "max_calls_per_connection", "max_connections_per_uid", "max_frame_bytes", "watcher_queue"]
    FRAME_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    IDLE_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_CALLS_PER_CONNECTION_FIELD_NUMBER: _ClassVar[int]
    MAX_CONNECTIONS_PER_UID_FIELD_NUMBER: _ClassVar[int]
    MAX_FRAME_BYTES_FIELD_NUMBER: _ClassVar[int]
    WATCHER_QUEUE_FIELD_NUMBER: _ClassVar[int]
    frame_timeout_ms: int
    idle_timeout_ms: int
    max_calls_per_connection: int
    max_connections_per_uid: int
    max_frame_bytes: int
    watcher_queue: int
    def __init__(self, max_frame_bytes: _Optional[int] = ..., max_connections_per_uid: _Optional[int] = ..., max_calls_per_connection: _Optional[int] = ..., watcher_queue: _Optional[int] = ..., idle_timeout_ms: _Optional[int] = ..., frame_timeout_ms: _Optional[int] = ...) -> None: ...

class ListDevicesRequest(_message.Message):
    __slots__ = ["all", "app_ids", "capabilities"]
    ALL_FIELD_NUMBER: _ClassVar[int]
    APP_IDS_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    all: bool
    app_ids: _containers.RepeatedScalarFieldContainer[str]
    capabilities: int
    def __init__(self, app_ids: _Optional[_Iterable[str]] = ..., capabilities: _Optional[int] = ..., all: bool = ...) -> None: ...

class ListDevicesResponse(_message.Message):
    __slots__ = ["criterion_app_ids", "devices"]
    CRITERION_APP_IDS_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    criterion_app_ids: _containers.RepeatedScalarFieldContainer[str]
    devices: _containers.RepeatedCompositeFieldContainer[Device]
    def __init__(self, devices: _Optional[_Iterable[_Union[Device, _Mapping]]] = ..., criterion_app_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ListenRequest(_message.Message):
    __slots__ = ["device", "namespace"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    device: str
    namespace: str
    def __init__(self, device: _Optional[str] = ..., namespace: _Optional[str] = ...) -> None: ...

class LiveSeekableRange(_message.Message):
    __slots__ = ["end", "is_live_done", "is_moving_window", "start"]
    END_FIELD_NUMBER: _ClassVar[int]
    IS_LIVE_DONE_FIELD_NUMBER: _ClassVar[int]
    IS_MOVING_WINDOW_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    end: float
    is_live_done: bool
    is_moving_window: bool
    start: float
    def __init__(self, start: _Optional[float] = ..., end: _Optional[float] = ..., is_moving_window: bool = ..., is_live_done: bool = ...) -> None: ...

class LoadRequest(_message.Message):
    __slots__ = ["active_track_ids", "autoplay", "credentials", "credentials_type", "custom_data_json", "device", "media", "playback_rate", "start_time"]
    ACTIVE_TRACK_IDS_FIELD_NUMBER: _ClassVar[int]
    AUTOPLAY_FIELD_NUMBER: _ClassVar[int]
    CREDENTIALS_FIELD_NUMBER: _ClassVar[int]
    CREDENTIALS_TYPE_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    MEDIA_FIELD_NUMBER: _ClassVar[int]
    PLAYBACK_RATE_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    active_track_ids: _containers.RepeatedScalarFieldContainer[int]
    autoplay: bool
    credentials: str
    credentials_type: str
    custom_data_json: str
    device: str
    media: MediaInformation
    playback_rate: float
    start_time: float
    def __init__(self, device: _Optional[str] = ..., media: _Optional[_Union[MediaInformation, _Mapping]] = ..., autoplay: bool = ..., start_time: _Optional[float] = ..., playback_rate: _Optional[float] = ..., active_track_ids: _Optional[_Iterable[int]] = ..., credentials: _Optional[str] = ..., credentials_type: _Optional[str] = ..., custom_data_json: _Optional[str] = ...) -> None: ...

class LogFilter(_message.Message):
    __slots__ = ["known_subsystems", "minimum_level", "subsystems"]
    KNOWN_SUBSYSTEMS_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_LEVEL_FIELD_NUMBER: _ClassVar[int]
    SUBSYSTEMS_FIELD_NUMBER: _ClassVar[int]
    known_subsystems: _containers.RepeatedScalarFieldContainer[str]
    minimum_level: LogLevel
    subsystems: _containers.RepeatedCompositeFieldContainer[SubsystemLevel]
    def __init__(self, minimum_level: _Optional[_Union[LogLevel, str]] = ..., subsystems: _Optional[_Iterable[_Union[SubsystemLevel, _Mapping]]] = ..., known_subsystems: _Optional[_Iterable[str]] = ...) -> None: ...

class LogRecord(_message.Message):
    __slots__ = ["dropped_before", "fields", "level", "message", "sequence", "subsystem", "time_ms"]
    class FieldsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DROPPED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    SUBSYSTEM_FIELD_NUMBER: _ClassVar[int]
    TIME_MS_FIELD_NUMBER: _ClassVar[int]
    dropped_before: int
    fields: _containers.ScalarMap[str, str]
    level: LogLevel
    message: str
    sequence: int
    subsystem: str
    time_ms: int
    def __init__(self, sequence: _Optional[int] = ..., time_ms: _Optional[int] = ..., level: _Optional[_Union[LogLevel, str]] = ..., subsystem: _Optional[str] = ..., message: _Optional[str] = ..., fields: _Optional[_Mapping[str, str]] = ..., dropped_before: _Optional[int] = ...) -> None: ...

class MediaInformation(_message.Message):
    __slots__ = ["break_clips", "breaks", "content_id", "content_type", "content_url", "custom_data_json", "duration", "entity", "extra_json", "file", "metadata", "stream_type", "text_track_style", "tracks"]
    BREAKS_FIELD_NUMBER: _ClassVar[int]
    BREAK_CLIPS_FIELD_NUMBER: _ClassVar[int]
    CONTENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_URL_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    STREAM_TYPE_FIELD_NUMBER: _ClassVar[int]
    TEXT_TRACK_STYLE_FIELD_NUMBER: _ClassVar[int]
    TRACKS_FIELD_NUMBER: _ClassVar[int]
    break_clips: _containers.RepeatedCompositeFieldContainer[AdBreakClip]
    breaks: _containers.RepeatedCompositeFieldContainer[AdBreak]
    content_id: str
    content_type: str
    content_url: str
    custom_data_json: str
    duration: float
    entity: str
    extra_json: str
    file: str
    metadata: MediaMetadata
    stream_type: StreamType
    text_track_style: TextTrackStyle
    tracks: _containers.RepeatedCompositeFieldContainer[MediaTrack]
    def __init__(self, content_id: _Optional[str] = ..., content_url: _Optional[str] = ..., content_type: _Optional[str] = ..., stream_type: _Optional[_Union[StreamType, str]] = ..., duration: _Optional[float] = ..., metadata: _Optional[_Union[MediaMetadata, _Mapping]] = ..., custom_data_json: _Optional[str] = ..., entity: _Optional[str] = ..., tracks: _Optional[_Iterable[_Union[MediaTrack, _Mapping]]] = ..., text_track_style: _Optional[_Union[TextTrackStyle, _Mapping]] = ..., breaks: _Optional[_Iterable[_Union[AdBreak, _Mapping]]] = ..., break_clips: _Optional[_Iterable[_Union[AdBreakClip, _Mapping]]] = ..., extra_json: _Optional[str] = ..., file: _Optional[str] = ...) -> None: ...

class MediaMetadata(_message.Message):
    __slots__ = ["album_artist", "album_name", "artist", "composer", "creation_date_time", "disc_number", "episode", "extra_json", "height", "images", "latitude", "location", "longitude", "metadata_type", "original_air_date", "release_date", "season", "series_title", "studio", "subtitle", "title", "track_number", "width"]
    ALBUM_ARTIST_FIELD_NUMBER: _ClassVar[int]
    ALBUM_NAME_FIELD_NUMBER: _ClassVar[int]
    ARTIST_FIELD_NUMBER: _ClassVar[int]
    COMPOSER_FIELD_NUMBER: _ClassVar[int]
    CREATION_DATE_TIME_FIELD_NUMBER: _ClassVar[int]
    DISC_NUMBER_FIELD_NUMBER: _ClassVar[int]
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    IMAGES_FIELD_NUMBER: _ClassVar[int]
    LATITUDE_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    LONGITUDE_FIELD_NUMBER: _ClassVar[int]
    METADATA_TYPE_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_AIR_DATE_FIELD_NUMBER: _ClassVar[int]
    RELEASE_DATE_FIELD_NUMBER: _ClassVar[int]
    SEASON_FIELD_NUMBER: _ClassVar[int]
    SERIES_TITLE_FIELD_NUMBER: _ClassVar[int]
    STUDIO_FIELD_NUMBER: _ClassVar[int]
    SUBTITLE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    TRACK_NUMBER_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    album_artist: str
    album_name: str
    artist: str
    composer: str
    creation_date_time: str
    disc_number: int
    episode: int
    extra_json: str
    height: int
    images: _containers.RepeatedCompositeFieldContainer[Image]
    latitude: float
    location: str
    longitude: float
    metadata_type: MetadataType
    original_air_date: str
    release_date: str
    season: int
    series_title: str
    studio: str
    subtitle: str
    title: str
    track_number: int
    width: int
    def __init__(self, metadata_type: _Optional[_Union[MetadataType, str]] = ..., title: _Optional[str] = ..., subtitle: _Optional[str] = ..., artist: _Optional[str] = ..., album_name: _Optional[str] = ..., images: _Optional[_Iterable[_Union[Image, _Mapping]]] = ..., album_artist: _Optional[str] = ..., composer: _Optional[str] = ..., track_number: _Optional[int] = ..., disc_number: _Optional[int] = ..., series_title: _Optional[str] = ..., season: _Optional[int] = ..., episode: _Optional[int] = ..., original_air_date: _Optional[str] = ..., studio: _Optional[str] = ..., release_date: _Optional[str] = ..., location: _Optional[str] = ..., latitude: _Optional[float] = ..., longitude: _Optional[float] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., creation_date_time: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class MediaRequest(_message.Message):
    __slots__ = ["device"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    device: str
    def __init__(self, device: _Optional[str] = ...) -> None: ...

class MediaStatus(_message.Message):
    __slots__ = ["active_track_ids", "break_status", "current_item_id", "current_time", "custom_data_json", "device_id", "idle_reason", "items", "live_seekable_range", "loading_item_id", "media", "media_session_id", "playback_rate", "player_state", "preloaded_item_id", "queue_item_ids", "repeat_mode", "supported_commands", "supported_media_commands", "updated_at_ms", "video_info", "volume"]
    ACTIVE_TRACK_IDS_FIELD_NUMBER: _ClassVar[int]
    BREAK_STATUS_FIELD_NUMBER: _ClassVar[int]
    CURRENT_ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    CURRENT_TIME_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
    IDLE_REASON_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    LIVE_SEEKABLE_RANGE_FIELD_NUMBER: _ClassVar[int]
    LOADING_ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    MEDIA_FIELD_NUMBER: _ClassVar[int]
    MEDIA_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYBACK_RATE_FIELD_NUMBER: _ClassVar[int]
    PLAYER_STATE_FIELD_NUMBER: _ClassVar[int]
    PRELOADED_ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    QUEUE_ITEM_IDS_FIELD_NUMBER: _ClassVar[int]
    REPEAT_MODE_FIELD_NUMBER: _ClassVar[int]
    SUPPORTED_COMMANDS_FIELD_NUMBER: _ClassVar[int]
    SUPPORTED_MEDIA_COMMANDS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    VIDEO_INFO_FIELD_NUMBER: _ClassVar[int]
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    active_track_ids: _containers.RepeatedScalarFieldContainer[int]
    break_status: BreakStatus
    current_item_id: int
    current_time: float
    custom_data_json: str
    device_id: str
    idle_reason: str
    items: _containers.RepeatedCompositeFieldContainer[QueueItem]
    live_seekable_range: LiveSeekableRange
    loading_item_id: int
    media: MediaInformation
    media_session_id: int
    playback_rate: float
    player_state: PlayerState
    preloaded_item_id: int
    queue_item_ids: _containers.RepeatedScalarFieldContainer[int]
    repeat_mode: RepeatMode
    supported_commands: _containers.RepeatedScalarFieldContainer[str]
    supported_media_commands: int
    updated_at_ms: int
    video_info: VideoInfo
    volume: Volume
    def __init__(self, device_id: _Optional[str] = ..., media_session_id: _Optional[int] = ..., player_state: _Optional[_Union[PlayerState, str]] = ..., idle_reason: _Optional[str] = ..., current_time: _Optional[float] = ..., playback_rate: _Optional[float] = ..., media: _Optional[_Union[MediaInformation, _Mapping]] = ..., volume: _Optional[_Union[Volume, _Mapping]] = ..., supported_media_commands: _Optional[int] = ..., updated_at_ms: _Optional[int] = ..., supported_commands: _Optional[_Iterable[str]] = ..., active_track_ids: _Optional[_Iterable[int]] = ..., items: _Optional[_Iterable[_Union[QueueItem, _Mapping]]] = ..., current_item_id: _Optional[int] = ..., loading_item_id: _Optional[int] = ..., preloaded_item_id: _Optional[int] = ..., repeat_mode: _Optional[_Union[RepeatMode, str]] = ..., break_status: _Optional[_Union[BreakStatus, _Mapping]] = ..., video_info: _Optional[_Union[VideoInfo, _Mapping]] = ..., live_seekable_range: _Optional[_Union[LiveSeekableRange, _Mapping]] = ..., custom_data_json: _Optional[str] = ..., queue_item_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class MediaTrack(_message.Message):
    __slots__ = ["content_id", "content_type", "custom_data_json", "file", "language", "name", "subtype", "track_id", "type"]
    CONTENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SUBTYPE_FIELD_NUMBER: _ClassVar[int]
    TRACK_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    content_id: str
    content_type: str
    custom_data_json: str
    file: str
    language: str
    name: str
    subtype: TextTrackSubtype
    track_id: int
    type: TrackType
    def __init__(self, track_id: _Optional[int] = ..., type: _Optional[_Union[TrackType, str]] = ..., subtype: _Optional[_Union[TextTrackSubtype, str]] = ..., content_id: _Optional[str] = ..., content_type: _Optional[str] = ..., name: _Optional[str] = ..., language: _Optional[str] = ..., custom_data_json: _Optional[str] = ..., file: _Optional[str] = ...) -> None: ...

class Queue(_message.Message):
    __slots__ = ["complete", "current_item_id", "device_id", "items", "media_session_id"]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    MEDIA_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    complete: bool
    current_item_id: int
    device_id: str
    items: _containers.RepeatedCompositeFieldContainer[QueueItem]
    media_session_id: int
    def __init__(self, device_id: _Optional[str] = ..., media_session_id: _Optional[int] = ..., items: _Optional[_Iterable[_Union[QueueItem, _Mapping]]] = ..., current_item_id: _Optional[int] = ..., complete: bool = ...) -> None: ...

class QueueChange(_message.Message):
    __slots__ = ["device_id", "index", "insert_before", "item_ids", "kind", "media_session_id", "order"]
    DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    INSERT_BEFORE_FIELD_NUMBER: _ClassVar[int]
    ITEM_IDS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MEDIA_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    device_id: str
    index: int
    insert_before: int
    item_ids: _containers.RepeatedScalarFieldContainer[int]
    kind: QueueChangeKind
    media_session_id: int
    order: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, device_id: _Optional[str] = ..., media_session_id: _Optional[int] = ..., kind: _Optional[_Union[QueueChangeKind, str]] = ..., item_ids: _Optional[_Iterable[int]] = ..., insert_before: _Optional[int] = ..., index: _Optional[int] = ..., order: _Optional[_Iterable[int]] = ...) -> None: ...

class QueueInsertRequest(_message.Message):
    __slots__ = ["device", "insert_before_item_id", "items", "play_now"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    INSERT_BEFORE_ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    PLAY_NOW_FIELD_NUMBER: _ClassVar[int]
    device: str
    insert_before_item_id: int
    items: _containers.RepeatedCompositeFieldContainer[QueueItem]
    play_now: bool
    def __init__(self, device: _Optional[str] = ..., items: _Optional[_Iterable[_Union[QueueItem, _Mapping]]] = ..., insert_before_item_id: _Optional[int] = ..., play_now: bool = ...) -> None: ...

class QueueItem(_message.Message):
    __slots__ = ["active_track_ids", "autoplay", "custom_data_json", "item_id", "media", "order_id", "playback_duration", "preload_time", "start_time"]
    ACTIVE_TRACK_IDS_FIELD_NUMBER: _ClassVar[int]
    AUTOPLAY_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    MEDIA_FIELD_NUMBER: _ClassVar[int]
    ORDER_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYBACK_DURATION_FIELD_NUMBER: _ClassVar[int]
    PRELOAD_TIME_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    active_track_ids: _containers.RepeatedScalarFieldContainer[int]
    autoplay: bool
    custom_data_json: str
    item_id: int
    media: MediaInformation
    order_id: int
    playback_duration: float
    preload_time: float
    start_time: float
    def __init__(self, item_id: _Optional[int] = ..., media: _Optional[_Union[MediaInformation, _Mapping]] = ..., autoplay: bool = ..., start_time: _Optional[float] = ..., preload_time: _Optional[float] = ..., active_track_ids: _Optional[_Iterable[int]] = ..., playback_duration: _Optional[float] = ..., custom_data_json: _Optional[str] = ..., order_id: _Optional[int] = ...) -> None: ...

class QueueLoadRequest(_message.Message):
    __slots__ = ["custom_data_json", "device", "items", "repeat_mode", "start_index", "start_time"]
    CUSTOM_DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    REPEAT_MODE_FIELD_NUMBER: _ClassVar[int]
    START_INDEX_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    custom_data_json: str
    device: str
    items: _containers.RepeatedCompositeFieldContainer[QueueItem]
    repeat_mode: RepeatMode
    start_index: int
    start_time: float
    def __init__(self, device: _Optional[str] = ..., items: _Optional[_Iterable[_Union[QueueItem, _Mapping]]] = ..., start_index: _Optional[int] = ..., repeat_mode: _Optional[_Union[RepeatMode, str]] = ..., start_time: _Optional[float] = ..., custom_data_json: _Optional[str] = ...) -> None: ...

class QueueRemoveRequest(_message.Message):
    __slots__ = ["device", "item_ids"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    ITEM_IDS_FIELD_NUMBER: _ClassVar[int]
    device: str
    item_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, device: _Optional[str] = ..., item_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class QueueReorderRequest(_message.Message):
    __slots__ = ["device", "insert_before_item_id", "item_ids"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    INSERT_BEFORE_ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    ITEM_IDS_FIELD_NUMBER: _ClassVar[int]
    device: str
    insert_before_item_id: int
    item_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, device: _Optional[str] = ..., item_ids: _Optional[_Iterable[int]] = ..., insert_before_item_id: _Optional[int] = ...) -> None: ...

class QueueUpdateRequest(_message.Message):
    __slots__ = ["current_item_id", "current_time", "device", "items", "jump", "repeat_mode"]
    CURRENT_ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    CURRENT_TIME_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    JUMP_FIELD_NUMBER: _ClassVar[int]
    REPEAT_MODE_FIELD_NUMBER: _ClassVar[int]
    current_item_id: int
    current_time: float
    device: str
    items: _containers.RepeatedCompositeFieldContainer[QueueItem]
    jump: int
    repeat_mode: RepeatMode
    def __init__(self, device: _Optional[str] = ..., current_item_id: _Optional[int] = ..., jump: _Optional[int] = ..., repeat_mode: _Optional[_Union[RepeatMode, str]] = ..., items: _Optional[_Iterable[_Union[QueueItem, _Mapping]]] = ..., current_time: _Optional[float] = ...) -> None: ...

class ReceiverStatus(_message.Message):
    __slots__ = ["applications", "volume"]
    APPLICATIONS_FIELD_NUMBER: _ClassVar[int]
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    applications: _containers.RepeatedCompositeFieldContainer[Application]
    volume: Volume
    def __init__(self, applications: _Optional[_Iterable[_Union[Application, _Mapping]]] = ..., volume: _Optional[_Union[Volume, _Mapping]] = ...) -> None: ...

class SeekRequest(_message.Message):
    __slots__ = ["device", "position", "relative", "resume_state"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_FIELD_NUMBER: _ClassVar[int]
    RESUME_STATE_FIELD_NUMBER: _ClassVar[int]
    device: str
    position: float
    relative: bool
    resume_state: ResumeState
    def __init__(self, device: _Optional[str] = ..., position: _Optional[float] = ..., relative: bool = ..., resume_state: _Optional[_Union[ResumeState, str]] = ...) -> None: ...

class SendMessageRequest(_message.Message):
    __slots__ = ["device", "json", "namespace", "text"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    device: str
    json: str
    namespace: str
    text: str
    def __init__(self, device: _Optional[str] = ..., namespace: _Optional[str] = ..., text: _Optional[str] = ..., json: _Optional[str] = ...) -> None: ...

class SendMessageResponse(_message.Message):
    __slots__ = ["device_id", "device_name", "display_name", "session_id"]
    DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
    DEVICE_NAME_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    device_id: str
    device_name: str
    display_name: str
    session_id: str
    def __init__(self, device_id: _Optional[str] = ..., session_id: _Optional[str] = ..., device_name: _Optional[str] = ..., display_name: _Optional[str] = ...) -> None: ...

class Session(_message.Message):
    __slots__ = ["app_id", "app_type", "device_id", "device_name", "display_name", "joined", "namespaces", "reason", "session_id", "state", "transferred_from_device_id", "transport_id"]
    APP_ID_FIELD_NUMBER: _ClassVar[int]
    APP_TYPE_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
    DEVICE_NAME_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    JOINED_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TRANSFERRED_FROM_DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
    TRANSPORT_ID_FIELD_NUMBER: _ClassVar[int]
    app_id: str
    app_type: str
    device_id: str
    device_name: str
    display_name: str
    joined: bool
    namespaces: _containers.RepeatedScalarFieldContainer[str]
    reason: str
    session_id: str
    state: SessionState
    transferred_from_device_id: str
    transport_id: str
    def __init__(self, device_id: _Optional[str] = ..., device_name: _Optional[str] = ..., session_id: _Optional[str] = ..., app_id: _Optional[str] = ..., display_name: _Optional[str] = ..., transport_id: _Optional[str] = ..., state: _Optional[_Union[SessionState, str]] = ..., reason: _Optional[str] = ..., joined: bool = ..., namespaces: _Optional[_Iterable[str]] = ..., app_type: _Optional[str] = ..., transferred_from_device_id: _Optional[str] = ...) -> None: ...

class SessionTransfer(_message.Message):
    __slots__ = ["from_device_id", "from_device_name", "session", "to_device_id", "to_device_name"]
    FROM_DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_DEVICE_NAME_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    TO_DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
    TO_DEVICE_NAME_FIELD_NUMBER: _ClassVar[int]
    from_device_id: str
    from_device_name: str
    session: Session
    to_device_id: str
    to_device_name: str
    def __init__(self, from_device_id: _Optional[str] = ..., from_device_name: _Optional[str] = ..., to_device_id: _Optional[str] = ..., to_device_name: _Optional[str] = ..., session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class SetLogFilterRequest(_message.Message):
    __slots__ = ["level", "pattern", "reset"]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    RESET_FIELD_NUMBER: _ClassVar[int]
    level: LogLevel
    pattern: str
    reset: bool
    def __init__(self, level: _Optional[_Union[LogLevel, str]] = ..., pattern: _Optional[str] = ..., reset: bool = ...) -> None: ...

class SetPlaybackRateRequest(_message.Message):
    __slots__ = ["device", "rate"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    RATE_FIELD_NUMBER: _ClassVar[int]
    device: str
    rate: float
    def __init__(self, device: _Optional[str] = ..., rate: _Optional[float] = ...) -> None: ...

class SetVolumeRequest(_message.Message):
    __slots__ = ["device", "level", "muted", "steps"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    MUTED_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    device: str
    level: float
    muted: bool
    steps: int
    def __init__(self, device: _Optional[str] = ..., level: _Optional[float] = ..., muted: bool = ..., steps: _Optional[int] = ...) -> None: ...

class Snapshot(_message.Message):
    __slots__ = ["cast_state", "devices", "media", "sessions"]
    CAST_STATE_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    MEDIA_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    cast_state: CastState
    devices: _containers.RepeatedCompositeFieldContainer[Device]
    media: _containers.RepeatedCompositeFieldContainer[MediaStatus]
    sessions: _containers.RepeatedCompositeFieldContainer[Session]
    def __init__(self, devices: _Optional[_Iterable[_Union[Device, _Mapping]]] = ..., sessions: _Optional[_Iterable[_Union[Session, _Mapping]]] = ..., media: _Optional[_Iterable[_Union[MediaStatus, _Mapping]]] = ..., cast_state: _Optional[_Union[CastState, str]] = ...) -> None: ...

class StartSessionRequest(_message.Message):
    __slots__ = ["app_id", "device", "launch", "mode"]
    APP_ID_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    LAUNCH_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    app_id: str
    device: str
    launch: LaunchOptions
    mode: StartMode
    def __init__(self, device: _Optional[str] = ..., app_id: _Optional[str] = ..., mode: _Optional[_Union[StartMode, str]] = ..., launch: _Optional[_Union[LaunchOptions, _Mapping]] = ...) -> None: ...

class StatusResponse(_message.Message):
    __slots__ = ["cast_state", "daemon", "devices", "media", "sessions"]
    CAST_STATE_FIELD_NUMBER: _ClassVar[int]
    DAEMON_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    MEDIA_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    cast_state: CastState
    daemon: DaemonInfo
    devices: _containers.RepeatedCompositeFieldContainer[Device]
    media: _containers.RepeatedCompositeFieldContainer[MediaStatus]
    sessions: _containers.RepeatedCompositeFieldContainer[Session]
    def __init__(self, daemon: _Optional[_Union[DaemonInfo, _Mapping]] = ..., devices: _Optional[_Iterable[_Union[Device, _Mapping]]] = ..., sessions: _Optional[_Iterable[_Union[Session, _Mapping]]] = ..., media: _Optional[_Iterable[_Union[MediaStatus, _Mapping]]] = ..., cast_state: _Optional[_Union[CastState, str]] = ...) -> None: ...

class StreamLogsRequest(_message.Message):
    __slots__ = ["follow", "recent"]
    FOLLOW_FIELD_NUMBER: _ClassVar[int]
    RECENT_FIELD_NUMBER: _ClassVar[int]
    follow: bool
    recent: int
    def __init__(self, follow: bool = ..., recent: _Optional[int] = ...) -> None: ...

class SubsystemLevel(_message.Message):
    __slots__ = ["level", "pattern"]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    level: LogLevel
    pattern: str
    def __init__(self, pattern: _Optional[str] = ..., level: _Optional[_Union[LogLevel, str]] = ...) -> None: ...

class TextTrackStyle(_message.Message):
    __slots__ = ["background_color", "custom_data_json", "edge_color", "edge_type", "font_family", "font_generic_family", "font_scale", "font_style", "foreground_color", "window_color", "window_rounded_corner_radius", "window_type"]
    BACKGROUND_COLOR_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    EDGE_COLOR_FIELD_NUMBER: _ClassVar[int]
    EDGE_TYPE_FIELD_NUMBER: _ClassVar[int]
    FONT_FAMILY_FIELD_NUMBER: _ClassVar[int]
    FONT_GENERIC_FAMILY_FIELD_NUMBER: _ClassVar[int]
    FONT_SCALE_FIELD_NUMBER: _ClassVar[int]
    FONT_STYLE_FIELD_NUMBER: _ClassVar[int]
    FOREGROUND_COLOR_FIELD_NUMBER: _ClassVar[int]
    WINDOW_COLOR_FIELD_NUMBER: _ClassVar[int]
    WINDOW_ROUNDED_CORNER_RADIUS_FIELD_NUMBER: _ClassVar[int]
    WINDOW_TYPE_FIELD_NUMBER: _ClassVar[int]
    background_color: str
    custom_data_json: str
    edge_color: str
    edge_type: str
    font_family: str
    font_generic_family: str
    font_scale: float
    font_style: str
    foreground_color: str
    window_color: str
    window_rounded_corner_radius: int
    window_type: str
    def __init__(self, foreground_color: _Optional[str] = ..., background_color: _Optional[str] = ..., edge_type: _Optional[str] = ..., edge_color: _Optional[str] = ..., font_scale: _Optional[float] = ..., font_family: _Optional[str] = ..., font_generic_family: _Optional[str] = ..., font_style: _Optional[str] = ..., window_type: _Optional[str] = ..., window_color: _Optional[str] = ..., window_rounded_corner_radius: _Optional[int] = ..., custom_data_json: _Optional[str] = ...) -> None: ...

class VastAdsRequest(_message.Message):
    __slots__ = ["ad_tag_url", "ads_response"]
    ADS_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    AD_TAG_URL_FIELD_NUMBER: _ClassVar[int]
    ad_tag_url: str
    ads_response: str
    def __init__(self, ad_tag_url: _Optional[str] = ..., ads_response: _Optional[str] = ...) -> None: ...

class VideoInfo(_message.Message):
    __slots__ = ["hdr_type", "height", "width"]
    HDR_TYPE_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    hdr_type: str
    height: int
    width: int
    def __init__(self, width: _Optional[int] = ..., height: _Optional[int] = ..., hdr_type: _Optional[str] = ...) -> None: ...

class Volume(_message.Message):
    __slots__ = ["control_type", "fixed", "level", "muted", "step_interval"]
    CONTROL_TYPE_FIELD_NUMBER: _ClassVar[int]
    FIXED_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    MUTED_FIELD_NUMBER: _ClassVar[int]
    STEP_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    control_type: str
    fixed: bool
    level: float
    muted: bool
    step_interval: float
    def __init__(self, level: _Optional[float] = ..., muted: bool = ..., control_type: _Optional[str] = ..., step_interval: _Optional[float] = ..., fixed: bool = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class Access(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class DeviceSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class LinkState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class AuthState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Capability(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class CastState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class TvPower(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class TvInput(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class SessionState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class StartMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class PlayerState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class StreamType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class MetadataType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class TrackType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class TextTrackSubtype(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class RepeatMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ResumeState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class QueueChangeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class DiscoveryState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class LogLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
