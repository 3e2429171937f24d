import CastSenderLink
import CastProtocol
import CastdAPI
import Foundation

/// Groups: who their members are (the multizone namespace).
extension DeviceController {
    // MARK: groups

    func requestGroupMembers(_ link: CastLink) async {
        do {
            let reply = try await link.request(
                namespace: CastNamespace.multizone, destination: CastWire.platformReceiverID
            ) {
                MultizoneRequest.getStatus(requestID: $0)
            }
            applyMultizone(reply, type: CastEnvelope(reply).type)
        } catch {
            logger.info("group did not say who its members are", metadata: ["error": "\(Self.describe(error))"])
        }
    }

    /// MULTIZONE_STATUS lists a group's members; DEVICE_ADDED / DEVICE_UPDATED / DEVICE_REMOVED
    /// change one.
    func applyMultizone(_ payload: JSONValue, type: String) {
        let member = Self.groupMember
        switch type {
        case "MULTIZONE_STATUS":
            let members = (payload["status"]?["devices"]?.arrayValue ?? []).compactMap(member)
            hub.updateKnownDevice(id: id) {
                $0.groupMembers = members
                $0.isGroup = true
            }
        case "DEVICE_ADDED", "DEVICE_UPDATED":
            guard let changed = payload["device"].flatMap(member) else { return }
            hub.updateKnownDevice(id: id) { device in
                if let index = device.groupMembers.firstIndex(where: { $0.deviceID == changed.deviceID }) {
                    device.groupMembers[index] = changed
                } else {
                    device.groupMembers.append(changed)
                }
            }
        case "DEVICE_REMOVED":
            guard let removed = payload["deviceId"]?.stringValue else { return }
            hub.updateKnownDevice(id: id) { $0.groupMembers.removeAll { $0.deviceID == removed } }
        default:
            break
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
