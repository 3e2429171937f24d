/// One member of a group, as MULTIZONE_STATUS and DEVICE_ADDED / DEVICE_UPDATED describe it.
public struct CastGroupMember: Sendable, Hashable {
    public var deviceID: String
    public var name: String?
    /// The member's device capabilities (the bits of its TXT record's `ca`).
    public var capabilities: Int64?

    public init(deviceID: String, name: String? = nil, capabilities: Int64? = nil) {
        self.deviceID = deviceID
        self.name = name
        self.capabilities = capabilities
    }

    /// Nil without a device id.
    public init?(json: JSONValue) {
        let f = JSONFields(json)
        guard let id = f.string("deviceId"), !id.isEmpty else { return nil }
        deviceID = id
        name = f.string("name")
        capabilities = f.integer("capabilities")
    }

    public var json: JSONValue {
        var o = JSONMembers(["deviceId": .string(deviceID)])
        o.put("name", name)
        o.put("capabilities", capabilities)
        return o.json
    }
}

/// What a message on the multizone namespace says about a group's members.
public enum MultizoneUpdate: Sendable, Hashable {
    /// MULTIZONE_STATUS: the members, all of them.
    case members([CastGroupMember])
    /// DEVICE_ADDED or DEVICE_UPDATED: one member, new or changed.
    case memberChanged(CastGroupMember)
    /// DEVICE_REMOVED: the id of a member that left.
    case memberRemoved(String)

    /// The update a message of `type` makes, or nil when it makes none (another type, or a
    /// message without what its type needs).
    public init?(type: String, payload: JSONValue) {
        switch type {
        case "MULTIZONE_STATUS":
            let devices = payload["status"]?["devices"]?.arrayValue ?? []
            self = .members(devices.compactMap(CastGroupMember.init(json:)))
        case "DEVICE_ADDED", "DEVICE_UPDATED":
            guard let member = payload["device"].flatMap(CastGroupMember.init(json:)) else { return nil }
            self = .memberChanged(member)
        case "DEVICE_REMOVED":
            guard let removed = payload["deviceId"]?.stringValue else { return nil }
            self = .memberRemoved(removed)
        default:
            return nil
        }
    }
}

/// Requests on the multizone namespace (groups).
public enum MultizoneRequest {
    /// GET_STATUS: the group's members (MULTIZONE_STATUS).
    public static func getStatus(requestID: Int64) -> JSONValue {
        ["type": "GET_STATUS", "requestId": .number(Double(requestID))]
    }
}
