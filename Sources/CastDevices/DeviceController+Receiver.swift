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
        if !CastNamespace.isPlatform(message.namespace) {
            deliverAppMessage(message, isJSON: received.payload != nil)
            return
        }
        let payload: JSONValue
        do {
            // Read once, by the link; read again only to say why a message is not JSON.
            payload = try received.payload ?? message.jsonPayload()
        } catch {
            if let metadata = badMessageLog.metadata(["cast.namespace": "\(message.namespace)", "error": "\(error)"]) {
                logger.warning("skipped a message the device sent", metadata: metadata)
            }
            return
        }
        let type = CastEnvelope(payload).type
        switch (message.namespace, type) {
        case (CastNamespace.receiver, CastMessageType.receiverStatus):
            applyReceiver(receiverState.read(payload), arrival: received.arrival)
        case (CastNamespace.media, CastMessageType.mediaStatus):
            guard let session,
                message.sourceID == session.transportID || message.sourceID == CastWire.platformReceiverID
            else { return }
            applyMedia(payload, arrival: received.arrival)
        case (CastNamespace.media, CastMessageType.queueChange):
            guard let session, message.sourceID == session.transportID else { return }
            applyQueueChange(CastQueueChange(json: payload), arrival: received.arrival)
        case (CastNamespace.multizone, _):
            applyMultizone(payload, type: type)
        case (CastNamespace.connection, CastMessageType.close):
            logger.debug("device closed a virtual connection", metadata: ["cast.source": "\(message.sourceID)"])
        default:
            logger.trace("message", metadata: ["cast.namespace": "\(message.namespace)", "cast.type": "\(type)"])
        }
    }

    /// A custom namespace's message from the session's app goes to its listeners; its payload
    /// need not be JSON (`isJSON`: the link read it as JSON).
    func deliverAppMessage(_ message: CastMessage, isJSON: Bool) {
        guard let session, message.sourceID == session.transportID else { return }
        var appMessage = CastdAppMessage()
        appMessage.deviceID = id
        appMessage.namespace = message.namespace
        appMessage.sourceID = message.sourceID
        appMessage.destinationID = message.destinationID
        appMessage.payload = message.payloadUtf8
        appMessage.isJson = isJSON
        channels.deliver(appMessage)
    }

    /// Applies the RECEIVER_STATUS a reply carries, in its place in the link's order; returns
    /// what the reply says.
    @discardableResult
    func applyReceiver(_ reply: CastReply) -> CastReceiverStatus {
        let status = receiverState.read(reply.payload)
        applyReceiver(status, arrival: reply.arrival)
        return status
    }

    /// Applies a RECEIVER_STATUS, in its place in the link's order when it has one
    /// (``ReceiverController/apply(_:arrival:)``): the device's entry for every watcher, and the
    /// end of castd's session if its app is gone.
    func applyReceiver(_ status: CastReceiverStatus, arrival: UInt64? = nil) {
        guard let changed = receiverState.apply(status, arrival: arrival) else { return }
        if changed {
            store.updateKnownDevice(id: id) {
                $0.receiver = Castd_V1_ReceiverStatus(status)
                $0.tvPower = CastdTvPower(standBy: status.isStandBy)
                $0.tvInput = CastdTvInput(activeInput: status.isActiveInput)
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
            let followable = endingReason == nil ? media.takeActiveMedia() : nil
            self.session = nil
            self.endingReason = nil
            publish(session)
            clearMedia()
            if let followable { sessionVanished(self, session, followable) }
        }
    }

    /// Publishes a session change to watchers and to custom-channel listeners.
    func publish(_ session: CastdSession) {
        store.updateSession(session)
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
