/// The envelope every JSON payload shares: `type` and `requestId`, both optional in practice.
public struct CastEnvelope: Sendable, Hashable {
    /// `type`, or `responseType` (GET_APP_AVAILABILITY replies), or "" if neither is there.
    public var type: String
    /// 0 when absent: unsolicited. Devices sometimes send it as a string.
    public var requestID: Int64

    public init(_ json: JSONValue) {
        type = json["type"]?.stringValue ?? json["responseType"]?.stringValue ?? ""
        requestID = json["requestId"]?.intValue ?? 0
    }
}

/// Device volume, or a media stream's volume.
public struct CastVolume: Sendable, Hashable {
    public var level: Double?
    public var muted: Bool?
    /// "attenuation", "fixed" or "master" (``CastVolumeControlType``); nil when the device
    /// does not say.
    public var controlType: String?
    public var stepInterval: Double?

    public init(level: Double? = nil, muted: Bool? = nil, controlType: String? = nil, stepInterval: Double? = nil) {
        self.level = level
        self.muted = muted
        self.controlType = controlType
        self.stepInterval = stepInterval
    }

    public init?(json: JSONValue?) {
        guard let json, json.objectValue != nil else { return nil }
        level = json["level"]?.doubleValue
        muted = json["muted"]?.boolValue
        controlType = json["controlType"]?.stringValue
        stepInterval = json["stepInterval"]?.doubleValue
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = [:]
        if let level { o["level"] = .number(level) }
        if let muted { o["muted"] = .bool(muted) }
        if let controlType { o["controlType"] = .string(controlType) }
        if let stepInterval { o["stepInterval"] = .number(stepInterval) }
        return .object(o)
    }
}

/// One running app, from RECEIVER_STATUS `applications[]`.
public struct CastApplication: Sendable, Hashable {
    public var appID: String
    public var displayName: String
    public var sessionID: String
    /// The app's virtual endpoint; absent on some idle apps.
    public var transportID: String?
    public var statusText: String
    public var namespaces: [String]
    public var isIdleScreen: Bool
    /// "WEB", "ANDROID_TV", …; nil when the device does not say.
    public var appType: String?

    public init(
        appID: String, displayName: String, sessionID: String, transportID: String?,
        statusText: String = "", namespaces: [String] = [], isIdleScreen: Bool = false, appType: String? = nil
    ) {
        self.appType = appType
        self.appID = appID
        self.displayName = displayName
        self.sessionID = sessionID
        self.transportID = transportID
        self.statusText = statusText
        self.namespaces = namespaces
        self.isIdleScreen = isIdleScreen
    }

    public init?(json: JSONValue) {
        guard let appID = json["appId"]?.stringValue else { return nil }
        self.appID = appID
        displayName = json["displayName"]?.stringValue ?? ""
        sessionID = json["sessionId"]?.stringValue ?? ""
        transportID = json["transportId"]?.stringValue
        statusText = json["statusText"]?.stringValue ?? ""
        // Namespaces come as [{"name": …}], and occasionally as plain strings.
        namespaces = (json["namespaces"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue ?? $0.stringValue }
        isIdleScreen = json["isIdleScreen"]?.boolValue ?? false
        appType = json["appType"]?.stringValue
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "appId": .string(appID),
            "displayName": .string(displayName),
            "sessionId": .string(sessionID),
            "statusText": .string(statusText),
            "isIdleScreen": .bool(isIdleScreen),
            "namespaces": .array(namespaces.map { ["name": .string($0)] }),
        ]
        if let transportID { o["transportId"] = .string(transportID) }
        if let appType { o["appType"] = .string(appType) }
        return .object(o)
    }

    public func declares(namespace: String) -> Bool { namespaces.contains(namespace) }
}

/// RECEIVER_STATUS's `status`.
public struct CastReceiverStatus: Sendable, Hashable {
    public var applications: [CastApplication]
    public var volume: CastVolume?
    public var isActiveInput: Bool?
    public var isStandBy: Bool?

    public init(applications: [CastApplication] = [], volume: CastVolume? = nil) {
        self.applications = applications
        self.volume = volume
    }

    /// Takes the whole payload (reads its `status`), or the status object itself.
    public init(payload: JSONValue) {
        let status = payload["status"].flatMap { $0.objectValue != nil ? $0 : nil } ?? payload
        applications = (status["applications"]?.arrayValue ?? []).compactMap(CastApplication.init(json:))
        volume = CastVolume(json: status["volume"])
        isActiveInput = status["isActiveInput"]?.boolValue
        isStandBy = status["isStandBy"]?.boolValue
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = ["applications": .array(applications.map(\.json))]
        if let volume { o["volume"] = volume.json }
        if let isActiveInput { o["isActiveInput"] = .bool(isActiveInput) }
        if let isStandBy { o["isStandBy"] = .bool(isStandBy) }
        return .object(o)
    }

