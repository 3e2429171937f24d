// Everything a CastClient user needs to name: the castd.v1 messages (CastdDevice,
// CastdMediaStatus, …), CastdError and CastdCode, the methods (CastdMethod, and CastdMethods:
// each with its request and response types) and CastdSocketPath.
@_exported import CastdAPI

/// Shorter names for castd.v1 types that the generated aliases do not cover.
public typealias CastdStreamType = Castd_V1_StreamType
public typealias CastdSnapshot = Castd_V1_Snapshot
public typealias CastdDaemonInfo = Castd_V1_DaemonInfo
public typealias CastdApplication = Castd_V1_Application
public typealias CastdGroupMember = Castd_V1_GroupMember
public typealias CastdAppAvailability = Castd_V1_AppAvailabilityResponse
public typealias CastdStartMode = Castd_V1_StartMode
public typealias CastdLoadRequest = Castd_V1_LoadRequest
public typealias CastdQueueUpdateRequest = Castd_V1_QueueUpdateRequest
public typealias CastdSendMessageResponse = Castd_V1_SendMessageResponse
public typealias CastdMetadataType = Castd_V1_MetadataType
public typealias CastdTrackType = Castd_V1_TrackType
public typealias CastdTextTrackSubtype = Castd_V1_TextTrackSubtype
public typealias CastdAdBreak = Castd_V1_AdBreak
public typealias CastdAdBreakClip = Castd_V1_AdBreakClip
public typealias CastdBreakStatus = Castd_V1_BreakStatus
public typealias CastdVideoInfo = Castd_V1_VideoInfo
public typealias CastdLiveSeekableRange = Castd_V1_LiveSeekableRange
