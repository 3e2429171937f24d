import CastdServer
import CastDevices
import CastdAPI

/// The session's media player: load, play, pause, stop, seek, rate, tracks, the stream's volume,
/// ads and its status. Each call, checked by the router (`CastdValidation`), goes to the device's
/// controller as a `MediaCall` (CastDevices maps it to the Cast media namespace); its answer is
/// the media status.
extension CastdService {
    static func registerMedia(_ router: inout CastdRouter) {
        router.unary(CastdMethods.load) { service, request, context in
            return try await service.load(request, peer: context.peer)
        }
        router.unary(CastdMethods.play) { service, request, _ in try await service.media(.play, on: request.device) }
        router.unary(CastdMethods.pause) { service, request, _ in try await service.media(.pause, on: request.device) }
        router.unary(CastdMethods.stop) { service, request, _ in try await service.media(.stop, on: request.device) }
        router.unary(CastdMethods.skipAd) { service, request, _ in
            try await service.media(.skipAd, on: request.device)
        }
        router.unary(CastdMethods.requestMediaStatus) { service, request, _ in
            try await service.media(.getStatus, on: request.device)
        }
        router.unary(CastdMethods.getQueue) { service, request, _ in
            try await service.registry.sessionController(for: request.device).queue()
        }
        router.unary(CastdMethods.seek) { service, request, _ in
            return try await service.media(.seek(request), on: request.device)
        }
        router.unary(CastdMethods.setPlaybackRate) { service, request, _ in
            return try await service.media(.setPlaybackRate(request.rate), on: request.device)
        }
        router.unary(CastdMethods.editTracks) { service, request, _ in
            return try await service.media(.editTracks(request), on: request.device)
        }
        router.unary(CastdMethods.setStreamVolume) { service, request, _ in
            return try await service.media(.setStreamVolume(request), on: request.device)
        }
    }

    /// A media request to the device holding the session `selector` names; its answer is the
    /// media status.
    func media(_ call: MediaCall, on selector: String) async throws -> CastdMediaStatus {
        let device = try await registry.sessionController(for: selector)
        return try await device.media(call)
    }
}
