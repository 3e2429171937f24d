// Shorter names for the generated castd.v1 messages, used by the daemon and by clients.
public typealias CastdDevice = Castd_V1_Device
public typealias CastdSession = Castd_V1_Session
public typealias CastdMediaStatus = Castd_V1_MediaStatus
public typealias CastdMediaInformation = Castd_V1_MediaInformation
public typealias CastdVolume = Castd_V1_Volume
public typealias CastdEvent = Castd_V1_Event
public typealias CastdStatusResponse = Castd_V1_StatusResponse
public typealias CastdPlayerState = Castd_V1_PlayerState
public typealias CastdSessionState = Castd_V1_SessionState
public typealias CastdLinkState = Castd_V1_LinkState