    /// Fields of a RECEIVER_STATUS payload that are there but cannot be read (`applications`
    /// that is not an array, a volume level that is not a number): no news about them.
    public static func unreadableFields(in payload: JSONValue) -> [CastStatusField] {
        let status = JSONFields(payload["status"].flatMap { $0.objectValue != nil ? $0 : nil } ?? payload)
        var unreadable: [CastStatusField] = []
        if let applications = status.members["applications"], !applications.isNull, applications.arrayValue == nil {
            unreadable.append(.applications)
        }
        return unreadable + CastStatusField.unreadableVolume(status.members["volume"])
    }

    public func application(id appID: String) -> CastApplication? {
        applications.first { $0.appID == appID }
    }
}

/// Requests on the receiver namespace.
public enum ReceiverRequest {
    public static func getStatus(requestID: Int64) -> JSONValue {
        ["type": "GET_STATUS", "requestId": .number(Double(requestID))]
    }

    /// LAUNCH. `androidTV` lets a Cast Connect app start its Android TV receiver (supported app
    /// types WEB and ANDROID_TV); credentials go in `appParams.launchCheckerParams.credentialsData`,
    /// where Chromium's and the Android sender SDK's LAUNCH put them.
    public static func launch(
        appID: String, requestID: Int64, language: String? = nil, androidTV: Bool = false,
        credentials: String? = nil, credentialsType: String? = nil
    ) -> JSONValue {
        var o: [String: JSONValue] = [
            "type": "LAUNCH", "requestId": .number(Double(requestID)), "appId": .string(appID),
        ]
        if let language { o["language"] = .string(language) }
        if androidTV { o["supportedAppTypes"] = ["WEB", "ANDROID_TV"] }
        if credentials != nil || credentialsType != nil {
            var data: [String: JSONValue] = [:]
            if let credentials { data["credentials"] = .string(credentials) }
            if let credentialsType { data["credentialsType"] = .string(credentialsType) }
            o["appParams"] = ["launchCheckerParams": ["credentialsData": .object(data)]]
        }
        return .object(o)
    }

    public static func stop(sessionID: String, requestID: Int64) -> JSONValue {
        ["type": "STOP", "requestId": .number(Double(requestID)), "sessionId": .string(sessionID)]
    }

    public static func setVolume(level: Double?, muted: Bool?, requestID: Int64) -> JSONValue {
        [
            "type": "SET_VOLUME", "requestId": .number(Double(requestID)),
            "volume": CastVolume(level: level, muted: muted).json,
        ]
    }

    public static func getAppAvailability(appIDs: [String], requestID: Int64) -> JSONValue {
        [
            "type": "GET_APP_AVAILABILITY", "requestId": .number(Double(requestID)),
            "appId": .array(appIDs.map { .string($0) }),
        ]
    }
}

/// A GET_APP_AVAILABILITY reply: for each app asked about, "APP_AVAILABLE" or
/// "APP_UNAVAILABLE".
public struct CastAppAvailability: Sendable, Hashable {
    public var answers: [String: String]

    public init(payload: JSONValue) {
        answers = (payload["availability"]?.objectValue ?? [:]).compactMapValues(\.stringValue)
    }

    /// Whether the device said it has `appID`; false when it did not answer about it.
    public func isAvailable(_ appID: String) -> Bool { answers[appID] == "APP_AVAILABLE" }
}

/// An error reply from a device (LAUNCH_ERROR, LOAD_FAILED, INVALID_REQUEST, …).
public struct CastDeviceError: Error, Sendable, Hashable, CustomStringConvertible {
    public var type: String
    public var reason: String?
    public var detail: String?

    public init(type: String, reason: String? = nil, detail: String? = nil) {
        self.type = type
        self.reason = reason
        self.detail = detail
    }

    /// Reads an error reply; nil if `payload` is not one.
    public init?(payload: JSONValue) {
        let type = CastEnvelope(payload).type
        guard Self.errorTypes.contains(type) else { return nil }
        self.type = type
        // LAUNCH_ERROR may carry extendedError instead of reason.
        reason =
            payload["reason"]?.stringValue ?? payload["extendedError"]?.stringValue
            ?? payload["extendedError"]?["reason"]?.stringValue
        detail = payload["customData"]?.jsonString ?? payload["detailedErrorCode"]?.stringValue
    }

    public static let errorTypes: Set<String> = [
        "LAUNCH_ERROR", "LOAD_FAILED", "LOAD_CANCELLED", "INVALID_PLAYER_STATE", "INVALID_REQUEST",
        "ERROR", "INVALID_MEDIA_SESSION_ID",
    ]

    /// The device refused the request as malformed (INVALID_REQUEST).
    public var isInvalidRequest: Bool { type == "INVALID_REQUEST" }
    /// A newer LOAD replaced the one this answers (LOAD_CANCELLED).
    public var isLoadCancelled: Bool { type == "LOAD_CANCELLED" }
    /// The device does not know the app asked for (LAUNCH_ERROR, NOT_FOUND).
    public var isUnknownApp: Bool { type == "LAUNCH_ERROR" && reason == "NOT_FOUND" }
    /// The request named a media session that is over (INVALID_MEDIA_SESSION_ID).
    public var isStaleMediaSession: Bool { reason == "INVALID_MEDIA_SESSION_ID" }

    public var description: String {
        var s = type
        if let reason { s += " (\(reason))" }
        return s
    }
}
