import CastProtocol
import CastdAPI

/// The multizone namespace of a group: who its members are. MULTIZONE_STATUS lists them;
/// DEVICE_ADDED, DEVICE_UPDATED and DEVICE_REMOVED change one. The group's entry in the state
/// store holds them; this says how each message changes it.
package enum MultizoneController {
    /// How the message of `type` changes the group's entry, or nil when it does not.
    package static func change(_ payload: JSONValue, type: String) -> ((inout CastdDevice) -> Void)? {
        switch MultizoneUpdate(type: type, payload: payload) {
        case .members(let members)?:
            let members = members.map(Castd_V1_GroupMember.init)
            return {
                $0.groupMembers = members
                $0.isGroup = true
            }
        case .memberChanged(let member)?:
            let changed = Castd_V1_GroupMember(member)
            return { device in
                if let index = device.groupMembers.firstIndex(where: { $0.deviceID == changed.deviceID }) {
                    device.groupMembers[index] = changed
                } else {
                    device.groupMembers.append(changed)
                }
            }
        case .memberRemoved(let removed)?:
            return { $0.groupMembers.removeAll { $0.deviceID == removed } }
        case nil:
            return nil
        }
    }
}

extension Castd_V1_GroupMember {
    package init(_ member: CastGroupMember) {
        self.init()
        deviceID = member.deviceID
        name = member.name ?? ""
        capabilities = member.capabilities.map { UInt32(clamping: max(0, $0)) } ?? 0
    }
}
