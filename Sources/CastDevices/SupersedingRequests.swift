import CastProtocol
import CastSenderLink
import CastdAPI

/// Requests of a kind where a newer one supersedes an older one still waiting for its answer
/// (seek, rate, volume, a queue jump): the older one's caller gets ABORTED (REPLACED), while the
/// device's answer to it, like every status, still reaches every watcher. One table a device,
/// shared by its namespace controllers; owned by the device's controller, whose isolation
/// guards it (its method runs on the caller's executor).
final class SupersedingRequests {
    private var inflight: [String: (token: UInt64, task: Task<CastReply, any Error>)] = [:]
    private var replacedTokens: Set<UInt64> = []
    private var nextToken: UInt64 = 1

    /// Sends a request of `kind` to `destination` on `namespace`, superseding any request of the
    /// same kind still waiting; `device` names the device in the error a superseded caller gets.
    nonisolated(nonsending) func send(
        _ kind: String, device: String, on link: CastLink, namespace: String, destination: String,
        _ make: @escaping @Sendable (Int64) -> JSONValue
    ) async throws -> CastReply {
        let token = nextToken
        nextToken += 1
        if let previous = inflight[kind] {
            replacedTokens.insert(previous.token)
            previous.task.cancel()
        }
        let task = Task { try await link.requestReply(namespace: namespace, destination: destination, make) }
        inflight[kind] = (token, task)
        defer {
            if inflight[kind]?.token == token { inflight[kind] = nil }
            // A request superseded after its answer had come in (the cancel too late) returns
            // that answer, not ABORTED: its token must not stay behind for castd's life.
            replacedTokens.remove(token)
        }
        do {
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        } catch {
            if replacedTokens.remove(token) != nil {
                throw CastdError.replaced("superseded by a newer \(kind) request before \(device) answered")
            }
            throw error
        }
    }
}
