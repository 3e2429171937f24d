import CastSenderLink
import CastProtocol
import CastdAPI
import Foundation

/// Groups: asking who their members are, and applying what the multizone controller reads.
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

    /// A multizone message: the change it makes to the group's entry goes to every watcher.
    func applyMultizone(_ payload: JSONValue, type: String) {
        guard let change = MultizoneController.change(payload, type: type) else { return }
        store.updateKnownDevice(id: id, change)
    }
}
