import CastProtocol

/// Apps that echo (the built-in echo app, `--app` apps): every string message on one of their
/// custom namespaces goes back to its sender, as it came.
extension EmulatedDevice {
    func echo(_ message: CastMessage, from running: RunningApp, on connection: Int, into outcome: inout DeviceOutcome) {
        let text = message.payloadUtf8
        outcome.deliveries.append(
            .init(
                connection: connection,
                message: .string(
                    source: running.transportID, destination: message.sourceID, namespace: message.namespace, text: text
                )
            )
        )
        // `{"broadcast": true, …}` also goes to every sender connected to the app.
        if let payload = try? JSONValue.parse(text), payload["broadcast"]?.boolValue == true {
            broadcast(from: running.transportID, message.namespace, text: text, &outcome)
        }
        outcome.note(.info, "\(running.app.displayName) echoed \(text.utf8.count) bytes on \(message.namespace)")
    }
}
