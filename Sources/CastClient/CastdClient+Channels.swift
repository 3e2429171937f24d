import CastdAPI
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Custom channels: messages to and from the receiver app of a device's session, on a namespace
/// the app declares (`urn:x-cast:com.example.game`, …; a session lists them in `namespaces`).
extension CastdClient {
    /// Sends a string message to the session's app on `namespace`, as it is.
    ///
    /// - Returns: The device and the session the message went to.
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if `namespace` is
    ///   not a `urn:x-cast:` namespace; the daemon's FAILED_PRECONDITION if there is no session or
    ///   its app does not declare the namespace.
    public func sendMessage(namespace: String, text: String, device: String = "") async throws
        -> CastdSendMessageResponse
    {
        var request = Castd_V1_SendMessageRequest()
        request.device = device
        request.namespace = namespace
        request.text = text
        return try await unary(CastdMethods.sendMessage, request)
    }

    /// Sends a JSON message to the session's app on `namespace` (most Cast apps speak JSON).
    ///
    /// ```swift
    /// try await client.sendMessage(namespace: "urn:x-cast:com.example.game", json: #"{"type":"MOVE","x":3}"#)
    /// ```
    ///
    /// - Throws: ``CastdError`` INVALID_ARGUMENT, without calling the daemon, if `namespace` is
    ///   not a `urn:x-cast:` namespace or `json` does not parse as JSON.
    public func sendMessage(namespace: String, json: String, device: String = "") async throws
        -> CastdSendMessageResponse
    {
        try CastdValidation.namespace(namespace)
        if let problem = CastdJSON.problem(json) {
            throw CastdError(.invalidArgument, "the message is not JSON: \(problem)")
        }
        var request = Castd_V1_SendMessageRequest()
        request.device = device
        request.namespace = namespace
        request.json = json
        return try await unary(CastdMethods.sendMessage, request)
    }

    /// Listens on a custom namespace of a device: castd registers the namespace there and
    /// streams what the app sends on it.
    ///
    /// The sequence yields `attached` whenever a session whose app declares the namespace is
    /// connected, `message` for each message the app sends (to castd or broadcast), `detached`
    /// when that session ends or is suspended, and `lagged` if this listener fell behind and
    /// messages were dropped. It runs until the iteration ends (which cancels the call on the
    /// daemon), the daemon ends it, or the connection is lost (then it throws ``CastdError``).
    ///
    /// ```swift
    /// for try await event in client.listen(device: "Living Room TV", namespace: "urn:x-cast:com.example.game") {
    ///     if case .message(let message) = event.kind { print(message.payload) }
    /// }
    /// ```
    ///
    /// A namespace that is not a `urn:x-cast:` namespace fails the first `next()` with
    /// INVALID_ARGUMENT, without calling the daemon.
    public func listen(device: String = "", namespace: String) -> CastdChannelEventStream {
        var request = Castd_V1_ListenRequest()
        request.device = device
        request.namespace = namespace
        return serverStream(CastdMethods.listen, request)
    }
}

/// Custom channel namespaces.
public enum CastdNamespace {
    /// Every custom namespace starts with this.
    public static let prefix = CastdValidation.namespacePrefix

    /// Why `namespace` cannot be a custom channel's namespace, or nil if it can: castd's rule
    /// (``CastdValidation/namespace(_:)``).
    public static func problem(_ namespace: String) -> String? {
        do {
            try CastdValidation.namespace(namespace)
            return nil
        } catch {
            return error.message
        }
    }
}

/// JSON text as castd takes it in messages and custom data.
public enum CastdJSON {
    /// Why `text` is not JSON (any JSON value), or nil if it is.
    public static func problem(_ text: String) -> String? {
        do {
            _ = try JSONDecoder().decode(TopLevel.self, from: Data(text.utf8))
            return nil
        } catch DecodingError.dataCorrupted(let context) {
            return context.underlyingError.map { "\($0)" } ?? context.debugDescription
        } catch {
            return "it does not parse"
        }
    }

    /// Whether `text` is a JSON object (`{…}`), as custom data must be.
    public static func isObject(_ text: String) -> Bool {
        (try? JSONDecoder().decode(TopLevel.self, from: Data(text.utf8)))?.isObject == true
    }

    /// Any JSON value: the decoder checks the whole text before it gets here; this only asks
    /// whether the value is an object. (JSONDecoder rather than JSONSerialization, which only
    /// Foundation has: castc links FoundationEssentials alone, for start-up speed.)
    private struct TopLevel: Decodable {
        var isObject: Bool

        init(from decoder: any Decoder) throws {
            isObject = (try? decoder.container(keyedBy: AnyKey.self)) != nil
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
