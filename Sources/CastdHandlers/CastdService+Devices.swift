import CastdServer
import CastDevices
import CastdAPI
import Foundation

/// The devices: which there are (ListDevices, GetDevice), what they can run
/// (GetAppAvailability), their volume (SetVolume), and the keys castd pinned for them
/// (ForgetDevice).
extension CastdService {
    static func registerDevices(_ router: inout CastdRouter) {
        router.unary(
            CastdMethods.listDevices,
            // Without criteria, and castd has none of its own: every device, as castd knows it.
            inlineWhen: { service, request in request.isEmpty && service.registry.launchDefaults.deviceCriterion == nil
            },
            inline: { service, _, _ in
                var response = Castd_V1_ListDevicesResponse()
                response.devices = service.store.devices()
                return response
            }
        ) { service, request, _ in
            var request = request
            var response = Castd_V1_ListDevicesResponse()
            // castd's own criterion (castd.toml's launch.filter_devices), unless the client gives
            // its own or asks for every device.
            if request.appIds.isEmpty, !request.all, let app = service.registry.launchDefaults.deviceCriterion {
                request.appIds = [app]
                response.criterionAppIds = [app]
            }
            response.devices = await service.devices(matching: request)
            return response
        }
        router.unary(CastdMethods.getDevice) { service, request, _ in
            let controller = try await service.registry.controller(for: request.device)
            guard let device = service.store.device(id: controller.id) else {
                throw CastdError(.notFound, "'\(request.device)' is no longer known")
            }
            return device
        }
        router.unary(CastdMethods.getAppAvailability) { service, request, _ in
            let device = try await service.registry.controller(for: request.device)
            var response = Castd_V1_AppAvailabilityResponse()
            response.deviceID = device.id
            response.available = try await device.appAvailability(
                request.appIds, openingWithin: service.registry.readCallLinks)
            return response
        }
        router.unary(CastdMethods.setVolume) { service, request, _ in
            let device = try await service.registry.controller(for: request.device)
            return try await device.setVolume(
                level: request.hasLevel ? request.level : nil, muted: request.hasMuted ? request.muted : nil,
                steps: request.steps)
        }
        router.unary(CastdMethods.forgetDevice) { service, request, _ in
            try await service.registry.forgetPinnedKey(of: request.device)
        }
    }

    /// Devices that meet the request's criteria: capability bits from discovery, and apps the
    /// device says it can run (asked of every candidate at once, but links are opened for it only
    /// a few at a time, `DeviceRegistry.readCallLinks`; a device that cannot answer within
    /// `appAnswerDeadline`, its wait for a place included, is left out).
    func devices(matching request: Castd_V1_ListDevicesRequest) async -> [CastdDevice] {
        let candidates = store.devices().filter { $0.capabilities & request.capabilities == request.capabilities }
        guard !request.appIds.isEmpty else { return candidates }
        let registry = self.registry
        let deadline = appAnswerDeadline
        let able = await withTaskGroup(of: String?.self) { group in
            for device in candidates {
                group.addTask {
                    guard let controller = await registry.controller(id: device.id) else { return nil }
                    let answer = try? await withDeadline(deadline) {
                        try await controller.appAvailability(request.appIds, openingWithin: registry.readCallLinks)
                    }
                    return answer?.values.allSatisfy { $0 } == true ? device.id : nil
                }
            }
            var ids: Set<String> = []
            for await id in group { if let id { ids.insert(id) } }
            return ids
        }
        return candidates.filter { able.contains($0.id) }
    }
}
