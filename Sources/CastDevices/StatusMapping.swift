import CastProtocol
import CastdAPI
import Foundation

// What devices say (CastProtocol: volume, applications, sessions, receiver and player states) as
// castd publishes it (castd.v1), and castd.v1's enums as the device's strings.

extension CastdVolume {
    init(_ volume: CastVolume) {
        self.init()
        level = volume.level ?? 0
        muted = volume.muted ?? false
        controlType = volume.controlType ?? ""
        stepInterval = volume.stepInterval ?? 0
        fixed = volume.control == .fixed
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
        appType = app.appType ?? ""
    }
}

extension CastdSession {
    /// A session on `app`, running on the device `deviceID` / `deviceName`.
    init(deviceID: String, deviceName: String, app: CastApplication, state: Castd_V1_SessionState) {
        self.init()
        self.deviceID = deviceID
        self.deviceName = deviceName
        sessionID = app.sessionID
        appID = app.appID
        displayName = app.displayName
        transportID = app.transportID ?? ""
        self.state = state
        namespaces = app.namespaces
        appType = app.appType ?? ""
    }
}

extension Castd_V1_ReceiverStatus {
    package init(_ status: CastReceiverStatus) {
        self.init()
        applications = status.applications.map(Castd_V1_Application.init)
        if let volume = status.volume { self.volume = CastdVolume(volume) }
    }
}

extension CastdTvPower {
    /// RECEIVER_STATUS's `isStandBy`; absent, the device does not say.
    init(standBy: Bool?) {
        switch standBy {
        case nil: self = .unknown
        case true?: self = .standby
        case false?: self = .on
        }
    }
}

extension CastdTvInput {
    /// RECEIVER_STATUS's `isActiveInput`; absent, the device does not say.
    init(activeInput: Bool?) {
        switch activeInput {
        case nil: self = .unknown
        case true?: self = .this
        case false?: self = .other
        }
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
