// Everything a CastClient user needs to name: the castd.v1 messages (CastdDevice,
// CastdMediaStatus, …), CastdError and CastdCode, CastdMethod and CastdSocketPath.
@_exported import CastdAPI

/// Shorter names for castd.v1 types that the generated aliases do not cover.
public typealias CastdStreamType = Castd_V1_StreamType
public typealias CastdMediaMetadata = Castd_V1_MediaMetadata
public typealias CastdSnapshot = Castd_V1_Snapshot
public typealias CastdDaemonInfo = Castd_V1_DaemonInfo
public typealias CastdApplication = Castd_V1_Application
