import CastdServer
import CastDevices
import CastdAPI

/// The media queue: load a list of items, insert, remove, reorder, and update it (jump, next,
/// previous, repeat mode, items' fields).
extension CastdService {
    static func registerQueue(_ router: inout CastdRouter) {
        router.unary(CastdMethods.queueLoad) { service, request, context in
            return try await service.queueLoad(request, peer: context.peer)
        }
        router.unary(CastdMethods.queueInsert) { service, request, context in
            return try await service.queueInsert(request, peer: context.peer)
        }
        router.unary(CastdMethods.queueRemove) { service, request, _ in
            return try await service.queueRemove(request)
        }
        router.unary(CastdMethods.queueReorder) { service, request, _ in
            return try await service.media(.queueReorder(request), on: request.device)
        }
        router.unary(CastdMethods.queueUpdate) { service, request, _ in
            return try await service.media(.queueUpdate(request), on: request.device)
        }
    }
}
