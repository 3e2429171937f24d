import CastSenderLink
import CastProtocol
import CastdAPI

/// Custom channels: messages to and from the session's app on its own namespaces.
extension DeviceController {
    /// Sends `text` to the session's app on `namespace`, which the app must declare.
    public func sendMessage(namespace: String, text: String) async throws -> CastdSession {
        guard let session = sessions.session else {
            throw CastdError(
                .failedPrecondition,
                "there is no session on \(name) to send to; start the app first (castc launch APP_ID)")
        }
        guard session.namespaces.contains(namespace) else {
            throw CastdError(
                .failedPrecondition,
                "\(session.displayName.isEmpty ? session.appID : session.displayName) on \(name) does not declare \(namespace) (it declares: \(session.namespaces.joined(separator: ", ")))"
            )
        }
        do {
            let link = try await link()
            try await link.send(
                .string(source: link.senderID, destination: session.transportID, namespace: namespace, text: text))
            return session
        } catch {
            throw DeviceFailure.castdError(error, device: name, ask: .message(namespace: namespace))
        }
    }

    /// Registers `namespace`: its messages stream while a session whose app declares it runs.
    public nonisolated func listen(namespace: String) -> AsyncStream<CastdChannelEvent> {
        channels.listen(namespace: namespace)
    }
}
