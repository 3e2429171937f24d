import CastProtocol
import CastSenderLink
import CastdAPI
import Logging

/// The multizone namespace of a group: who its members are. It asks (GET_STATUS, when a group's
/// link comes up) and reads what the group says: MULTIZONE_STATUS lists the members;
/// DEVICE_ADDED, DEVICE_UPDATED and DEVICE_REMOVED change one. The group's entry in the state
/// store holds them. The device's controller owns it.
struct MultizoneController {
    let deviceID: String
    let store: CastdStateStore
    let logger: Logger

    /// Asks the group who its members are, and applies the answer.
    nonisolated(nonsending) func askMembers(on link: CastLink) async {
        do {
            let reply = try await link.request(
                namespace: CastNamespace.multizone, destination: CastWire.platformReceiverID
            ) {
                MultizoneRequest.getStatus(requestID: $0)
            }
            receive(reply, type: CastEnvelope(reply).type)
        } catch {
            logger.info(
                "group did not say who its members are", metadata: ["error": "\(DeviceFailure.describe(error))"])
        }
    }

    /// A multizone message: the change it makes to the group's entry goes to every watcher.
    func receive(_ payload: JSONValue, type: String) {
        guard let change = Self.change(payload, type: type) else { return }
        store.updateKnownDevice(id: deviceID, change)
    }

    /// How the message of `type` changes the group's entry, or nil when it does not.
    static func change(_ payload: JSONValue, type: String) -> ((inout CastdDevice) -> Void)? {
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
