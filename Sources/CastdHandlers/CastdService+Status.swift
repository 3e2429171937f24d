import CastdServer
import CastdAPI

/// castd's state as one snapshot (GetStatus) and as a stream of changes (Watch).
extension CastdService {
    static func registerStatus(_ router: inout CastdRouter) {
        router.inlineEncoded(CastdMethods.getStatus) { service, _, context in
            try service.statusResponse(context)
        }
        router.serverStreaming(CastdMethods.watch) { service, _, _, stream in
            let subscription = service.store.watch()
            defer { subscription.cancel() }
            for await event in subscription {
                try await stream.send(encoded: service.encodings.event(event))
            }
            try Task.checkCancellation()
            throw CastdError(.unavailable, "castd is shutting down")
        }
    }
}
