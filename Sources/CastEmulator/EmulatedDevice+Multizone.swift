import CastProtocol

/// A multizone group (`urn:x-cast:com.google.cast.multizone` on receiver-0): its members.
extension EmulatedDevice {
    mutating func handleMultizoneRequest(
        _ request: JSONValue, from sender: String, on connection: Int, into outcome: inout DeviceOutcome
    ) {
        let type = CastEnvelope(request).type
        // Like the platform receiver: a request without requestId gets no answer.
        guard let requestID = request["requestId"], !requestID.isNull else {
            outcome.note(.info, "ignored multizone \(type) without requestId")
            return
        }
        func reply(_ payload: JSONValue) {
            send(from: Self.receiverID, to: sender, on: connection, CastNamespace.multizone, payload, &outcome)
        }
        switch type {
        case "GET_STATUS":
            reply(["type": "MULTIZONE_STATUS", "requestId": requestID, "status": multizoneStatus])
        case "GET_CASTING_GROUPS":
            // A group is not itself a member of other groups.
            reply(["type": "CASTING_GROUPS", "requestId": requestID, "status": ["groups": []]])
        default:
            outcome.note(.info, "ignored multizone \(type)")
        }
    }

    var multizoneStatus: JSONValue {
        ["devices": .array(settings.groupMembers.map(\.json)), "isMultichannel": false]
    }
}
