import CastProtocol
import CastdAPI

/// The multizone namespace of a group: who its members are. MULTIZONE_STATUS lists them;
/// DEVICE_ADDED, DEVICE_UPDATED and DEVICE_REMOVED change one. The group's entry in the state
/// store holds them; this says how each message changes it.
package enum MultizoneController {
    /// How the message of `type` changes the group's entry, or nil when it does not.
    package static func change(_ payload: JSONValue, type: String) -> ((inout CastdDevice) -> Void)? {
        switch type {
        case "MULTIZONE_STATUS":
            let members = (payload["status"]?["devices"]?.arrayValue ?? []).compactMap(groupMember)
            return {
                $0.groupMembers = members
                $0.isGroup = true
            }
        case "DEVICE_ADDED", "DEVICE_UPDATED":
            guard let changed = payload["device"].flatMap(groupMember) else { return nil }
            return { device in
                if let index = device.groupMembers.firstIndex(where: { $0.deviceID == changed.deviceID }) {
                    device.groupMembers[index] = changed
                } else {
                    device.groupMembers.append(changed)
                }
            }
        case "DEVICE_REMOVED":
            guard let removed = payload["deviceId"]?.stringValue else { return nil }
            return { $0.groupMembers.removeAll { $0.deviceID == removed } }
        default:
            return nil
        }
    }

    /// One member of a group, as MULTIZONE_STATUS and DEVICE_ADDED / DEVICE_UPDATED describe it;
    /// nil without a device id.
    package static func groupMember(_ json: JSONValue) -> Castd_V1_GroupMember? {
        guard let id = json["deviceId"]?.stringValue, !id.isEmpty else { return nil }
        var m = Castd_V1_GroupMember()
        m.deviceID = id
        m.name = json["name"]?.stringValue ?? ""
        m.capabilities = json["capabilities"]?.intValue.map { UInt32(clamping: max(0, $0)) } ?? 0
        return m
    }
}
