import CastSenderLink
import CastProtocol
import CastdAPI

/// What the device says: its messages, read once and handed, in the link's order, to the
/// controller of their namespace; an app's own namespaces to their listeners.
extension DeviceController {
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
        let session = sessions.session
        switch (message.namespace, type) {
        case (CastNamespace.receiver, CastMessageType.receiverStatus):
            receiver.receive(payload, arrival: received.arrival)
        case (CastNamespace.media, CastMessageType.mediaStatus):
            guard let session,
                message.sourceID == session.transportID || message.sourceID == CastWire.platformReceiverID
            else { return }
            media.receive(payload, arrival: received.arrival)
            askQueueOrderIfWanted()
        case (CastNamespace.media, CastMessageType.queueChange):
            guard let session, message.sourceID == session.transportID else { return }
            media.receiveQueueChange(CastQueueChange(json: payload), arrival: received.arrival)
            askQueueOrderIfWanted()
        case (CastNamespace.multizone, _):
            multizone.receive(payload, type: type)
        case (CastNamespace.connection, CastMessageType.close):
            logger.debug("device closed a virtual connection", metadata: ["cast.source": "\(message.sourceID)"])
        default:
            logger.trace("message", metadata: ["cast.namespace": "\(message.namespace)", "cast.type": "\(type)"])
        }
    }

    /// A custom namespace's message from the session's app goes to its listeners; its payload
    /// need not be JSON (`isJSON`: the link read it as JSON).
    func deliverAppMessage(_ message: CastMessage, isJSON: Bool) {
        guard let session = sessions.session, message.sourceID == session.transportID else { return }
        var appMessage = CastdAppMessage()
        appMessage.deviceID = id
        appMessage.namespace = message.namespace
        appMessage.sourceID = message.sourceID
        appMessage.destinationID = message.destinationID
        appMessage.payload = message.payloadUtf8
        appMessage.isJson = isJSON
        channels.deliver(appMessage)
    }
}
