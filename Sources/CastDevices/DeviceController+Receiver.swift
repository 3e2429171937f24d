import CastSenderLink
import CastProtocol
import CastdAPI
import Foundation

/// What the device says: its messages, read and applied in the link's order; RECEIVER_STATUS and
/// the session it implies.
extension DeviceController {
    // MARK: what the device says

    func handle(_ received: LinkMessage, on link: CastLink) {
        let message = received.message
        guard message.payloadType == .string else { return }
        if !message.namespace.hasPrefix("urn:x-cast:com.google.cast.") {
            deliverAppMessage(message)
            return
        }
        let payload: JSONValue
        do {
            payload = try message.jsonPayload()
        } catch {
            if let metadata = badMessageLog.metadata(["cast.namespace": "\(message.namespace)", "error": "\(error)"]) {
                logger.warning("skipped a message the device sent", metadata: metadata)
            }
            return
        }
        let type = CastEnvelope(payload).type
        switch (message.namespace, type) {
        case (CastNamespace.receiver, "RECEIVER_STATUS"):
            applyReceiver(readReceiverStatus(payload), arrival: received.arrival)
        case (CastNamespace.media, "MEDIA_STATUS"):
            guard let session,
                message.sourceID == session.transportID || message.sourceID == CastWire.platformReceiverID
            else { return }
            applyMedia(payload, arrival: received.arrival)
        case (CastNamespace.multizone, _):
            applyMultizone(payload, type: type)
        case (CastNamespace.connection, "CLOSE"):
            logger.debug("device closed a virtual connection", metadata: ["cast.source": "\(message.sourceID)"])
        default:
            logger.trace("message", metadata: ["cast.namespace": "\(message.namespace)", "cast.type": "\(type)"])
        }
    }

    /// A custom namespace's message from the session's app goes to its listeners; its payload
    /// need not be JSON.
    func deliverAppMessage(_ message: CastMessage) {
        guard let session, message.sourceID == session.transportID else { return }
        var appMessage = CastdAppMessage()
        appMessage.deviceID = id
        appMessage.namespace = message.namespace
        appMessage.sourceID = message.sourceID
        appMessage.destinationID = message.destinationID
        appMessage.payload = message.payloadUtf8
        appMessage.isJson = (try? JSONValue.parse(message.payloadUtf8)) != nil
        channels.deliver(appMessage)
    }

    /// A RECEIVER_STATUS payload as castd applies it. A field the device sent but that cannot be
    /// read (`applications` that is not an array, a volume level that is not a number) is no
    /// news: it keeps what castd knew, rather than ending the session or showing a volume of 0.
    func readReceiverStatus(_ payload: JSONValue) -> CastReceiverStatus {
        var status = CastReceiverStatus(payload: payload)
        let object = payload["status"].flatMap { $0.objectValue != nil ? $0 : nil } ?? payload
        var unreadable: [String] = []
        if let applications = object["applications"], !applications.isNull, applications.arrayValue == nil {
            unreadable.append("applications")
            status.applications = receiver?.applications ?? []
        }
        if let volume = object["volume"], !volume.isNull {
            if volume.objectValue == nil {
                unreadable.append("volume")
                status.volume = receiver?.volume
            } else if status.volume != nil {
                if let level = volume["level"], !level.isNull, level.doubleValue == nil {
                    unreadable.append("volume.level")
                    status.volume?.level = receiver?.volume?.level
                }
                if let muted = volume["muted"], !muted.isNull, muted.boolValue == nil {
                    unreadable.append("volume.muted")
                    status.volume?.muted = receiver?.volume?.muted
                }
            }
        }
        if !unreadable.isEmpty, badMessageLog.admit() != nil {
            logger.warning(
                "the device's RECEIVER_STATUS has fields that cannot be read; kept what castd knew of them",
                metadata: ["fields": "\(unreadable.joined(separator: ", "))"])
        }
        return status
    }

    /// Applies the RECEIVER_STATUS a reply carries, in its place in the link's order; returns
    /// what the reply says.
    @discardableResult
    func applyReceiver(_ reply: CastReply) -> CastReceiverStatus {
        let status = readReceiverStatus(reply.payload)
        applyReceiver(status, arrival: reply.arrival)
        return status
    }

    /// Applies the MEDIA_STATUS a reply carries, in its place in the link's order.
    func applyMedia(_ reply: CastReply) {
        applyMedia(reply.payload, arrival: reply.arrival)
    }

    /// Applies a RECEIVER_STATUS. With `arrival` (its place in the link's order), one older than
    /// a status already applied is skipped: a reply reaches both its request and the link's
    /// message loop, in either order, and the copy handled late must not undo what came after
    /// it (a reply from before a LAUNCH, applied after it, would end the session it started).
    func applyReceiver(_ status: CastReceiverStatus, arrival: UInt64? = nil) {
        if let arrival {
            guard arrival > appliedReceiverArrival else { return }
            appliedReceiverArrival = arrival
        }
        let changed = status != receiver
        receiver = status
        if changed {
            hub.updateKnownDevice(id: id) {
                $0.receiver = Castd_V1_ReceiverStatus(status)
                let running = status.applications.first(where: { !$0.isIdleScreen })
                $0.statusText = running.map { $0.statusText.isEmpty ? $0.displayName : $0.statusText } ?? ""
                $0.busy = running != nil
            }
        }
        // Did our session's app go away?
        if var session, !status.applications.contains(where: { $0.sessionID == session.sessionID }) {
            session.state = .ended
            if let endingReason {
                session.reason = endingReason
            } else if let other = status.applications.first(where: { !$0.isIdleScreen }) {
                session.reason = "replaced on the device by \(other.displayName)"
            } else {
                session.reason = "the app was stopped on the device"
            }
            let followable = endingReason == nil ? mediaState.takeActiveMedia() : nil
            self.session = nil
            self.endingReason = nil
            publish(session)
            clearMedia()
            if let followable { sessionVanished(self, session, followable) }
        }
    }

    /// Publishes a session change to watchers and to custom-channel listeners.
    func publish(_ session: CastdSession) {
        hub.updateSession(session)
        channels.sessionChanged(self.session)
        saveSession()
    }

    /// Keeps the state file in step: the session castd holds here, or the one it waits to rejoin.
    func saveSession() {
        guard let sessionStore else { return }
        let held = (self.session ?? suspended).flatMap { $0.sessionID.isEmpty ? nil : $0 }
        sessionStore.record(deviceID: id, held.map { SavedSession($0, endpoint: endpoint) })
    }
}
