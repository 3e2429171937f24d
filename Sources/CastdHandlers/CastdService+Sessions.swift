import CastdServer
import CastDevices
import CastdAPI

/// Sessions: start, join or relaunch an app's session (StartSession), leave or end it
/// (EndSession).
extension CastdService {
    static func registerSessions(_ router: inout CastdRouter) {
        router.unary(CastdMethods.startSession) { service, request, _ in
            let device = try await service.registry.controller(for: request.device)
            return try await device.startSession(
                SessionRequest(appID: request.appID, mode: request.mode, launch: request.launch))
        }
        router.unary(CastdMethods.endSession) { service, request, _ in
            let device = try await service.registry.sessionController(for: request.device)
            var response = Castd_V1_EndSessionResponse()
            response.session = try await device.endSession(stopApp: request.stopApp)
            return response
        }
    }
}
