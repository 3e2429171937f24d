import CastdServer
import CastDevices
import CastdAPI

/// Custom channels: a message to the session's app on a namespace (SendMessage), and what the
/// app sends on one (Listen).
extension CastdService {
    static func registerChannels(_ router: inout CastdRouter) {
        router.unary(CastdMethods.sendMessage) { service, request, _ in
            let text = try request.castText()
            let device = try await service.registry.sessionController(for: request.device)
            let session = try await device.sendMessage(namespace: request.namespace, text: text)
            var response = Castd_V1_SendMessageResponse()
            response.deviceID = session.deviceID
            response.sessionID = session.sessionID
            response.deviceName = session.deviceName
            response.displayName = session.displayName.isEmpty ? session.appID : session.displayName
            return response
        }
        router.serverStreaming(CastdMethods.listen) { service, request, _, stream in
            let device = try await service.registry.controller(for: request.device)
            for await event in device.listen(namespace: request.namespace) {
                try await stream.send(event)
            }
            try Task.checkCancellation()
            throw CastdError(.unavailable, "castd is shutting down")
        }
    }
}
